import Foundation
import GRDB
import SetteeCore

/// Tells observers which collections changed: after every commit made through its
/// `Database`, and, while anything observes a file, every ``Database/Configuration/observationInterval``
/// for commits made elsewhere (other processes, other `Database` values).
///
/// A commit shows in `collections.last_seq`, which every document write raises: the
/// monitor reads that small table (one statement) and compares it with what it saw last.
/// GRDB's `DatabaseRegionObservation` sees only commits made through the same
/// `DatabasePool`, so it cannot tell about other processes; and the per-collection
/// sequence numbers let a query wake only for its own collection.
final class ChangeMonitor: Sendable {
  private struct Subscriber {
    let collection: [UInt8]
    let signal: AsyncStream<Void>.Continuation
    /// When the last change was signalled (uptime nanoseconds).
    var lastSignal: UInt64 = 0
    /// Whether two changes came within ``ChangeMonitor/burstGap`` of each other since the
    /// observer last asked.
    var burst = false
    /// Changes signalled since the observer last asked.
    var pending = 0
  }

  /// Changes closer together than this (in nanoseconds) make a burst.
  static let burstGap: UInt64 = 10_000_000

  private struct State {
    var subscribers: [Int: Subscriber] = [:]
    var nextID = 0
    /// Every collection's sequence number when last read; `nil` until a first observer
    /// has read them (``ready()``), and again once the last observer has left.
    var sequences: [[UInt8]: Int64]?
    var timer: DispatchSourceTimer?
    var checkPending = false
  }

  private let state = Locked(State())
  private let queue = DispatchQueue(label: "settee.live-changes")
  private let writer = Locked<(any DatabaseWriter)?>(nil)
  private let interval: Double
  private let pollsOtherWriters: Bool

  init(interval: Double, pollsOtherWriters: Bool) {
    self.interval = max(interval, 0.001)
    self.pollsOtherWriters = pollsOtherWriters
  }

  /// The connection to read sequence numbers through (set once the database is open).
  func attach(_ writer: any DatabaseWriter) { self.writer.withLock { $0 = writer } }

  private func readSequences() throws -> [[UInt8]: Int64] {
    guard let writer = writer.withLock({ $0 }) else { return [:] }
    return try writer.read(Self.sequences)
  }

  private static func sequences(_ db: GRDB.Database) throws -> [[UInt8]: Int64] {
    var sequences: [[UInt8]: Int64] = [:]
    for row in try Row.fetchAll(db.cachedStatement(sql: "SELECT name, last_seq FROM collections"))
    {
      sequences[Array((try row.value(0) as String).utf8)] = try row.value(1)
    }
    return sequences
  }

  /// Reads the sequence numbers changes are told against, if no observer has yet: what an
  /// observer awaits before its first read, so that a commit after that read is always
  /// signalled. An async read: it holds no thread (it was a blocking read in
  /// ``subscribe(collection:)``, reached from async code).
  func ready() async {
    guard state.withLock({ $0.sequences == nil }),
      let writer = writer.withLock({ $0 }),
      let sequences = try? await writer.read(Self.sequences)
    else { return }
    state.withLock { state in
      if state.sequences == nil && !state.subscribers.isEmpty { state.sequences = sequences }
    }
  }

  /// How many observers are subscribed (for tests: none is left once they end).
  var observerCount: Int { state.withLock { $0.subscribers.count } }

  /// A signal for every change of `collection` from now on (coalesced: at most one
  /// pending), once ``ready()`` has been awaited, and the subscription's id for
  /// ``unsubscribe(_:)``.
  func subscribe(collection: String) -> (id: Int, changes: AsyncStream<Void>) {
    let (stream, continuation) = AsyncStream.makeStream(
      of: Void.self, bufferingPolicy: .bufferingNewest(1))
    let id = state.withLock { state in
      let id = state.nextID
      state.nextID += 1
      state.subscribers[id] = Subscriber(collection: Array(collection.utf8), signal: continuation)
      if state.timer == nil && pollsOtherWriters { state.timer = makeTimer() }
      return id
    }
    return (id, stream)
  }

  /// Ends a subscription; the last one stops the polling.
  func unsubscribe(_ id: Int) {
    let (continuation, timer) = state.withLock { state in
      let removed = state.subscribers.removeValue(forKey: id)?.signal
      var timer: DispatchSourceTimer? = nil
      if state.subscribers.isEmpty {
        timer = state.timer
        state.timer = nil
        state.sequences = nil
      }
      return (removed, timer)
    }
    continuation?.finish()
    timer?.cancel()
  }

  /// Whether the subscription's changes came in a burst since it last asked (and forget
  /// it): two of them within ``burstGap``, or more than one while the observer was busy
  /// with its last result.
  func takeBurst(_ id: Int) -> Bool {
    state.withLock { state in
      guard let subscriber = state.subscribers[id] else { return false }
      state.subscribers[id]?.burst = false
      state.subscribers[id]?.pending = 0
      return subscriber.burst || subscriber.pending > 1
    }
  }

  /// Called after a commit through this `Database`: checks soon, off the writer's thread.
  func didCommit() {
    let schedule = state.withLock { state in
      guard !state.subscribers.isEmpty, !state.checkPending else { return false }
      state.checkPending = true
      return true
    }
    if schedule { queue.async { self.check() } }
  }

  private func makeTimer() -> DispatchSourceTimer {
    let timer = DispatchSource.makeTimerSource(queue: queue)
    timer.schedule(deadline: .now() + interval, repeating: interval, leeway: .milliseconds(5))
    timer.setEventHandler { [weak self] in self?.check() }
    timer.resume()
    return timer
  }

  /// Reads every collection's sequence number and signals the observers of those that
  /// moved.
  private func check() {
    state.withLock { $0.checkPending = false }
    guard let sequences = try? readSequences() else { return }
    let now = DispatchTime.now().uptimeNanoseconds
    let signals = state.withLock { state -> [AsyncStream<Void>.Continuation] in
      // No observer has read yet (each awaits ready() first): these are the ones to
      // compare with, and nothing is signalled.
      guard let seen = state.sequences else {
        if !state.subscribers.isEmpty { state.sequences = sequences }
        return []
      }
      let changed = Set(sequences.compactMap { name, seq in seen[name] == seq ? nil : name })
      state.sequences = sequences
      var signals: [AsyncStream<Void>.Continuation] = []
      for (id, subscriber) in state.subscribers where changed.contains(subscriber.collection) {
        if subscriber.lastSignal != 0 && now - subscriber.lastSignal < Self.burstGap {
          state.subscribers[id]?.burst = true
        }
        state.subscribers[id]?.lastSignal = now
        state.subscribers[id]?.pending += 1
        signals.append(subscriber.signal)
      }
      return signals
    }
    for signal in signals { signal.yield() }
  }
}
