import Foundation
import Settee
import SetteeCore
import SetteeTestSupport
import Testing

/// Live queries and changes feeds across Database values and processes.
@Suite("Live queries and feeds across processes")
struct LiveCLITests {
  let directory = TemporaryDirectory()
  var db: String { directory.path("live.db") }

  func settee(_ arguments: String...) throws -> SetteeBinary.Run {
    try SetteeBinary.run(["--db", db] + arguments, timeout: 30)
  }

  @Test func anotherDatabaseValueAndAnotherProcessWakeALiveQuery() async throws {
    let database = try Database(path: db)
    let people = database.collection()
    try await people.put(["_id": "a", "age": 30])
    let seen = Guarded<[[String]]>([])
    let task = Task {
      for try await result in people.observe(
        try FindQuery(matching: Field("age") >= 18, sort: [.ascending("_id")]))
      {
        seen.mutate { $0.append(result.value.map(\.id)) }
      }
    }
    #expect(await eventually { seen.value.count == 1 })
    // Another Database value on the same file.
    let other = try Database(path: db)
    try await other.collection().put(["_id": "b", "age": 40])
    #expect(await eventually { seen.value.last == ["a", "b"] })
    // Another process.
    #expect(try settee("put", #"{"_id":"c","age":50}"#).status == 0)
    #expect(await eventually { seen.value.last == ["a", "b", "c"] })
    #expect(try settee("put", #"{"_id":"d","age":5}"#).status == 0)  // leaves the result alone
    try await Task.sleep(nanoseconds: 300_000_000)
    #expect(seen.value.count == 3)
    task.cancel()
    #expect(await eventually { database.liveObserverCount == 0 })
  }

  @Test func theContinuousFeedPrintsChangesAsTheyHappen() throws {
    #expect(try settee("put", #"{"_id":"first"}"#).status == 0)
    // Two more changes from another process while the feed waits; --limit ends it.
    let path = db
    DispatchQueue.global().asyncAfter(deadline: .now() + 0.5) {
      _ = try? SetteeBinary.run(["--db", path, "put", #"{"_id":"second"}"#])
      _ = try? SetteeBinary.run(["--db", path, "put", #"{"_id":"third","_deleted":false}"#])
    }
    let run = try settee("changes", "--feed", "continuous", "--since", "0", "--limit", "3")
    #expect(run.status == 0 && !run.timedOut, "\(run.stderr)")
    let lines = try run.stdout.split(separator: "\n").map { try JSONParser.parse(String($0)) }
    #expect(lines.map { $0["id"] } == ["first", "second", "third"])
    #expect(lines.map { $0["seq"] } == [1, 2, 3])
    #expect(lines[0][path: "changes.0.rev"]?.stringValue?.hasPrefix("1-") == true)
  }

  @Test func longPollWaitsForAChangeOrTheTimeout() throws {
    #expect(try settee("put", #"{"_id":"a"}"#).status == 0)
    let quiet = try settee("changes", "--feed", "longpoll", "--since", "1", "--timeout", "300")
    #expect(quiet.status == 0 && quiet.seconds >= 0.3)
    #expect(try JSONParser.parse(quiet.stdout) == ["results": [], "last_seq": 1])
    let path = db
    DispatchQueue.global().asyncAfter(deadline: .now() + 0.3) {
      _ = try? SetteeBinary.run(["--db", path, "put", #"{"_id":"b"}"#])
    }
    let woken = try settee("changes", "--feed", "longpoll", "--since", "1", "--timeout", "20000")
    #expect(woken.status == 0 && woken.seconds < 15)
    #expect(try JSONParser.parse(woken.stdout)[path: "results.0.id"] == "b")
    #expect(try settee("changes", "--feed", "sometimes").status == 2)
  }
}
