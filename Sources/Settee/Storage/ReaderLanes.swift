import Dispatch
import Synchronization

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

  init(count: Int) {
    lanes = (0..<max(1, count)).map { ReaderLane(label: "settee.reader.\($0)") }
  }

  /// Runs `operation` on the least busy lane, inside the calling task (so that the task's
  /// cancellation is seen by the operation's statements).
  func run<T: Sendable>(_ operation: @Sendable () throws -> T) async throws -> T {
    var chosen = lanes[0]
    var fewest = Int.max
    for lane in lanes {
      let waiting = lane.load.load(ordering: .relaxed)
      if waiting < fewest { (chosen, fewest) = (lane, waiting) }
      if waiting == 0 { break }
    }
    chosen.load.wrappingAdd(1, ordering: .relaxed)
    defer { chosen.load.wrappingSubtract(1, ordering: .relaxed) }
    return try await chosen.run(operation)
  }
}

/// One of ``ReaderLanes``: an actor whose executor is its own serial dispatch queue.
actor ReaderLane {
  /// How many operations run or wait on this lane.
  nonisolated let load = Atomic<Int>(0)
  private nonisolated let executor: QueueExecutor

  init(label: String) {
    executor = QueueExecutor(queue: DispatchQueue(label: label))
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
