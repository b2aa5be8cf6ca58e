import Foundation
import Settee
import SetteeCore

/// Runs many replications, as couch_replicator_scheduler does: at most ``Limits/maxJobs``
/// at once, the others pending in the order they came; every ``Limits/interval``, while
/// jobs wait, up to ``Limits/maxChurn`` of the continuous jobs that have run longest are
/// stopped (they resume from their checkpoints) to let waiting ones run. One-shot jobs run
/// to their end. A job that fails and restarts after failures (a `_replicator`
/// document's, a continuous one's) is `crashing`: it waits 30 s, then twice that after
/// each consecutive failure up to 2^10 times (8.5 hours), and a run longer than
/// ``Limits/healthThreshold`` counts as healthy again. A continuous job that is retrying
/// gives its place up to a waiting job the same way.
///
/// `settee serve` runs `POST /_replicate` and the `_replicator` database through one;
/// ``ReplicatorDatabase`` runs a file's `_replicator` documents through one anywhere.
public final class ReplicationScheduler: Sendable {
  /// CouchDB's `[replicator]` settings.
  public struct Limits: Sendable {
    /// How many jobs run at once (CouchDB's `max_jobs`, 500).
    public var maxJobs: Int
    /// How many running jobs are swapped for waiting ones at each interval (`max_churn`).
    public var maxChurn: Int
    /// How often jobs are swapped (`interval`, 60 s).
    public var interval: Duration
    /// The wait after a first failure, doubled after each consecutive one.
    public var crashBackoff: Duration
    /// How many times the wait doubles at most (CouchDB's 10: 8.5 hours).
    public var maxBackoffExponent: Int
    /// A run this long before it fails counts as healthy: the next wait is the first
    /// again (`health_threshold_sec`, 2 minutes).
    public var healthThreshold: Duration

    /// CouchDB's defaults, or the ones given.
    public init(
      maxJobs: Int = 500, maxChurn: Int = 20, interval: Duration = .seconds(60),
      crashBackoff: Duration = .seconds(30), maxBackoffExponent: Int = 10,
      healthThreshold: Duration = .seconds(120)
    ) {
      self.maxJobs = max(1, maxJobs)
      self.maxChurn = max(1, maxChurn)
      self.interval = interval
      self.crashBackoff = crashBackoff
      self.maxBackoffExponent = maxBackoffExponent
      self.healthThreshold = healthThreshold
    }

    /// The wait before a job that failed `crashes` times in a row runs again.
    public func backoff(_ crashes: Int) -> Duration {
      crashBackoff * (1 << min(max(crashes - 1, 0), maxBackoffExponent))
    }
  }

  /// One replication the scheduler holds.
  public struct Job: Sendable {
    /// Where a job is.
    public enum State: String, Sendable {
      /// Waiting for a place (CouchDB's `pending`).
      case pending
      /// Running (which includes retrying a failed request).
      case running
      /// Failed; waiting to run again after its backoff (CouchDB's `crashing`).
      case crashing
    }

    /// The replication id.
    public let id: String
    /// What it replicates.
    public let configuration: ReplicationConfiguration
    /// How its source is named.
    public let sourceLabel: String
    /// How its target is named.
    public let targetLabel: String
    /// The `_replicator` document it runs for, if one.
    public let documentID: String?
    /// When it was added.
    public let added: Date
    /// Where it is.
    public internal(set) var state = State.pending
    /// The current or last run's progress.
    public internal(set) var progress = ReplicationProgress()
    /// When the progress last changed.
    public internal(set) var updated: Date
    /// Consecutive failures.
    public internal(set) var crashes = 0
    /// Whether a failure makes it crash and run again, instead of ending it.
    public let restartsAfterFailure: Bool

    var replicator: Replicator?
    var task: Task<Void, Never>?
    var runStarted = ContinuousClock.now
    var runsAfter = ContinuousClock.now
    /// The state it takes when its replicator stops: `pending` when the scheduler swapped
    /// it for a waiting job, `crashing` when it gave its place up while retrying.
    var afterStop: State?
    /// Cancelled: it ends when its replicator stops.
    var cancelled = false
    let ended: @Sendable (ReplicationProgress) -> Void
  }

  private struct State {
    var jobs: [String: Job] = [:]
    /// The waiting jobs, first come first.
    var queue: [String] = []
    var lastSwap = ContinuousClock.now
  }

  /// How many jobs run and how failing ones wait.
  public let limits: Limits
  private let state = Locked(State())
  private let ticker = Locked<Task<Void, Never>?>(nil)

  /// A scheduler with CouchDB's limits, or the ones given.
  public init(limits: Limits = Limits()) {
    self.limits = limits
  }

  deinit { ticker.withLock { $0?.cancel() } }

  /// Every job, oldest first.
  public var jobs: [Job] {
    state.withLock { Array($0.jobs.values) }.sorted { $0.added < $1.added }
  }

  /// The job `id`, while the scheduler holds it.
  public func job(_ id: String) -> Job? { state.withLock { $0.jobs[id] } }

  /// Adds `replicator`'s replication under `id` (``Replicator/replicationID()``) unless a
  /// job of that id is held already (`false`): it runs now if there is a place, otherwise
  /// when one frees. `ended` is called once with its last progress when it ends
  /// (completed, failed without restarting, or stopped).
  ///
  /// - Parameter restartsAfterFailure: whether a failure makes it crash and run again
  ///   after a backoff; by default a `_replicator` document's job and a continuous one do.
  @discardableResult
  public func add(
    _ replicator: Replicator, id: String, sourceLabel: String? = nil,
    targetLabel: String? = nil, documentID: String? = nil, restartsAfterFailure: Bool? = nil,
    ended: @escaping @Sendable (ReplicationProgress) -> Void = { _ in }
  ) -> Bool {
    let configuration = replicator.configuration
    var job = Job(
      id: id, configuration: configuration,
      sourceLabel: sourceLabel ?? configuration.source.label,
      targetLabel: targetLabel ?? configuration.target.label, documentID: documentID,
      added: Date(), updated: Date(),
      restartsAfterFailure: restartsAfterFailure ?? (documentID != nil || configuration.continuous),
      ended: ended)
    job.replicator = replicator
    let added = state.withLock { state in
      guard state.jobs[id] == nil else { return false }
      state.jobs[id] = job
      state.queue.append(id)
      return true
    }
    if added {
      reschedule()
      startTicker()
    }
    return added
  }

  /// Runs a one-shot replication through the scheduler (waiting for a place when every
  /// place is taken) and returns its final progress; `nil` when a job of that id is held
  /// already.
  ///
  /// - Throws: what ``Replicator/run()`` throws when it fails.
  public func run(
    _ replicator: Replicator, id: String, sourceLabel: String? = nil, targetLabel: String? = nil
  ) async throws -> ReplicationProgress? {
    let (stream, continuation) = AsyncStream.makeStream(of: ReplicationProgress.self)
    guard
      add(
        replicator, id: id, sourceLabel: sourceLabel, targetLabel: targetLabel,
        restartsAfterFailure: false,
        ended: {
          continuation.yield($0)
          continuation.finish()
        })
    else { return nil }
    var last = ReplicationProgress()
    for await progress in stream { last = progress }
    if last.state == .failed, let failure = replicator.failure { throw failure }
    return last
  }

  /// Stops the job `id` and forgets it; `false` when there is none.
  @discardableResult
  public func cancel(_ id: String) -> Bool {
    let (found, stopping) = state.withLock { state -> (Job?, Bool) in
      guard var job = state.jobs[id] else { return (nil, false) }
      if job.state == .running {
        job.cancelled = true
        state.jobs[id] = job
        return (job, true)
      }
      state.jobs[id] = nil
      state.queue.removeAll { $0 == id }
      return (job, false)
    }
    guard let job = found else { return false }
    if stopping {
      job.replicator?.stop()
    } else {
      var progress = job.progress
      progress.state = .stopped
      job.ended(progress)
      reschedule()
    }
    return true
  }

  /// Stops the job `id` and waits until it has ended, so that the same replication can be
  /// added again at once.
  public func cancelAndWait(_ id: String) async {
    guard let job = job(id), cancel(id) else { return }
    if let task = job.task ?? self.job(id)?.task {
      await task.value
    } else {
      // Its task was being stored: wait for the scheduler to let go of it (bounded).
      for _ in 0..<1_000 where self.job(id)?.added == job.added {
        try? await Task.sleep(for: .milliseconds(10))
      }
    }
  }

  /// Stops every job (the server is stopping).
  public func stopAll() {
    ticker.withLock { $0?.cancel() }
    for id in state.withLock({ Array($0.jobs.keys) }) { cancel(id) }
  }

  // MARK: - Scheduling

  /// Starts waiting jobs while there are places, first come first; while jobs still wait
  /// and the interval has passed, swaps running continuous jobs for them.
  private func reschedule() {
    let now = ContinuousClock.now
    let (starting, stopping) = state.withLock { state -> ([Job], [Job]) in
      var running = state.jobs.values.filter { $0.state == .running }.count
      var starting: [Job] = []
      var waiting: [String] = []
      for id in state.queue {
        guard var job = state.jobs[id] else { continue }
        guard running < limits.maxJobs, job.runsAfter <= now else {
          waiting.append(id)
          continue
        }
        job.state = .running
        job.runStarted = now
        job.afterStop = nil
        if job.replicator == nil { job.replicator = try? Replicator(job.configuration) }
        state.jobs[id] = job
        starting.append(job)
        running += 1
      }
      state.queue = waiting
      var stopping: [Job] = []
      let ready = waiting.filter { state.jobs[$0].map { $0.runsAfter <= now } ?? false }
      if !ready.isEmpty, now - state.lastSwap >= limits.interval {
        state.lastSwap = now
        // The continuous jobs that have run longest, as many as wait (at most max_churn).
        let swapped = state.jobs.values
          .filter { $0.state == .running && $0.configuration.continuous && $0.task != nil }
          .sorted { $0.runStarted < $1.runStarted }
          .prefix(min(limits.maxChurn, ready.count))
        for job in swapped {
          state.jobs[job.id]?.afterStop = .pending
          stopping.append(job)
        }
      }
      return (starting, stopping)
    }
    for job in stopping { job.replicator?.stop() }
    for job in starting { launch(job) }
  }

  /// Runs a job's replicator and follows it to its end.
  private func launch(_ job: Job) {
    guard let replicator = job.replicator else {
      var failed = ReplicationProgress()
      failed.state = .failed
      failed.lastError = "the replication's configuration is no longer valid"
      return finish(job.id, failed)
    }
    let id = job.id
    let task = Task {
      var last = ReplicationProgress()
      for await progress in replicator.start() {
        last = progress
        let yields = state.withLock { state -> Bool in
          guard var job = state.jobs[id], job.replicator === replicator else { return false }
          job.progress = progress
          job.updated = Date()
          // Retrying while others wait: it gives its place up, as a crash.
          let yields =
            progress.state == .retrying && job.restartsAfterFailure && !job.cancelled
            && job.afterStop == nil && state.queue.contains { state.jobs[$0].map { $0.runsAfter <= .now } ?? false }
          if yields { job.afterStop = .crashing }
          state.jobs[id] = job
          return yields
        }
        if yields { replicator.stop() }
      }
      finish(id, last, replicator)
    }
    state.withLock { state in
      if state.jobs[id]?.replicator === replicator { state.jobs[id]?.task = task }
    }
  }

  /// A run ended: the job ends, waits again, or crashes.
  private func finish(_ id: String, _ last: ReplicationProgress, _ replicator: Replicator? = nil)
  {
    let now = ContinuousClock.now
    let ended = state.withLock { state -> Job? in
      guard var job = state.jobs[id], replicator == nil || job.replicator === replicator else {
        return nil
      }
      job.progress = last
      job.updated = Date()
      job.task = nil
      job.replicator = nil
      var next: Job.State? = nil
      switch last.state {
      case .stopped: next = job.cancelled ? nil : job.afterStop
      case .failed: next = job.restartsAfterFailure && !job.cancelled ? .crashing : nil
      default: next = nil
      }
      if next == .crashing {
        job.crashes = now - job.runStarted >= limits.healthThreshold ? 1 : job.crashes + 1
        job.runsAfter = now + limits.backoff(job.crashes)
      }
      guard let next else {
        state.jobs[id] = nil
        return job
      }
      job.state = next
      state.jobs[id] = job
      state.queue.append(id)
      return nil
    }
    ended?.ended(last)
    reschedule()
  }

  /// Looks again every second (or sooner, for short limits) for jobs whose wait is over
  /// and for the swap interval, while the scheduler holds jobs.
  private func startTicker() {
    ticker.withLock { ticker in
      guard ticker == nil else { return }
      let tick = min(.seconds(1), limits.interval / 2, limits.crashBackoff / 2)
      ticker = Task { [weak self] in
        while !Task.isCancelled {
          try? await Task.sleep(for: tick)
          guard let self else { return }
          self.reschedule()
        }
      }
    }
  }
}
