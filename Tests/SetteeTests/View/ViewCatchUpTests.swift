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

/// A background update (`stale: .updateAfter`) that fails is reported with the next result,
/// once, rather than dropped.
@Suite("Background view updates")
struct BackgroundUpdateTests {
  let directory = TemporaryDirectory()

  @Test func aFailedBackgroundUpdateIsReportedOnce() throws {
    let path = directory.path("background.db")
    do {
      let docs = try Database(path: path).collection()
      try docs.put(["_id": "a", "n": 1])
      let view = try docs.view("swift", version: "1") { document, emit in
        emit(document["n"] ?? .null, nil)
      }
      _ = try view.query()
      try docs.put(["_id": "b", "n": 2])  // the view is now behind
    }
    // Another process, without the Swift map function: the background update must fail.
    let docs = try Database(path: path).collection()
    let view = docs.view(named: "swift")
    let stale = try view.query(ViewQuery(stale: .updateAfter))
    #expect(stale.totalRows == 1 && stale.updateError == nil)
    var reported: SetteeError? = nil
    for _ in 0..<200 where reported == nil {
      Thread.sleep(forTimeInterval: 0.01)
      reported = try view.query(ViewQuery(stale: .ok)).updateError
    }
    #expect(reported?.code == .viewNotRegistered)
    #expect(try view.query(ViewQuery(stale: .ok)).updateError == nil)  // once
    #expect(try view.query(ViewQuery(stale: .ok)).json["update_error"] == nil)
  }
}
