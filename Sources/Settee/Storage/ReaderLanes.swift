import Dispatch
import SetteeCore

/// The threads on which the async forms read (``Database/withConnection(_:_:)``): one serial
/// queue per reader connection, each the executor of a ``ReaderLane`` actor.
///
/// GRDB's async read hops from the task to the pool's semaphore queue, back to the task's
/// executor, to the reader's queue and back: four thread switches, which were half the time
/// of a server's `GET /{db}/{id}`. A lane hops once each way: the task moves onto the lane's
/// queue, which takes a reader from the same GRDB pool with its blocking call (a lane is no
/// cooperative thread; with as many lanes as readers, it waits only while the blocking API
/// holds readers too), runs the operation there, and comes back.
final class ReaderLanes: Sendable {
  private let lanes: [ReaderLane]
  /// How many operations run or wait on each lane. A lock, not Synchronization's `Atomic`,
  /// which needs macOS 15 and iOS 18, above the platforms Settee declares (issue 45); one
  /// lock for all lanes, so that choosing a lane and counting it is one step.
  private let loads: Locked<[Int]>

  init(count: Int) {
    lanes = (0..<max(1, count)).map { ReaderLane(label: "settee.reader.\($0)") }
    loads = Locked([Int](repeating: 0, count: lanes.count))
  }

  /// Runs `operation` on the least busy lane (the first idle one), inside the calling task
  /// (so that the task's cancellation is seen by the operation's statements).
  func run<T: Sendable>(_ operation: @Sendable () throws -> T) async throws -> T {
    let chosen = choose()
    defer { loads.withLock { $0[chosen] -= 1 } }
    return try await lanes[chosen].run(operation)
  }

  /// Starts `operation` at once on the least busy lane, for a blocking caller that goes on
  /// with other work and then waits for its result (``BackgroundWork/wait()``): a view's
  /// catch-up maps its next slice there while the writer stores the slice before. The lane
  /// counts as busy until the operation ends, so the async reads choose others meanwhile.
  func start<T: Sendable>(_ operation: @escaping @Sendable () throws -> T) -> BackgroundWork<T> {
    let chosen = choose()
    return BackgroundWork(on: lanes[chosen].queue) { [loads] in
      defer { loads.withLock { $0[chosen] -= 1 } }
      return try operation()
    }
  }

  /// The least busy lane (the first idle one), counted as one operation busier.
  private func choose() -> Int {
    loads.withLock { loads -> Int in
      var chosen = 0
      for position in loads.indices {
        if loads[position] == 0 {
          chosen = position
          break
        }
        if loads[position] < loads[chosen] { chosen = position }
      }
      loads[chosen] += 1
      return chosen
    }
  }
}

/// One of ``ReaderLanes``: an actor whose executor is its own serial dispatch queue.
actor ReaderLane {
  private nonisolated let executor: QueueExecutor
  /// The lane's queue, which runs the actor's jobs and the work ``ReaderLanes/start(_:)``
  /// puts on it directly (which touches no state of the actor), one at a time.
  nonisolated let queue: DispatchQueue

  init(label: String) {
    queue = DispatchQueue(label: label)
    executor = QueueExecutor(queue: queue)
  }

  nonisolated var unownedExecutor: UnownedSerialExecutor {
    executor.asUnownedSerialExecutor()
  }

  func run<T: Sendable>(_ operation: @Sendable () throws -> T) throws -> T {
    try Task.checkCancellation()
    return try operation()
  }
}

/// A serial executor that runs its jobs on a dispatch queue.
private final class QueueExecutor: SerialExecutor, @unchecked Sendable {
  private let queue: DispatchQueue

  init(queue: DispatchQueue) { self.queue = queue }

  func enqueue(_ job: UnownedJob) {
    queue.async { job.runSynchronously(on: self.asUnownedSerialExecutor()) }
  }

  func asUnownedSerialExecutor() -> UnownedSerialExecutor {
    UnownedSerialExecutor(ordinary: self)
  }

  func checkIsolated() {
    dispatchPrecondition(condition: .onQueue(queue))
  }
}
