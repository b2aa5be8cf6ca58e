import Foundation
import Settee
import SetteeCore
import SetteeTestSupport
import Testing

/// Views on a file: rows persist across launches, writes from another Database value are
/// caught up with, and a process without the Swift map function says so.
@Suite("Views: files, launches, async")
struct ViewFileTests {
  let directory = TemporaryDirectory()
  var path: String { directory.path("views.db") }

  @Test func rowsPersistAndAnotherDatabaseValuesWritesAreSeen() throws {
    let calls = Guarded(0)
    let map: ViewMapFunction = { doc, emit in
      calls.mutate { $0 += 1 }
      emit(doc["n"] ?? nil, nil)
    }
    do {
      let first = try Database(path: path)
      try first.collection().putAll(
        (0..<10).map { ["_id": .string("d\($0)"), "n": .int(Int64($0))] })
      #expect(try first.collection().view("byN", version: "1", map: map).query().totalRows == 10)
      #expect(calls.value == 10)
    }
    // A new launch: the same registration maps nothing again.
    let reader = try Database(path: path)
    let view = try reader.collection().view("byN", version: "1", map: map)
    #expect(try view.query().totalRows == 10)
    #expect(calls.value == 10)
    // Another Database value on the file writes; the reader catches up with that alone.
    let writer = try Database(path: path)
    try writer.collection().put(["_id": "d10", "n": 10])
    try writer.collection().delete(try #require(try writer.collection().get("d0")))
    let result = try view.query()
    #expect(result.rows.map(\.key).first == 1 && result.rows.map(\.key).last == 10)
    #expect(calls.value == 11)
    // A process that has not registered the function: fine while up to date and with
    // stale: ok, a typed error when the view needs it.
    let other = try Database(path: path).collection().view(named: "byN")
    #expect(try other.query().totalRows == 10)
    try writer.collection().put(["_id": "d11", "n": 11])
    expectError(.viewNotRegistered) { _ = try other.query() }
    #expect(try other.query(ViewQuery(stale: .ok)).totalRows == 10)
    // A new version rebuilds.
    let rebuilt = try reader.collection().view("byN", version: "2") { doc, emit in
      emit(doc["n"] ?? nil, "v2")
    }
    #expect(try rebuilt.query().rows.allSatisfy { $0.value == "v2" })
    // Bringing every view up to date: this process has the function, a new one has not.
    try writer.collection().put(["_id": "d12", "n": 12])
    #expect(try Database(path: path).updateAllViews().notRegistered == ["_default/byN"])
    let report = try reader.updateAllViews()
    #expect(report.updated == ["_default/byN"] && report.notRegistered.isEmpty)
  }

  @Test func readOnlyDatabasesAnswerFromWhatTheViewHolds() throws {
    let db = try Database(path: path)
    try db.collection().put(["_id": "a", "k": 1])
    let view = try db.collection().defineView(json: ["name": "k", "key": "k"])
    #expect(try view.query().totalRows == 1)
    let readOnly = try Database(path: path, configuration: .init(readOnly: true))
    #expect(try readOnly.collection().view(named: "k").query().totalRows == 1)
    try db.collection().put(["_id": "b", "k": 2])
    expectError(.readOnly) { _ = try readOnly.collection().view(named: "k").query() }
    #expect(try readOnly.collection().view(named: "k").query(ViewQuery(stale: .ok)).totalRows == 1)
  }

  @Test func everyViewOperationHasAnAsyncForm() async throws {
    let db = try Database(inMemoryWith: .init())
    let items = db.collection("items")
    try await items.put(["_id": "a", "k": "x", "n": 2])
    let view = try await items.view("byK", version: "1", reduce: .sum) { doc, emit in
      emit(doc["k"] ?? nil, doc["n"] ?? nil)
    }
    #expect(try await view.query().rows.first?.value == 2)
    try await view.update()
    let declared = try await items.defineView(ViewDefinition(json: ["name": "d", "key": "k"]))
    #expect(try await declared.query(ViewQuery(key: "x")).rows.count == 1)
    #expect(try await items.views().map(\.name) == ["byK", "d"])
    try await items.deleteView(named: "d")
    #expect(try await items.allDocuments().rows.count == 1)
    #expect(try await db.updateAllViews().updated == ["items/byK"])
    let indexes = items.valueIndexes
    try await indexes.define("k", field: "k")
    try await indexes.define("n", type: .integer, version: "1") { doc in [doc["n"] ?? nil] }
    #expect(try await indexes.names() == ["k", "n"])
    #expect(try await indexes.documents(matching: ["n": .atLeast(1)]).count == 1)
    #expect(try await indexes.documentIDs(matching: ["k": "x"]) == ["a"])
    #expect(try await indexes.uniqueValues(of: "n") == [2])
    try await indexes.updateAll()
    try await indexes.delete("k")
  }
}
