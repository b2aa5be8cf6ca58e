import Foundation
import Settee
import SetteeCore

/// Replicates by CouchDB's replication protocol between two peers, each a local collection
/// or a URL: one-shot or continuous, filtered by ids or a selector, resuming from the
/// checkpoints both peers keep.
///
/// ```swift
/// let replicator = try Replicator(ReplicationConfiguration(
///   source: .url(URL(string: "http://admin:secret@127.0.0.1:5984/notes")!),
///   target: .collection(db.collection("notes"))))
/// for await progress in replicator.start() {
///   print(progress.state, progress.docsWritten)
/// }
/// ```
public final class Replicator: Sendable {
  /// What it replicates, and how.
  public let configuration: ReplicationConfiguration
  private let source: any ReplicationPeer
  private let target: any ReplicationPeer
  private let running = Locked<(task: Task<ReplicationProgress, Never>?, stopped: Bool)>(
    (nil, false))
  /// The error a failed replication ended with, for ``run()`` to throw.
  private let failureBox = Locked<(any Error)?>(nil)

  /// A replicator for `configuration`; nothing happens before ``start()`` or ``run()``.
  ///
  /// - Throws: ``SetteeError`` with code `invalidArgument` for a URL that is not an
  ///   http(s) URL of a database, or a batch size below 1; `invalidQuery` for a selector
  ///   filter that is not a valid Mango selector.
  public init(_ configuration: ReplicationConfiguration) throws {
    guard configuration.batchSize >= 1 else {
      throw SetteeError(.invalidArgument, "a replication's batch size must be at least 1")
    }
    // Parsed once, here, so a bad selector fails before anything is read; a file source
    // filters with it (a server source is sent its JSON).
    var selector: Selector?
    if case .selector(let json) = configuration.filter {
      selector = try FindQuery(json: ["selector": .object(json)]).selector
    }
    self.configuration = configuration
    source = try Self.peer(configuration.source, configuration, selector: selector)
    target = try Self.peer(configuration.target, configuration, selector: nil)
  }

  private static func peer(
    _ endpoint: ReplicationEndpoint, _ configuration: ReplicationConfiguration,
    selector: Selector?
  )
    throws -> any ReplicationPeer
  {
    switch endpoint {
    case .collection(let collection): return LocalPeer(collection: collection, selector: selector)
    case .url(let url):
      return try HTTPPeer(
        url: url, requestTimeout: configuration.requestTimeout,
        usesBulkGet: configuration.useBulkGet)
    }
  }

  /// Starts the replication (once; later calls follow the same one) and reports its
  /// progress: after each batch, at each change of state, and at the end (``completed``,
  /// ``failed`` or ``stopped``), where the sequence ends.
  public func start() -> AsyncStream<ReplicationProgress> {
    let (stream, continuation) = AsyncStream.makeStream(
      of: ReplicationProgress.self, bufferingPolicy: .bufferingNewest(64))
    let task = running.withLock { running in
      if let task = running.task { return task }
      let started = Task { await self.replicate { continuation.yield($0) } }
      // Stopped before it started: it ends at once.
      if running.stopped { started.cancel() }
      running.task = started
      return started
    }
    Task {
      let final = await task.value
      continuation.yield(final)
      continuation.finish()
    }
    return stream
  }

  /// Stops the replication: a batch being written is finished or rolled back by the
  /// target as a whole, what was written is checkpointed, and the next run resumes from
  /// there. Stopped before ``start()``, it ends as soon as it starts.
  public func stop() {
    running.withLock { running in
      running.stopped = true
      running.task?.cancel()
    }
  }

  /// The error a failed replication ended with.
  var failure: (any Error)? { failureBox.withLock { $0 } }

  /// Runs the replication to its end (a continuous one until its task is cancelled or
  /// ``stop()`` is called) and returns the final progress.
  ///
  /// - Throws: ``ReplicationError`` (or the local peer's ``SetteeError``) when it fails.
  @discardableResult
  public func run() async throws -> ReplicationProgress {
    let stream = start()
    var last = ReplicationProgress()
    for await progress in stream { last = progress }
    if last.state == .failed, let failure { throw failure }
    return last
  }

  // MARK: - The job: sessions until done

  /// Sessions until done: a transient failure (or, continuous, any failure) waits and
  /// starts again from the checkpoints.
  private func replicate(_ report: @escaping @Sendable (ReplicationProgress) -> Void) async
    -> ReplicationProgress
  {
    var progress = ReplicationProgress()
    var failures = 0
    while true {
      if Task.isCancelled {
        progress.state = .stopped
        return progress
      }
      do {
        try await ReplicationSession(configuration, source: source, target: target)
          .run(&progress, report)
        progress.state = .completed
        return progress
      } catch is CancellationError {
        progress.state = .stopped
        return progress
      } catch {
        progress.lastError = "\(error)"
        let transient = (error as? ReplicationError)?.isTransient ?? false
        if Task.isCancelled {
          progress.state = .stopped
          return progress
        }
        // A session that made progress starts the count again.
        failures = progress.state == .running || progress.state == .idle ? 1 : failures + 1
        guard configuration.continuous || (transient && failures <= configuration.retries) else {
          progress.state = .failed
          failureBox.withLock { $0 = error }
          return progress
        }
        progress.state = .retrying
        report(progress)
        let delay = min(
          configuration.maxRetryDelay, .milliseconds(250) * (1 << min(failures - 1, 18)))
        do { try await Task.sleep(for: delay) } catch {
          progress.state = .stopped
          return progress
        }
      }
    }
  }

  /// The replication id: the checkpoints are `_local/<id>` on both peers
  /// (``ReplicationID``).
  public func replicationID() async throws -> String {
    try await ReplicationID.make(source: source, target: target, configuration)
  }
}
