import Foundation
import Observation
import Settee
import SetteeCore
import SetteeTestSupport
import Testing

/// The observable model of a live query (Couchbase Lite's `CBLUITableSource`): rows, count,
/// loading state and errors, with Observation's change notifications, as SwiftUI reads them.
@Suite("Live query models")
@MainActor
struct LiveModelTests {
  let directory = TemporaryDirectory()

  /// Waits (bounded) until `condition` holds, letting the model's task run.
  func until(_ condition: () -> Bool) async throws {
    for _ in 0..<500 where !condition() { try await Task.sleep(nanoseconds: 10_000_000) }
    #expect(condition())
  }

  @Test func rowsFollowWritesAndObservationSeesThem() async throws {
    let people = try Database(path: directory.path("live.db")).collection("people")
    try await people.putAll([["_id": "a", "age": 30], ["_id": "b", "age": 12]])
    let adults = LiveModel(people.observe(try FindQuery(matching: Field("age") >= 18)))
    #expect(adults.isLoading && adults.rows.isEmpty && adults.value == nil)
    let running = Task { await adults.run() }
    try await until { !adults.isLoading }
    #expect(adults.rows.map(\.id) == ["a"] && adults.count == 1 && adults.error == nil)

    // What SwiftUI does: read inside withObservationTracking, be told of the change.
    let changed = Guarded(false)
    withObservationTracking {
      _ = adults.rows
    } onChange: {
      changed.set(true)
    }
    try await people.put(["_id": "c", "age": 40])
    try await until { adults.count == 2 }
    #expect(changed.get())
    #expect(adults.rows.map(\.id) == ["a", "c"])
    // A write that leaves the result alone changes nothing.
    let updates = adults.updates
    try await people.put(["_id": "d", "age": 3])
    try await Task.sleep(nanoseconds: 200_000_000)
    #expect(adults.updates == updates)
    running.cancel()
    await running.value
  }

  @Test func viewResultsToo() async throws {
    let sales = try Database(inMemoryWith: .init()).collection("sales")
    try await sales.putAll([["_id": "s1", "store": "x"], ["_id": "s2", "store": "y"]])
    let view = try await sales.defineView(json: ["name": "byStore", "key": "store"])
    let model = LiveModel(view.observe(ViewQuery().key("y")))
    let running = Task { await model.run() }
    try await until { !model.isLoading }
    #expect(model.rows.map(\.id) == ["s2"] && model.count == 1)
    running.cancel()
    await running.value
  }
}
