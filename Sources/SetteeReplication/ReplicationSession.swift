import Foundation
import Settee
import SetteeCore

/// One session of a replication, as couch_replicator_scheduler_job runs one: the peers
/// opened (the target made when asked), the id made, the checkpoints read, then the
/// source's changes through ``ReplicationWorker``'s stages until the source has no more
/// (one-shot) or until cancelled (continuous), checkpointed on the way.
struct ReplicationSession {
  let configuration: ReplicationConfiguration
  let source: any ReplicationPeer
  let target: any ReplicationPeer
  let worker: ReplicationWorker

  init(
    _ configuration: ReplicationConfiguration, source: any ReplicationPeer,
    target: any ReplicationPeer
  ) {
    self.configuration = configuration
    self.source = source
    self.target = target
    worker = ReplicationWorker(configuration: configuration, source: source, target: target)
  }

  /// Runs the session, reporting progress after each batch written and at each change of
  /// state.
  func run(
    _ progress: inout ReplicationProgress, _ report: @Sendable (ReplicationProgress) -> Void
  ) async throws {
    progress.state = .starting
    report(progress)
    try await openDatabases()
    let replicationID = try await ReplicationID.make(
      source: source, target: target, configuration)
    var checkpoints = try await Checkpointer(
      source: source, target: target, replicationID: replicationID,
      sessionID: Hex.string(ofDigest: (0..<16).map { _ in UInt8.random(in: 0...255) }),
      configuration: configuration)
    progress = ReplicationProgress(
      state: .running, replicationID: replicationID, sessionID: checkpoints.sessionID,
      startSequence: checkpoints.since, lastSequence: checkpoints.since)
    if case .documentIDs = configuration.filter { progress.byDocumentIDs = true }
    report(progress)
    do {
      try await pipeline(&progress, &checkpoints, report)
    } catch {
      if Task.isCancelled {
        // Stopped (``Replicator/stop()``, SIGTERM): what was written is checkpointed, so
        // that the next run starts after it and the answer counts it. In a task of its
        // own: requests made in this cancelled one would fail at once.
        let (stopped, log) = (progress, checkpoints)
        let written = try? await Task {
          var (progress, log) = (stopped, log)
          try await log.write(&progress)
          return progress
        }.value
        if let written { progress = written }
      }
      throw error
    }
    try await checkpoints.write(&progress)
  }

  /// The changes until the source has no more (one-shot) or until cancelled, checkpointed
  /// on the way.
  private func pipeline(
    _ progress: inout ReplicationProgress, _ checkpoints: inout Checkpointer,
    _ report: @Sendable (ReplicationProgress) -> Void
  ) async throws {
    let bulkGetStart = source.bulkGetCounts
    // A four-stage pipeline: while batch N is written to the target, batch N+1 is read
    // from the source (`_bulk_get`), batch N+2's revisions are compared with the target's
    // (`_revs_diff`) and page N+3 of the changes feed is read. A document appears once in
    // a feed, so the stages never hold the same revision; the writes keep the feed's
    // order, and the sequence recorded is always that of a written batch. A page with no
    // rows is the end of the feed: nothing is read after it until it has passed every
    // stage.
    var caughtUp = false
    var page: ChangesPage? = try await worker.changes(since: progress.lastSequence, wait: nil)
    var compared: ReplicationWorker.Compared? = nil
    var fetched: ReplicationWorker.Fetched? = nil
    while true {
      try Task.checkCancellation()
      let (toCompare, toFetch) = (page, compared)
      async let pageNext: ChangesPage? =
        toCompare.map { !$0.rows.isEmpty } ?? false
        ? worker.changes(since: toCompare!.lastSeq, wait: nil) : nil
      async let comparedNext: ReplicationWorker.Compared? =
        toCompare == nil ? nil : worker.compare(toCompare!)
      async let fetchedNext: ReplicationWorker.Fetched? =
        toFetch == nil ? nil : worker.fetch(toFetch!)
      if let fetched {
        if fetched.page.rows.isEmpty {
          progress.lastSequence = fetched.page.lastSeq
          progress.pending = fetched.page.pending
        } else {
          caughtUp = false
          progress.state = .running
          progress.pending = fetched.page.pending
          fetched.count(into: &progress)
          let counts = source.bulkGetCounts
          progress.bulkGetDocs = counts.docs - bulkGetStart.docs
          progress.bulkGetAttempts = counts.attempts - bulkGetStart.attempts
          try await worker.write(fetched.documents, &progress)
          progress.lastSequence = fetched.page.lastSeq
          report(progress)
          if ContinuousClock.now - checkpoints.lastWritten >= configuration.checkpointInterval {
            try await checkpoints.write(&progress)
          }
        }
      }
      (page, compared, fetched) = try await (pageNext, comparedNext, fetchedNext)
      guard page == nil && compared == nil && fetched == nil else { continue }
      // The end of the feed has been written.
      guard configuration.continuous else { break }
      if !caughtUp {
        caughtUp = true
        progress.state = .idle
        try await checkpoints.write(&progress)
        report(progress)
      }
      page = try await worker.changes(
        since: progress.lastSequence, wait: configuration.pollTimeout)
    }
  }

  /// Checks that both databases exist, making the target when asked; what fails here is
  /// marked ``ReplicationError/whileOpening``.
  private func openDatabases() async throws {
    do {
      guard try await source.exists() else {
        throw ReplicationError(
          peer: source.label, status: 404, error: "not_found",
          reason: "the source database does not exist")
      }
      if try await !target.exists() {
        guard configuration.createTarget else {
          throw ReplicationError(
            peer: target.label, status: 404, error: "not_found",
            reason:
              "the target database does not exist (create it, or replicate with create_target)")
        }
        try await target.create()
      }
    } catch var error as ReplicationError {
      error.whileOpening = true
      throw error
    }
  }
}
