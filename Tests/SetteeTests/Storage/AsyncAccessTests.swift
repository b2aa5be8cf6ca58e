import Foundation
import Settee
import SetteeCore
import SetteeTestSupport
import Testing

/// The async forms wait for a connection without holding a thread, and are cancelled with
/// their task (issue 30's "one async story").
@Suite("Async forms: bounded threads, cancellation")
struct AsyncAccessTests {
  /// A thousand concurrent async reads on a pool of five readers: the process's thread
  /// count stays near what it was: each waiting read is a suspended task, not a thread
  /// blocked on GRDB's reader pool.
  @Test func aThousandConcurrentReadsKeepThreadsBounded() async throws {
    let directory = TemporaryDirectory()
    let db = try Database(
      path: directory.path("reads.db"), configuration: .init(fullSync: false, maximumReaderCount: 5)
    )
    let people = db.collection("people")
    try await people.putAll(
      (0..<500).map {
        ["_id": .string("p\($0)"), "name": .string("name \($0)"), "n": .int(Int64($0))]
      })
    let selector: JSONObject = ["name": ["$regex": "7"]]
    let query = try FindQuery(json: ["selector": .object(selector)])
    let expected = try await people.find(selector).count

    let before = ThreadCount.now
    let peak = ThreadCount.Peak()
    let counts = try await withThrowingTaskGroup(of: Int.self) { group in
      for number in 0..<1000 {
        group.addTask {
          // Three kinds of async form: one that ran on a dispatch thread, the streaming
          // find, and a `where` read through the collection's queue.
          switch number % 3 {
          case 0: return try await people.find(selector).count
          case 1:
            let found = Guarded(0)
            try await people.find(query) { _ in found.withLock { $0 += 1 } }
            return found.withLock { $0 }
          default:
            return try await people.count(where: "[name] LIKE '%7%'")
          }
        }
      }
      var counts: [Int] = []
      for try await count in group { counts.append(count) }
      return counts
    }
    peak.stop()
    #expect(counts.count == 1000)
    #expect(counts.allSatisfy { $0 == expected })
    // The five readers, the writer, GRDB's one waiting thread and the cooperative pool,
    // with room for other suites running beside this one (the count is the process's:
    // their servers and replicators were seen adding 69 in a full run). A thread per
    // read would be a thousand.
    #expect(peak.maximum - before < 150, "threads: \(before) before, \(peak.maximum) at the peak")
  }

  /// Five async reads run at once on a pool of five readers: each one's streaming body
  /// waits until all five are inside theirs. (On Linux, the dispatch threads the async
  /// forms used before ran as many at once as there are cores, and added one a second.)
  @Test func asyncReadsUseEveryReader() async throws {
    let directory = TemporaryDirectory()
    let db = try Database(
      path: directory.path("five.db"), configuration: .init(fullSync: false, maximumReaderCount: 5))
    let items = db.collection("items")
    try await items.put(["_id": "only"])
    let all = try FindQuery(json: ["selector": [:]])
    let inside = Guarded((now: 0, most: 0))
    try await withThrowingTaskGroup(of: Void.self) { group in
      for _ in 0..<5 {
        group.addTask {
          try await items.find(all) { _ in
            inside.withLock {
              $0.now += 1
              $0.most = max($0.most, $0.now)
            }
            let deadline = Date().addingTimeInterval(2)
            while inside.withLock({ $0.most }) < 5, Date() < deadline { usleep(1000) }
            inside.withLock { $0.now -= 1 }
          }
        }
      }
      try await group.waitForAll()
    }
    #expect(inside.withLock { $0.most } == 5)
  }

  /// A brief read (a document by its id, the file's uuid) runs on its task's thread with a
  /// connection of its own (issue 59): it does not wait while every reader of the pool is
  /// held, here the one reader, by a blocking streaming `find` whose closure holds it until
  /// the reads are done. Read through a lane, they would wait for it, and the closure
  /// would give up at its deadline and record it.
  @Test func briefReadsDoNotWaitForHeldReaders() async throws {
    let directory = TemporaryDirectory()
    let db = try Database(
      path: directory.path("brief.db"), configuration: .init(fullSync: false, maximumReaderCount: 1)
    )
    let items = db.collection("items")
    try await items.putAll((0..<50).map { ["_id": .string("i\($0)"), "n": .int(Int64($0))] })
    let all = try FindQuery(json: ["selector": [:]])
    let gate = Guarded((holding: false, released: false, gaveUp: false, done: false))
    Thread {
      defer { gate.withLock { $0.done = true } }
      _ = try? items.find(all) { _ in
        // The first document holds the reader; the others pass.
        guard !gate.withLock({ $0.holding }) else { return }
        gate.withLock { $0.holding = true }
        let deadline = Date().addingTimeInterval(30)
        while !gate.withLock({ $0.released }) {
          if Date() > deadline {
            gate.withLock { $0.gaveUp = true }
            return
          }
          usleep(1000)
        }
      }
    }.start()
    try #require(await eventually { gate.withLock { $0.holding } })
    for number in 0..<50 {
      #expect(try await items.get("i\(number)")?["n"] == .int(Int64(number)))
    }
    #expect(try await items.get("missing") == nil)
    #expect(try await db.uuid().count == 32)
    gate.withLock { $0.released = true }
    try #require(await eventually { gate.withLock { $0.done } })
    #expect(!gate.withLock { $0.gaveUp })
  }

  /// Brief reads from many tasks at once, more than there are brief connections (the rest
  /// read on lanes), answer what was last written, also after the schema changed under the
  /// connections (an index made, a collection added) and from a cancelled task not at all.
  @Test func briefReadsAnswerTheLatestWrites() async throws {
    let directory = TemporaryDirectory()
    let db = try Database(
      path: directory.path("many.db"), configuration: .init(fullSync: false, maximumReaderCount: 2))
    let items = db.collection("items")
    try await items.putAll((0..<200).map { ["_id": .string("i\($0)"), "n": .int(Int64($0))] })
    func readAll() async throws -> [Int64?] {
      try await withThrowingTaskGroup(of: (Int, Int64?).self) { group in
        for number in 0..<200 {
          group.addTask { (number, try await items.get("i\(number)")?["n"]?.int64Value) }
        }
        var found = [Int64?](repeating: nil, count: 200)
        for try await (number, n) in group { found[number] = n }
        return found
      }
    }
    #expect(try await readAll() == (0..<200).map { Int64($0) })
    try await items.putAll(
      try await items.get((0..<200).map { "i\($0)" }).compactMap { document in
        guard var body = document?.json else { return nil }
        body["n"] = .int((body["n"]?.int64Value ?? 0) + 1000)
        return body
      })
    try await items.ensureIndexed(["n"], name: "byN")
    #expect(try await readAll() == (0..<200).map { Int64($0 + 1000) })
    let later = db.collection("later")
    try await later.put(["_id": "one", "n": 1])
    #expect(try await later.get("one")?["n"] == 1)
    let cancelled = Task {
      while !Task.isCancelled { await Task.yield() }
      return try await items.get("i1")
    }
    cancelled.cancel()
    await #expect(throws: CancellationError.self) { _ = try await cancelled.value }
  }

  /// A `find` page starts as a brief read (``ConnectionUse/tentative``): one that takes
  /// longer than its millisecond there is stopped and runs again on a lane, and answers in
  /// full, as the blocking form does. Scanning 5,000 documents takes tens of milliseconds
  /// (debug build), so here every page but the indexed one is stopped and run again.
  @Test func findPagesPastTheirBriefTimeAnswerInFull() async throws {
    let directory = TemporaryDirectory()
    let db = try Database(
      path: directory.path("pages.db"), configuration: .init(fullSync: false, maximumReaderCount: 2)
    )
    let items = db.collection("items")
    try await items.putAll((0..<5_000).map { ["_id": .string("i\($0)"), "n": .int(Int64($0))] })
    try await items.ensureIndexed(["n"], name: "byN")
    for selector: JSONObject in [
      ["n": ["$mod": [7, 3]]], ["n": 4_321], ["_id": ["$regex": "9$"]], ["n": ["$gt": 4_990]],
    ] {
      let query = try FindQuery(json: ["selector": .object(selector), "limit": 10_000])
      let page = try await items.findPage(query)
      let blocking = try await Task.detached { try Self.blockingPage(items, query) }.value
      #expect(page.documents.count == blocking.documents.count)
      #expect(page.documents.map(\.id) == blocking.documents.map(\.id))
      #expect(!page.documents.isEmpty)
    }
  }

  /// The blocking form, called from synchronous code as its users call it.
  static func blockingPage(_ items: DocumentCollection, _ query: FindQuery) throws -> FindResult {
    try items.findPage(query)
  }

  /// Cancelling the task of a running streaming `find` stops its query: it throws
  /// `CancellationError` long before it would have finished, and the database is usable
  /// after. In memory the read runs on the one connection's queue; on a file, on a reader
  /// lane.
  @Test(arguments: [false, true]) func cancellingATaskStopsItsQuery(onFile: Bool) async throws {
    let directory = TemporaryDirectory()
    let db =
      onFile
      ? try Database(path: directory.path("cancel.db"), configuration: .init(fullSync: false))
      : try Database(inMemoryWith: .init())
    let items = db.collection("items")
    try await items.putAll((0..<1000).map { ["_id": .string(String(format: "i%04d", $0))] })
    let all = try FindQuery(json: ["selector": [:]])
    let seen = Guarded(0)
    // Cancelled from the query's own callback once 20 documents are seen: a task waiting
    // to cancel it needs a cooperative thread, and under CI's load (the whole suite on two
    // cores) none came until the query had read all 1,000 (stop 52).
    let running = Guarded<(task: Task<FindSummary, any Error>?, atCancel: Int?)>((nil, nil))
    let task = Task {
      try await items.find(all) { _ in
        let count = seen.withLock {
          $0 += 1
          return $0
        }
        running.withLock { state in
          if count >= 20, state.atCancel == nil, let task = state.task {
            state.atCancel = count
            task.cancel()
          }
        }
        Thread.sleep(forTimeInterval: 0.005)  // 1,000 documents: 5 s uncancelled
      }
    }
    running.withLock { $0.task = task }
    await #expect(throws: CancellationError.self) { _ = try await task.value }
    let atCancel = try #require(running.withLock { $0.atCancel })
    #expect(atCancel >= 20)
    // Counted in documents, not seconds: on a loaded machine each 5 ms sleep takes longer,
    // but the query still stops within a few documents of the cancellation.
    #expect(seen.withLock { $0 } - atCancel < 50)
    #expect(seen.withLock { $0 } < 1000)
    #expect(try await items.count() == 1000)
    #expect(try await items.find(all).count == 1000)
  }

  /// A write whose task is cancelled while it waits for the writer does not run.
  /// A task cancelled before its call begins does not run it (the contract of
  /// `withConnection`, which the waiting-write test below can reach only by timing).
  @Test func aCallFromACancelledTaskDoesNotRun() async throws {
    let db = try Database(inMemoryWith: .init())
    let items = db.collection("items")
    let started = Guarded(false)
    let write = Task {
      while !Task.isCancelled { await Task.yield() }
      started.set(true)
      try await items.put(["_id": "late"])
    }
    let queued = Task {
      while !Task.isCancelled { await Task.yield() }
      try await items.insert(["_id": "queued"])
    }
    write.cancel()
    queued.cancel()
    await #expect(throws: CancellationError.self) { _ = try await write.value }
    await #expect(throws: CancellationError.self) { _ = try await queued.value }
    #expect(started.get())
    #expect(try await items.count() == 0)
  }

  @Test func aCancelledWaitingWriteDoesNotRun() async throws {
    let db = try Database(inMemoryWith: .init())
    let items = db.collection("items")
    // Holds the writer until released.
    let gate = Guarded((holding: false, released: false))
    let busy = items.enqueue { _ in
      gate.withLock { $0.holding = true }
      // A safety bound only: under a loaded machine 10 s passed before the cancellation.
      let deadline = Date().addingTimeInterval(120)
      while !gate.withLock({ $0.released }), Date() < deadline { usleep(1000) }
    }
    // Until the writer is held, however long a loaded machine takes (10 s once passed, and
    // the write then ran before the queue's operation had started).
    try #require(await eventually { gate.withLock { $0.holding } })
    let write = Task { try await items.put(["_id": "late"]) }
    let queued = Task { try await items.insert(["_id": "queued"]) }
    try await Task.sleep(nanoseconds: 50_000_000)
    write.cancel()
    queued.cancel()
    gate.withLock { $0.released = true }
    await #expect(throws: CancellationError.self) { _ = try await write.value }
    await #expect(throws: CancellationError.self) { _ = try await queued.value }
    try await busy.value
    #expect(try await items.get("late") == nil)
    #expect(try await items.get("queued") == nil)
    // The queue goes on with what comes after.
    try await items.insert(["_id": "after"])
    #expect(try await items.count() == 1)
  }

  /// An async view query that must catch up a large view sleeps its task between slices,
  /// and the answer is the blocking form's.
  @Test func asyncViewQueriesAnswerAsTheBlockingFormDoes() async throws {
    let directory = TemporaryDirectory()
    let db = try Database(path: directory.path("views.db"), configuration: .init(fullSync: false))
    let items = db.collection("items")
    try await items.putAll((0..<300).map { ["_id": .string("i\($0)"), "k": .int(Int64($0 % 7))] })
    let view = try await items.defineView(try ViewDefinition(json: ["name": "byK", "key": "k"]))
    let asynchronous = try await view.query(ViewQuery().key(3))
    let blocking = try await Task.detached { try Self.blockingQuery(view, ViewQuery().key(3)) }
      .value
    #expect(asynchronous.rows.count == 43)
    #expect(asynchronous.rows == blocking.rows)
    try await items.put(["_id": "new", "k": 3])
    #expect(try await view.query(ViewQuery().key(3)).rows.count == 44)
    try await view.update()
  }

  /// The blocking form, called from synchronous code as its users call it.
  static func blockingQuery(_ view: View, _ query: ViewQuery) throws -> ViewResult {
    try view.query(query)
  }
}

/// The process's thread count, from `/proc/self/status`.
enum ThreadCount {
  static var now: Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
      let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Threads:") })
    else { return 0 }
    return Int(line.dropFirst("Threads:".count).trimmingCharacters(in: .whitespaces)) ?? 0
  }

  /// The highest count seen by a thread that looks every millisecond until stopped.
  final class Peak: @unchecked Sendable {
    private let state = Guarded((maximum: 0, running: true))
    private let done = DispatchSemaphore(value: 0)

    init() {
      let thread = Thread { [state, done] in
        while state.withLock({ $0.running }) {
          let count = ThreadCount.now
          state.withLock { $0.maximum = max($0.maximum, count) }
          usleep(1000)
        }
        done.signal()
      }
      thread.start()
    }

    func stop() {
      state.withLock { $0.running = false }
      done.wait()
    }

    var maximum: Int { state.withLock { $0.maximum } }
  }
}
