import Foundation
import Settee
import SetteeCore
import SetteeTestSupport
import Testing

/// Seed 003's threading and cache: operations on one collection take effect in the order
/// they were issued, whichever tasks issue them; waiting for them; the parsed-document
/// cache never changes an answer.
@Suite("where strings: call order, waiting and the cache")
struct WhereQueueTests {
  let database: Database
  let users: DocumentCollection

  init() throws {
    database = try Database(inMemoryWith: .init())
    users = database.collection("users")
  }

  @Test func callsFromManyTasksTakeEffectInTheOrderIssued() async throws {
    final class Issued: Sendable { let ids = Guarded<[String]>([]) }
    let issued = Issued()
    await withTaskGroup(of: Void.self) { group in
      for number in 0..<100 {
        group.addTask { [users] in
          // Issue and record in one step, so the record is the order of issue.
          let pending = issued.ids.withLock { issued in
            let id = "op\(number)"
            issued.append(id)
            return users.enqueue { try $0.insert(["_id": .string(id), "n": .int(Int64(number))]) }
          }
          _ = try? await pending.value
        }
      }
    }
    let applied = try await users.changes().map(\.id)
    #expect(applied == issued.ids.withLock { $0 })
    #expect(applied.count == 100)
  }

  @Test func asyncCallsWaitForWhatWasIssuedBefore() async throws {
    // A slow operation issued first: the async calls issued after it see its effect.
    users.enqueue { users in
      Thread.sleep(forTimeInterval: 0.05)
      try users.insert(["_id": "first"])
    }
    #expect(try await users.count(where: "") == 1)
    let removed = users.enqueue { try $0.remove(where: "[_id] = 'first'") }
    #expect(try await users.findOne(where: "[_id] = 'first'") == nil)
    #expect(try await removed.value == 1)
    // Errors come back through the pending operation.
    let failing = users.enqueue { try $0.update(["_id": "nobody"]) }
    await #expect(throws: SetteeError.self) { try await failing.value }
  }

  @Test func waitingForPendingOperations() async throws {
    let other = database.collection("other")
    for number in 0..<20 {
      users.enqueue { try $0.insert(["_id": .string("u\(number)")]) }
      other.enqueue { try $0.insert(["_id": .string("o\(number)")]) }
    }
    await users.waitForPendingOperations()
    #expect(try await users.count() == 20)
    let last = other.enqueue { users in Thread.sleep(forTimeInterval: 0.02) }
    await database.waitForPendingOperations()
    #expect(last.isDone)
    #expect(try await other.count() == 20)
    // The blocking form, from synchronous code (a thread of its own, not one of the
    // cooperative pool's), and from inside an operation (where it returns at once).
    users.enqueue { try $0.insert(["_id": "late"]) }
    let blockingWait: @Sendable () -> Void = users.waitForPendingOperations
    await withCheckedContinuation { continuation in
      Thread {
        blockingWait()
        continuation.resume()
      }.start()
    }
    #expect(try await users.get("late") != nil)
    let inside = users.enqueue { users in
      users.waitForPendingOperations()
      return try users.count()
    }
    #expect(try await inside.value == 21)
  }

  @Test(arguments: [-1, 0, 1, 3, 1000])
  func theCacheNeverChangesAnAnswer(size: Int) throws {
    var random = RandomQueries(seed: UInt64(size + 2))
    try users.setCacheSize(size)
    #expect(users.cacheSize == size)
    try users.insertBatch((0..<40).map { ["_id": .string("d\($0)"), "n": .int(Int64($0 % 5))] })
    for step in 0..<200 {
      let n = Int(random.random.next() % 5)
      let expected = try users.find(where: "[n] = ?", args: [.int(Int64(n))])
      #expect(expected.allSatisfy { $0["n"] == .int(Int64(n)) })
      // count reads no bodies, so no cache.
      #expect(expected.count == (try users.count(where: "[n] = ?", args: [.int(Int64(n))])))
      // Changes between queries must show through the cache.
      let id = "d\(random.random.next() % 40)"
      switch step % 3 {
      case 0:
        try users.update(["_id": .string(id), "n": .int(Int64(n)), "step": .int(Int64(step))])
      case 1: users.flushCache()
      default: break
      }
      let again = try users.find(where: "[n] = ?", args: [.int(Int64(n))], orderBy: "[_id]")
      for document in again {
        #expect(try users.get(document.id) == document)
      }
    }
    _ = try users.find(where: "")
    #expect(users.cachedDocumentCount == max(0, min(size, 40)))
    users.flushCache()
    #expect(users.cachedDocumentCount == 0 && users.cacheSize == size)
    expectError(.invalidArgument) { try users.setCacheSize(-2) }
  }

  @Test func everyConfigurationCallHasAnAsyncForm() async throws {
    try await users.insert(["_id": "a", "email": "a@x.org", "c": ["d": 1]])
    try await users.addIndex("[c.d]")
    try await users.addUniqueIndex("[email]")
    #expect(try await users.whereIndexes().count == 2)
    try await users.removeIndex("[c.d]")
    try await users.addQueryableFields("[c.d]")
    #expect(try await users.queryableFields() == [FieldPath(components: ["c", "d"])])
    try await users.removeQueryableFields("[c.d]")
    try await users.setDefaults(["x": 1])
    #expect(try await users.defaults() == ["x": 1])
    try await users.setAliases(["mail": "[email]"])
    #expect(try await users.aliases() == ["mail": "[email]"])
    #expect(try await users.explain(where: "mail = ?", args: ["a@x.org"]).steps.count > 0)
    #expect(try await users.find(where: "[x] = 1 AND mail = 'a@x.org'").count == 1)
  }
}
