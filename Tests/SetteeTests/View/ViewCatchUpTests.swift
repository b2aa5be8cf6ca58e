import Foundation
import Settee
import SetteeCore
import SetteeTestSupport
import Testing

/// A view's catch-up never holds the write lock for long, and a filter's `$regex` follows
/// find's rules: past its budget, the query fails at once.
@Suite("View catch-ups under load")
struct ViewCatchUpTests {
  let directory = TemporaryDirectory()

  @Test func aCatastrophicRegexInAFilterFailsAtOnce() throws {
    let docs = try Database(path: directory.path("regex.db")).collection()
    let evil = String(repeating: "a", count: 40)
    try docs.putAll((0..<300).map { ["_id": .string("d\($0)"), "s": .string(evil)] })
    let view = try docs.defineView(
      json: ["name": "evil", "key": "s", "filter": ["s": ["$regex": "(a+)+b"]]])
    // Before, each document cost the pattern's 100 ms and the query then answered.
    let error = expectError(.limitExceeded) { _ = try view.query() }
    #expect(error?.message.contains("(a+)+b") == true, "\(String(describing: error))")
    // find refuses the same filter the same way.
    expectError(.limitExceeded) { _ = try docs.find(["s": ["$regex": "(a+)+b"]]) }
  }

  @Test func aLongCatchUpLetsOtherWritersIn() throws {
    let path = directory.path("slices.db")
    let docs = try Database(path: path).collection()
    try docs.putAll((0..<60).map { ["_id": .string("d\($0)"), "n": .int(Int64($0))] })
    let slow = try docs.view("slow", version: "1") { document, emit in
      Thread.sleep(forTimeInterval: 0.05)  // 60 documents: 3 s of mapping
      emit(document["n"] ?? .null, nil)
    }
    let other = try Database(path: path, configuration: .init(busyTimeout: 1.5)).collection()
    let done = DispatchSemaphore(value: 0)
    let rows = Guarded<Result<Int, any Error>?>(nil)
    Thread.detachNewThread {
      let result = Result { try slow.query().totalRows }
      rows.withLock { $0 = result }
      done.signal()
    }
    Thread.sleep(forTimeInterval: 0.3)
    // Within the busy timeout although the whole catch-up takes twice as long.
    try other.put(["_id": "during", "n": 1000])
    done.wait()
    // The query answers with the write made meanwhile.
    let answer = rows.withLock { $0 }
    #expect((try? answer?.get()) == 61, "\(String(describing: answer))")
  }
}
