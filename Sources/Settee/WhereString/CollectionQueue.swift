import Dispatch
import SetteeCore

/// An operation submitted to a collection's queue with
/// ``DocumentCollection/enqueue(_:)``: it runs after everything submitted to that
/// collection before it; `value` waits for its result.
public final class PendingOperation<T: Sendable>: Sendable {
  private struct State {
    var result: Result<T, any Error>?
    var waiting: [CheckedContinuation<T, any Error>] = []
  }
  private let state = Locked(State())
  /// The task that runs the operation.
  private let runner = Locked<Task<Void, Never>?>(nil)

  init() {}

  var task: Task<Void, Never>? {
    get { runner.withLock { $0 } }
    set { runner.withLock { $0 = newValue } }
  }

  /// Cancels the operation: one that has not started does not run (its value throws
  /// `CancellationError`); one that is running stops as a cancelled async call does.
  public func cancel() { task?.cancel() }

  /// The operation's result, once it has run.
  ///
  /// - Throws: what the operation threw.
  public var value: T {
    get async throws {
      try await withCheckedThrowingContinuation { continuation in
        let ready: Result<T, any Error>? = state.withLock { state in
          if let result = state.result { return result }
          state.waiting.append(continuation)
          return nil
        }
        if let ready { continuation.resume(with: ready) }
      }
    }
  }

  /// Whether the operation has run.
  public var isDone: Bool { state.withLock { $0.result != nil } }

  func finish(_ result: Result<T, any Error>) {
    let waiting = state.withLock { state in
      state.result = result
      defer { state.waiting = [] }
      return state.waiting
    }
    for continuation in waiting { continuation.resume(with: result) }
  }
}

/// The order of each collection's queued operations (seed 003): each operation runs after
/// the one submitted to the same collection before it has finished, on a database
/// connection (``Database/withConnection(_:_:)``): a waiting operation is a suspended task,
/// not a blocked thread.
final class CollectionQueues: Sendable {
  /// The task that runs each collection's last submitted operation, by collection name.
  private let tails = Locked<[[UInt8]: Task<Void, Never>]>([:])

  /// The collection whose queued operation the current task is running, if any.
  @TaskLocal static var running: [UInt8]?

  /// Submits `operation` to the queue of the collection named `name`.
  func submit<T: Sendable>(
    _ name: String, in database: Database, _ use: ConnectionUse,
    _ operation: @escaping @Sendable () throws -> T
  ) -> PendingOperation<T> {
    let pending = PendingOperation<T>()
    let key = Array(name.utf8)
    tails.withLock { tails in
      let previous = tails[key]
      let task = Task {
        await previous?.value
        let result: Result<T, any Error>
        do {
          result = .success(
            try await CollectionQueues.$running.withValue(key) {
              try await database.withConnection(use, operation)
            })
        } catch { result = .failure(error) }
        pending.finish(result)
      }
      pending.task = task
      tails[key] = task
    }
    return pending
  }

  /// The tasks of the last operations submitted so far: of the collection named `name`,
  /// or of every collection.
  func lastTasks(of name: String? = nil) -> [Task<Void, Never>] {
    tails.withLock { tails in
      guard let name else { return Array(tails.values) }
      return tails[Array(name.utf8)].map { [$0] } ?? []
    }
  }

  /// Blocks until `tasks` have finished; at once from inside a queued operation, which
  /// holds the writer connection that the operations it would wait for need (what came
  /// before it on its own queue has run).
  static func waitForAll(_ tasks: [Task<Void, Never>]) {
    guard !tasks.isEmpty, running == nil else { return }
    let done = DispatchSemaphore(value: 0)
    Task {
      for task in tasks { await task.value }
      done.signal()
    }
    done.wait()
  }
}

extension DocumentCollection {
  /// Submits an operation to the collection's queue and returns at once: operations
  /// submitted to one collection run one at a time, in the order they were submitted,
  /// whichever threads or tasks submit them. The `where` face's `async` calls go through
  /// the same queue.
  ///
  /// ```swift
  /// for user in users { _ = people.enqueue { try $0.insert(user) } }
  /// try await people.waitForPendingOperations()
  /// ```
  @discardableResult
  public func enqueue<T: Sendable>(
    _ operation: @escaping @Sendable (DocumentCollection) throws -> T
  ) -> PendingOperation<T> {
    let collection = self
    return database.collectionQueues.submit(name, in: database, .writing) {
      try operation(collection)
    }
  }

  /// Runs `operation` on the collection's queue, after everything submitted before it;
  /// cancelling the caller's task cancels it.
  func inOrder<T: Sendable>(
    _ use: ConnectionUse = .writing,
    _ operation: @escaping @Sendable (DocumentCollection) throws -> T
  ) async throws -> T {
    let collection = self
    let pending = database.collectionQueues.submit(name, in: database, use) {
      try operation(collection)
    }
    return try await withTaskCancellationHandler {
      try await pending.value
    } onCancel: {
      pending.cancel()
    }
  }

  /// Waits until every operation submitted to the collection so far (its `where` face's
  /// `async` calls and ``enqueue(_:)``) has run.
  public func waitForPendingOperations() async {
    for task in database.collectionQueues.lastTasks(of: name) { await task.value }
  }

  /// Blocks until every operation submitted to the collection so far has run (at once
  /// when called from one of them).
  ///
  /// Call it from synchronous code: the queue's operations are tasks, which need a thread
  /// of Swift's cooperative pool to go on, and a task that blocks one of those threads
  /// here holds back what it waits for (on a machine with one core, for good). Async code
  /// awaits the `async` form.
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func waitForPendingOperations() {
    CollectionQueues.waitForAll(database.collectionQueues.lastTasks(of: name))
  }
}

extension Database {
  /// Waits until every operation submitted so far to any collection's queue has run.
  public func waitForPendingOperations() async {
    for task in collectionQueues.lastTasks() { await task.value }
  }

  /// Blocks until every operation submitted so far to any collection's queue has run (at
  /// once when called from one of them, which holds the writer the others need).
  ///
  /// Call it from synchronous code; async code awaits the `async` form (see
  /// ``DocumentCollection/waitForPendingOperations()-93007``).
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func waitForPendingOperations() {
    CollectionQueues.waitForAll(collectionQueues.lastTasks())
  }
}
