import Foundation
import SetteeCLI
import Settee
import SetteeCore

/// Live queries (issue 13): how soon a commit reaches an observer, and what open
/// observers cost a writer.
extension BenchSuite {
  func liveQueries() async throws -> [BenchResult] {
    var results: [BenchResult] = []
    // Latency: an observer waits on a document; each write is spaced from the last by
    // 12 ms, past the 10 ms that make a burst (bursts are coalesced on purpose).
    let collection = database.collection("live-latency")
    try await collection.upsert(["_id": "watched", "n": 0])
    let writes = quick ? 50 : 1_000
    let (arrivals, arrived) = AsyncStream.makeStream(of: (Int64, UInt64).self)
    let observer = Task {
      for try await result in collection.observeDocument("watched") {
        arrived.yield(
          (result.value?["n"]?.int64Value ?? -1, DispatchTime.now().uptimeNanoseconds))
      }
    }
    var latencies: [Double] = []
    do {
      // Ended when the writes end, or when one fails.
      defer { observer.cancel() }
      var received = arrivals.makeAsyncIterator()
      _ = await received.next()  // the current value
      for number in 1...Int64(writes) {
        try await Task.sleep(nanoseconds: 12_000_000)
        try await collection.upsert(["_id": "watched", "n": .int(number)])
        let committed = DispatchTime.now().uptimeNanoseconds
        while let (value, time) = await received.next() {
          if value == number {
            latencies.append(Double(time > committed ? time - committed : 0) / 1e9)
            break
          }
        }
      }
    }
    latencies.sort()
    let median = latencies[latencies.count / 2]
    let p99 = latencies[min(latencies.count - 1, latencies.count * 99 / 100)]
    results.append(
      BenchResult(
        name: "live query latency, median", n: writes, settee: median, baseline: 0, target: nil,
        limit: 0.005))
    results.append(
      BenchResult(
        name: "live query latency, p99", n: writes, settee: p99, baseline: 0, target: nil))

    // An import with 100 live queries open on its collection, against the same import with
    // none. Each run imports into a new collection; its observers are cancelled, and awaited,
    // before the next run (left running, they recounted their collections while later runs
    // were timed: the plain imports, timed last, took 2-3 s against 0.9 s). The imports are
    // timed on a thread of their own, so that the observers have Swift's cooperative
    // threads to themselves, as an app's would.
    let lines = quick ? Array(people.prefix(2_000)) : people
    let runs = quick ? 1 : 3
    var times: [Double] = []
    for run in 0...runs {
      let name = "live-import-\(run)"
      let target = database.collection(name)
      let ready = Ready(count: 100)
      let observers = (0..<100).map { number in
        Task {
          let query = try FindQuery(matching: Field("age") > number % 90)
          for try await _ in target.observeCount(query) { ready.arrive() }
        }
      }
      let seconds: Double
      do {
        // Cancelled and awaited before the next run, or when the import fails.
        defer { for observer in observers { observer.cancel() } }
        await ready.wait()
        seconds = try await onOwnThread { [self] in
          try pool.writeWithoutTransaction { db in _ = try db.checkpoint(.passive) }
          let start = DispatchTime.now().uptimeNanoseconds
          try load(name, lines)
          return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        }
      }
      for observer in observers { _ = await observer.result }
      // The first run is a warm-up, as for the other figures.
      if run > 0 { times.append(seconds) }
    }
    times.sort()
    let observed = times[times.count / 2]
    let plain = try await onOwnThread { [self] in
      try medianOfWrites(repetitions: runs, prepare: { "live-plain-\($0)" }) { name in
        try load(name, lines)
      }
    }
    results.append(
      BenchResult(
        name: "import, 100 live queries open", n: lines.count, settee: observed, baseline: plain,
        target: 1.3))
    return results
  }
}

/// Counts observers' first results, so that a run starts once all are observing.
final class Ready: Sendable {
  private struct State {
    var remaining: Int
    var waiter: CheckedContinuation<Void, Never>?
  }
  private let state: Locked<State>

  init(count: Int) { state = Locked(State(remaining: count)) }

  func arrive() {
    let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
      state.remaining -= 1
      guard state.remaining == 0 else { return nil }
      defer { state.waiter = nil }
      return state.waiter
    }
    waiter?.resume()
  }

  /// Returns once every observer has arrived.
  func wait() async {
    await withCheckedContinuation { continuation in
      let arrived = state.withLock { state -> Bool in
        if state.remaining <= 0 { return true }
        state.waiter = continuation
        return false
      }
      if arrived { continuation.resume() }
    }
  }
}
