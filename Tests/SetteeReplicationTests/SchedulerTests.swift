import Foundation
import Settee
import SetteeCore
import SetteeReplication
import SetteeTestSupport
import Testing

/// The scheduler (couch_replicator_scheduler's rules): at most `maxJobs` run, the others
/// wait in the order they came; continuous jobs take turns while others wait; a job that
/// fails and restarts waits longer after each failure; a retrying job gives its place up.
@Suite("Replication scheduler")
struct SchedulerTests {
  let directory = TemporaryDirectory()

  /// A file's collection holding `count` documents.
  private func source(_ name: String, _ count: Int) async throws -> DocumentCollection {
    let collection = try directory.replica(name + ".db", "notes")
    try await collection.putAll((0..<count).map { ["_id": .string("\(name)-\($0)")] })
    return collection
  }

  private func replicator(
    _ source: DocumentCollection, to target: ReplicationEndpoint, continuous: Bool = false,
    retries: Int = 5
  ) throws -> Replicator {
    try Replicator(
      ReplicationConfiguration(
        source: .collection(source), target: target, continuous: continuous,
        createTarget: true, pollTimeout: .milliseconds(200), maxRetryDelay: .milliseconds(50),
        retries: retries))
  }

  private static let nowhere = URL(string: "http://127.0.0.1:9/nowhere")!

  @Test func backoffDoublesUpToItsLimit() {
    let limits = ReplicationScheduler.Limits()
    #expect(limits.maxJobs == 500 && limits.maxChurn == 20 && limits.interval == .seconds(60))
    #expect(limits.backoff(1) == .seconds(30) && limits.backoff(2) == .seconds(60))
    #expect(limits.backoff(11) == .seconds(30 * 1_024))
    #expect(limits.backoff(40) == .seconds(30 * 1_024), "8.5 hours at most")
  }

  /// One place: three one-shot jobs run one after the other, in the order they came,
  /// and each copies its whole source.
  @Test func aLimitKeepsJobsWaitingInOrder() async throws {
    let scheduler = ReplicationScheduler(limits: .init(maxJobs: 1))
    let order = Locked<[String]>([])
    let mostRunning = Locked(0)
    var targets: [DocumentCollection] = []
    for name in ["a", "b", "c"] {
      let target = try directory.replica(name + "-copy.db", "notes")
      targets.append(target)
      let replicator = try replicator(try await source(name, 300), to: .collection(target))
      #expect(
        scheduler.add(replicator, id: name) { progress in
          order.withLock { $0.append("\(name):\(progress.state.rawValue)") }
        })
      let running = scheduler.jobs.filter { $0.state == .running }.count
      mostRunning.withLock { $0 = max($0, running) }
    }
    let done = await waitUntil(300) {
      let running = scheduler.jobs.filter { $0.state == .running }.count
      mostRunning.withLock { $0 = max($0, running) }
      return order.withLock { $0.count } == 3
    }
    #expect(done)
    #expect(order.withLock { $0 } == ["a:completed", "b:completed", "c:completed"])
    #expect(mostRunning.withLock { $0 } == 1)
    for target in targets { #expect(try await target.count() == 300) }
    #expect(scheduler.jobs.isEmpty)
  }

  /// One place, two continuous jobs: each interval the one that has run longest is
  /// stopped and the waiting one runs, so both follow their sources.
  @Test func continuousJobsTakeTurns() async throws {
    let scheduler = ReplicationScheduler(
      limits: .init(maxJobs: 1, interval: .milliseconds(300)))
    let first = try directory.replica("turn-1-copy.db", "notes")
    let second = try directory.replica("turn-2-copy.db", "notes")
    let firstSource = try await source("turn-1", 50)
    let secondSource = try await source("turn-2", 50)
    scheduler.add(
      try replicator(firstSource, to: .collection(first), continuous: true), id: "one")
    scheduler.add(
      try replicator(secondSource, to: .collection(second), continuous: true), id: "two")
    #expect(scheduler.job("two")?.state == .pending)
    let both = try await waitUntil(300) {
      let counts = (try await first.count(), try await second.count())
      return counts == (50, 50)
    }
    #expect(both, "the waiting job ran in its turn")
    // Both keep following while they take turns.
    try await firstSource.put(["_id": "later-1"])
    try await secondSource.put(["_id": "later-2"])
    let followed = try await waitUntil(300) {
      let found = (try await first.get("later-1"), try await second.get("later-2"))
      return found.0 != nil && found.1 != nil
    }
    #expect(followed)
    #expect(scheduler.jobs.filter { $0.state == .running }.count <= 1)
    #expect(scheduler.jobs.count == 2)
    scheduler.stopAll()
    #expect(await waitUntil(300) { scheduler.jobs.isEmpty })
  }

  /// A job that fails and restarts after failures crashes, waits, runs again, and waits
  /// twice as long after each consecutive failure; cancelled, it ends as stopped.
  @Test func aFailingJobWaitsLongerEachTime() async throws {
    let scheduler = ReplicationScheduler(
      limits: .init(crashBackoff: .milliseconds(100), healthThreshold: .seconds(60)))
    let ended = Locked<ReplicationProgress?>(nil)
    let started = ContinuousClock.now
    scheduler.add(
      try replicator(try await source("failing", 1), to: .url(Self.nowhere), retries: 0),
      id: "failing", restartsAfterFailure: true
    ) { last in ended.withLock { $0 = last } }
    #expect(await waitUntil(300) { (scheduler.job("failing")?.crashes ?? 0) >= 3 })
    // Waits of 100 and 200 ms came between the three failures.
    #expect(ContinuousClock.now - started >= .milliseconds(300))
    let job = try #require(scheduler.job("failing"))
    #expect(job.progress.lastError?.contains("127.0.0.1:9") == true)
    #expect(ended.withLock { $0 } == nil, "it has not ended")
    await scheduler.cancelAndWait("failing")
    #expect(await waitUntil(300) { ended.withLock { $0 } != nil })
    #expect(ended.withLock { $0?.state } == .stopped)
    #expect(scheduler.job("failing") == nil)
  }

  /// A one-shot job that does not restart ends failed, and `run` throws its error.
  @Test func aOneShotFailureEndsIt() async throws {
    let scheduler = ReplicationScheduler()
    let replicator = try replicator(
      try await source("once", 1), to: .url(Self.nowhere), retries: 0)
    await #expect(throws: ReplicationError.self) {
      _ = try await scheduler.run(replicator, id: "once")
    }
    #expect(scheduler.jobs.isEmpty)
  }

  /// One place taken by a continuous job whose target is down: a job that comes waits only
  /// until the retrying one gives its place up, not for ever.
  @Test func aRetryingJobGivesItsPlaceUp() async throws {
    let scheduler = ReplicationScheduler(
      limits: .init(maxJobs: 1, interval: .seconds(3_600), crashBackoff: .seconds(3_600)))
    scheduler.add(
      try replicator(try await source("down", 1), to: .url(Self.nowhere), continuous: true),
      id: "down")
    #expect(await waitUntil(300) { scheduler.job("down")?.progress.state == .retrying })
    let target = try directory.replica("up-copy.db", "notes")
    let progress = try await scheduler.run(
      try replicator(try await source("up", 20), to: .collection(target)), id: "up")
    #expect(progress?.state == .completed)
    #expect(try await target.count() == 20)
    let down = try #require(scheduler.job("down"))
    #expect(down.state == .crashing && down.crashes == 1)
    scheduler.stopAll()
  }

  /// A waiting job cancelled never runs; an id held already is not added again.
  @Test func aWaitingJobCancelledNeverRuns() async throws {
    let scheduler = ReplicationScheduler(limits: .init(maxJobs: 1))
    let target = try directory.replica("never-copy.db", "notes")
    let busy = try await source("busy", 1)
    let busyCopy = try directory.replica("busy-copy.db", "notes")
    #expect(
      scheduler.add(
        try replicator(busy, to: .collection(busyCopy), continuous: true), id: "busy"))
    #expect(
      !scheduler.add(
        try replicator(busy, to: .collection(busyCopy), continuous: true), id: "busy"))
    let ended = Locked<ReplicationProgress.State?>(nil)
    scheduler.add(try replicator(try await source("later", 5), to: .collection(target)), id: "w")
    {
      last in ended.withLock { $0 = last.state }
    }
    #expect(scheduler.job("w")?.state == .pending)
    #expect(scheduler.cancel("w"))
    #expect(ended.withLock { $0 } == .stopped)
    #expect(try await target.count() == 0)
    #expect(!scheduler.cancel("w"))
    scheduler.stopAll()
  }
}
