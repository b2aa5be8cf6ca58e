import Foundation
import SetteeCLI
import Settee
import SetteeCore

/// Live queries (issue 13): how soon a commit reaches an observer, and what open
/// observers cost a writer.
extension BenchSuite {
  mutating func liveQueries() throws -> [BenchResult] {
    var results: [BenchResult] = []
    // Latency: an observer waits on a document; each write is spaced from the last by
    // 12 ms, past the 10 ms that make a burst (bursts are coalesced on purpose).
    let collection = database.collection("live-latency")
    try collection.upsert(["_id": "watched", "n": 0])
    let writes = quick ? 50 : 1_000
    let latencies = try runBlocking { () -> [Double] in
      let (arrivals, arrived) = AsyncStream.makeStream(of: (Int64, UInt64).self)
      let observer = Task {
        for try await result in collection.observeDocument("watched") {
          arrived.yield(
            (result.value?["n"]?.int64Value ?? -1, DispatchTime.now().uptimeNanoseconds))
        }
      }
      defer { observer.cancel() }
      var received = arrivals.makeAsyncIterator()
      _ = await received.next()  // the current value
      var latencies: [Double] = []
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
      return latencies.sorted()
    }
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
    // were timed: the plain imports, timed last, took 2-3 s against 0.9 s).
    let lines = quick ? Array(people.prefix(2_000)) : people
    let runs = quick ? 1 : 3
    var observers: [Task<Void, any Error>] = []
    func stopObservers() throws {
      let running = observers
      observers = []
      for observer in running { observer.cancel() }
      try runBlocking {
        for observer in running { _ = await observer.result }
      }
    }
    defer { try? stopObservers() }
    let observed = try medianOfWrites(
      repetitions: runs,
      prepare: { run -> String in
        let name = "live-import-\(run)"
        let target = database.collection(name)
        let ready = Ready(count: 100)
        observers = (0..<100).map { number in
          Task {
            let query = try FindQuery(matching: Field("age") > number % 90)
            for try await _ in target.observeCount(query) { ready.arrive() }
          }
        }
        ready.wait()
        return name
      }
    ) { name in
      try load(name, lines)
    } cleanUp: {
      try stopObservers()
    }
    let plain = try medianOfWrites(repetitions: runs, prepare: { "live-plain-\($0)" }) { name in
      try load(name, lines)
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
  private let remaining: Locked<Int>
  private let done = DispatchSemaphore(value: 0)

  init(count: Int) { remaining = Locked(count) }

  func arrive() {
    let last = remaining.withLock { count -> Bool in
      count -= 1
      return count == 0
    }
    if last { done.signal() }
  }

  func wait() { done.wait() }
}
