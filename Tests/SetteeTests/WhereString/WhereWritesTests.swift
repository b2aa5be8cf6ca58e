import Foundation
import Settee
import SetteeCore
import SetteeTestSupport
import Testing

/// Seed 003's writes: insert, insertBatch, update, remove, remove(where:), revisions kept.
@Suite("where strings: writes")
struct WhereWritesTests {
  let users: DocumentCollection

  init() throws { users = try Database(inMemoryWith: .init()).collection("users") }

  @Test func writesNeedNoRevisionsButRecordThem() throws {
    let generated = try users.insert(["name": "ann", "age": 30])
    #expect(!generated.isEmpty)
    #expect(try users.insert(["_id": "bo", "name": "bo", "age": 12]) == "bo")
    expectError(.conflict) { _ = try users.insert(["_id": "bo"]) }
    #expect(
      try users.insertBatch([["_id": "c", "age": 40], ["_id": "d", "age": 50]]) == ["c", "d"])
    // All or none.
    expectError(.conflict) { _ = try users.insertBatch([["_id": "e"], ["_id": "bo"]]) }
    #expect(try users.get("e") == nil)
    // Update replaces by id, without a revision, recording a new one.
    try users.update(["_id": "bo", "name": "bo", "age": 13])
    #expect(try users.get("bo")?["age"] == 13)
    #expect(try users.revisions(of: "bo").count == 2)
    expectError(.notFound) { _ = try users.update(["_id": "nobody", "age": 1]) }
    expectError(.invalidDocument) { _ = try users.update(["age": 1]) }
    // Remove leaves a tombstone.
    try users.remove("c")
    #expect(try users.get("c") == nil && (try users.getRevision("c"))?.isDeleted == true)
    expectError(.notFound) { _ = try users.remove("c") }
    #expect(try users.remove(where: "[age] >= ?", args: [30]) == 2)
    #expect(try users.find(where: "").map(\.id) == ["bo"])
    #expect(try users.remove(where: "[age] > 100") == 0)
  }

  @Test func everyWhereCallHasAnAsyncForm() async throws {
    try await users.insert(["_id": "a", "age": 1])
    try await users.insertBatch([["_id": "b", "age": 2]])
    try await users.update(["_id": "a", "age": 3])
    #expect(try await users.find(where: "[age] > ?", args: [2]).map(\.id) == ["a"])
    #expect(try await users.findOne(where: "[age] = 2")?.id == "b")
    #expect(try await users.count(where: "[age] IS NOT NULL") == 2)
    try await users.remove("a")
    #expect(try await users.remove(where: "1") == 1)
  }
}
