import Foundation
import SetteeCore

/// Requests per second with many keep-alive connections at once, as issue 59 measured
/// CouchDB 3.5.0 on this machine (wrk, 16 connections, the same 100,000 seed-shaped
/// documents). Each connection is a thread of its own with a ``BenchClient``, so the
/// client's work shares the two cores with the server's, as wrk's did.
enum Throughput {
  /// Connections at once: wrk's 16 in issue 59's measurement.
  static let connections = 16

  /// CouchDB 3.5.0's requests per second on this machine (issue 59's run), by workload.
  enum CouchDB {
    static let getByID = 1_446.0
    static let indexedFind = 761.0
    /// `_bulk_docs` load of 100,000 documents in batches of 1,000, one client, seconds.
    static let bulkLoadOf100000 = 6.06
  }

  /// The seconds `requests` requests take over `connections` connections to `port`, each
  /// connection sending every `connections`-th request and checking each answer.
  static func time(
    port: Int, connections: Int = connections, requests: Int, what: String,
    _ request: @escaping @Sendable (Int) -> (method: String, path: String, body: [UInt8])
  ) throws -> Double {
    let failure = Locked<SetteeError?>(nil)
    let group = DispatchGroup()
    let start = DispatchTime.now().uptimeNanoseconds
    for connection in 0..<connections {
      group.enter()
      let thread = Thread {
        defer { group.leave() }
        do {
          var client = try BenchClient(port: port)
          var number = connection
          while number < requests {
            let (method, path, body) = request(number)
            let answer = try client.send(method, path, body: body)
            guard (200..<300).contains(answer.status), answer.body.count > 20 else {
              throw ServerBench.failed(what, answer)
            }
            number += connections
          }
        } catch {
          let reported = error as? SetteeError ?? SetteeError(.io, "\(what): \(error)")
          failure.withLock { if $0 == nil { $0 = reported } }
        }
      }
      thread.start()
    }
    group.wait()
    if let failed = failure.withLock({ $0 }) { throw failed }
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
  }
}
