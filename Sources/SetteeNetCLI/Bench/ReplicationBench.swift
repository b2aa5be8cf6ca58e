import Foundation
import SetteeCLI
import Settee
import SetteeCore
import SetteeReplication
import SetteeServer

/// `settee bench --replication`: issue 33's figures. Push and pull of the seed-shaped
/// documents between a local file and a `settee serve` database (HTTP on the remote side,
/// the servers in this process), and between two servers, each against `importDocuments`
/// of the same documents (the engine's write limit); a no-op replication of the up-to-date
/// pair; and a continuous replication's latency from a write to the target.
struct ReplicationBench {
  let count: Int
  let quick: Bool
  let directory: URL
  let log: @Sendable (String) -> Void

  func run() async throws -> [BenchResult] {
    var data = BenchData()
    let people = data.people(count)
    func file(_ name: String) throws -> Settee.Database {
      try Settee.Database(path: directory.appendingPathComponent(name).path)
    }
    log("importing \(count) documents (the baseline)…")
    let local = try file("local.db").collection("people")
    // Timed on a thread of its own, as the bench's synchronous workloads are.
    let importTime = try await onOwnThread {
      let start = DispatchTime.now().uptimeNanoseconds
      var iterator = people.makeIterator()
      var reader = JSONRecordReader(maxRecordBytes: 1 << 20) { iterator.next() }
      try local.importDocuments(from: &reader)
      return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    }

    let first = try file("served-a.db")
    let second = try file("served-b.db")
    var servers: [(Task<Void, any Error>, Int)] = []
    for database in [first, second] {
      let server = CouchServer(
        database: database, configuration: ServerConfiguration(port: 0, logLevel: .none))
      servers.append(try await ServerBench.listening { try await server.run(onListening: $0) })
    }
    defer { servers.forEach { $0.0.cancel() } }
    let ports = servers.map(\.1)
    let urlA = URL(string: "http://127.0.0.1:\(ports[0])/people")!
    let urlB = URL(string: "http://127.0.0.1:\(ports[1])/people")!

    func replicate(_ source: ReplicationEndpoint, _ target: ReplicationEndpoint) async throws
      -> ReplicationProgress
    {
      try await Replicator(
        ReplicationConfiguration(source: source, target: target, createTarget: true)
      ).run()
    }
    func check(_ progress: ReplicationProgress, _ what: String, written: Int) throws {
      guard progress.state == .completed, progress.docsWritten == written else {
        throw SetteeError(
          .storage,
          "\(what): \(progress.state), \(progress.docsWritten) of \(written) written, \(progress.lastError ?? "")"
        )
      }
    }
    var results: [BenchResult] = []
    let pulled = try file("pulled.db").collection("people")
    let copies: [(what: String, source: ReplicationEndpoint, target: ReplicationEndpoint)] = [
      ("push \(count) documents, file to settee serve", .collection(local), .url(urlA)),
      ("\(count) documents, settee serve to settee serve", .url(urlA), .url(urlB)),
      ("pull \(count) documents, settee serve to file", .url(urlB), .collection(pulled)),
    ]
    var progress = ReplicationProgress()
    for copy in copies {
      log(copy.what + "…")
      let time = try await timed { progress = try await replicate(copy.source, copy.target) }
      try check(progress, copy.what, written: count)
      results.append(
        BenchResult(
          name: copy.what + ", vs import", n: count, settee: time, baseline: importTime, target: 3))
    }
    guard try await pulled.count() == count, try await local.count() == count else {
      throw SetteeError(.storage, "the pulled collection does not hold every document")
    }

    log("no-op: an up-to-date pair…")
    let noop = try await timed { progress = try await replicate(.url(urlA), .url(urlB)) }
    try check(progress, "no-op", written: 0)
    results.append(
      BenchResult(
        name: "no-op replication of an up-to-date pair (\(count) documents)", n: 1,
        settee: noop, baseline: 0, target: nil, limit: 1))

    log("continuous: latency from a write on the source to the target…")
    let writes = quick ? 20 : 100
    let latencies = try await continuousLatencies(
      source: first.collection("people"), sourceURL: urlA, target: pulled, writes: writes)
    let sorted = latencies.sorted()
    results.append(
      BenchResult(
        name: "continuous: a write seen on the target, median", n: writes,
        settee: sorted[sorted.count / 2], baseline: 0, target: nil, limit: 0.1))
    results.append(
      BenchResult(
        name: "continuous: a write seen on the target, p99", n: writes,
        settee: sorted[min(sorted.count - 1, sorted.count * 99 / 100)], baseline: 0,
        target: nil))
    return results
  }

  /// Seconds `body` takes, once.
  private func timed(_ body: () async throws -> Void) async rethrows -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    try await body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
  }

  /// Seconds from each write on the source's file to its arrival in the target collection,
  /// a continuous replication pulling from the source's server.
  private func continuousLatencies(
    source: DocumentCollection, sourceURL: URL, target: DocumentCollection, writes: Int
  ) async throws -> [Double] {
    let replicator = try Replicator(
      ReplicationConfiguration(
        source: .url(sourceURL), target: .collection(target), continuous: true))
    let started = replicator.start()
    defer { replicator.stop() }
    for await progress in started where progress.state == .idle { break }
    var latencies: [Double] = []
    for number in 0..<writes {
      let since = try await target.lastSequence()
      let id = "latency-\(number)"
      let start = DispatchTime.now().uptimeNanoseconds
      try await source.put(["_id": .string(id), "n": .int(Int64(number))])
      let deadline = Date().addingTimeInterval(30)
      while try await target.get(id) == nil {
        guard Date() < deadline else {
          throw SetteeError(.storage, "a write did not reach the target within 30 s")
        }
        _ = try await target.waitForChanges(since: since, timeout: 1)
      }
      latencies.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
    }
    return latencies
  }
}
