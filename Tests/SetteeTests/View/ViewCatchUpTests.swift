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
    let mapped = Guarded(0)
    let slow = try docs.view("slow", version: "1") { document, emit in
      mapped.mutate { $0 += 1 }
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
    // Once the catch-up is under way, however long a loaded machine takes to start it.
    let deadline = Date().addingTimeInterval(60)
    while mapped.value < 3, Date() < deadline { usleep(1000) }
    // Within the busy timeout although the whole catch-up takes twice as long.
    try other.put(["_id": "during", "n": 1000])
    #expect(mapped.value < 60, "the write came after the catch-up had mapped everything")
    done.wait()
    // The query answers with the write made meanwhile.
    let answer = rows.withLock { $0 }
    #expect((try? answer?.get()) == 61, "\(String(describing: answer))")
  }

  /// A view mapped outside SQL maps each slice on a reader and holds the write lock only
  /// to store its rows: writers of another connection with a short busy timeout get in
  /// all along, and what they change while a slice is being mapped is mapped again.
  @Test func mappingHoldsNoWriteLock() throws {
    let path = directory.path("ahead.db")
    let docs = try Database(path: path).collection()
    try docs.putAll((0..<60).map { ["_id": .string("d\($0)"), "n": .int(Int64($0))] })
    let slow = try docs.view("slow", version: "1") { document, emit in
      Thread.sleep(forTimeInterval: 0.04)  // 60 documents: 2.4 s of mapping, in slices
      emit(document["n"] ?? .null, nil)
    }
    // Shorter than a slice (0.2 s): a write waiting for a slice mapped in the lock fails.
    let other = try Database(path: path, configuration: .init(busyTimeout: 0.1)).collection()
    let done = DispatchSemaphore(value: 0)
    let answer = Guarded<Result<ViewResult, any Error>?>(nil)
    Thread.detachNewThread {
      let result = Result { try slow.query() }
      answer.withLock { $0 = result }
      done.signal()
    }
    // Writes all through the catch-up: new documents, and changes to documents mapped
    // already (the first ones) or being mapped.
    for round in 0..<8 {
      Thread.sleep(forTimeInterval: 0.15)
      try other.put(["_id": .string("new\(round)"), "n": .int(Int64(1000 + round))])
      let changed = try #require(try other.get("d\(round * 3)"))
      let rev = try #require(changed.rev)
      if round == 7 {
        try other.delete(changed.id, rev: rev)
      } else {
        try other.put(
          ["_id": .string(changed.id), "_rev": .string(rev.description), "n": .int(Int64(-round))])
      }
    }
    done.wait()
    let result = try #require(try answer.withLock { $0 }?.get())
    // The rows the documents map to now, each document once.
    let expected = try other.find([:]).map { "\($0.id)=\($0["n"] ?? .null)" }
    let rows = try slow.query().rows.map { "\($0.id ?? "")=\($0.key)" }
    #expect(rows.count == expected.count && Set(rows) == Set(expected), "\(rows)")
    #expect(result.totalRows >= 60)
  }

  /// Two connections catching up the same view at once: both map the same slice ahead,
  /// one stores it, and the other, finding the view moved, maps in its write. Both answer
  /// every document once.
  @Test func twoCatchUpsOfOneViewAgree() throws {
    let path = directory.path("twice.db")
    let docs = try Database(path: path).collection()
    try docs.putAll((0..<40).map { ["_id": .string("d\($0)"), "n": .int(Int64($0))] })
    let map: ViewMapFunction = { document, emit in
      Thread.sleep(forTimeInterval: 0.02)
      emit(document["n"] ?? .null, nil)
    }
    let views = try [docs, Database(path: path).collection()].map {
      try $0.view("both", version: "1", map: map)
    }
    let totals = Guarded<[Int]>([])
    let group = DispatchGroup()
    for view in views {
      group.enter()
      Thread.detachNewThread {
        let total = (try? view.query().totalRows) ?? -1
        totals.withLock { $0.append(total) }
        group.leave()
      }
    }
    group.wait()
    #expect(totals.withLock { $0 } == [40, 40])
    let keys = try views[0].query().rows.map(\.key)
    #expect(keys == (0..<40).map { JSON.int(Int64($0)) })
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
