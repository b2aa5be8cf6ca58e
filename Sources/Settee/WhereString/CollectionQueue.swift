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

  init() {}

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

/// The serial queues that order each collection's operations (seed 003): one per
/// collection name, made on first use.
final class CollectionQueues: Sendable {
  private let queues = Locked<[[UInt8]: DispatchQueue]>([:])
  /// Set on each queue to itself, so a wait from inside one of its operations can tell.
  private static let key = DispatchSpecificKey<ObjectIdentifier>()

  func queue(_ name: String) -> DispatchQueue {
    queues.withLock { queues in
      let key = Array(name.utf8)
      if let queue = queues[key] { return queue }
      let queue = DispatchQueue(label: "settee.collection", qos: .userInitiated)
      queue.setSpecific(key: Self.key, value: ObjectIdentifier(queue))
      queues[key] = queue
      return queue
    }
  }

  var all: [DispatchQueue] { queues.withLock { Array($0.values) } }

  /// Whether the calling code is an operation running on `queue`.
  static func isRunning(on queue: DispatchQueue) -> Bool {
    DispatchQueue.getSpecific(key: key) == ObjectIdentifier(queue)
  }

  /// Blocks until everything submitted to `queues` so far has run (at once for a queue
  /// whose operation is the caller: what came before it has run).
  static func waitForAll(_ queues: [DispatchQueue]) {
    for queue in queues where !isRunning(on: queue) { queue.sync {} }
  }

  /// Waits, without blocking a thread, until everything submitted to `queues` so far
  /// has run.
  static func waitForAll(_ queues: [DispatchQueue]) async {
    for queue in queues where !isRunning(on: queue) {
      await withCheckedContinuation { continuation in
        queue.async { continuation.resume() }
      }
    }
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
    let pending = PendingOperation<T>()
    let collection = self
    database.collectionQueues.queue(name).async {
      pending.finish(Result { try operation(collection) })
    }
    return pending
  }

  /// Runs `operation` on the collection's queue, after everything submitted before it.
  func inOrder<T: Sendable>(_ operation: @escaping @Sendable (DocumentCollection) throws -> T)
    async throws -> T
  {
    try await enqueue(operation).value
  }

  /// Waits until every operation submitted to the collection so far (its `where` face's
  /// `async` calls and ``enqueue(_:)``) has run.
  public func waitForPendingOperations() async {
    await CollectionQueues.waitForAll([database.collectionQueues.queue(name)])
  }

  /// Blocks until every operation submitted to the collection so far has run (at once
  /// when called from one of them).
  public func waitForPendingOperations() {
    CollectionQueues.waitForAll([database.collectionQueues.queue(name)])
  }
}

extension Database {
  /// Waits until every operation submitted so far to any collection's queue has run.
  public func waitForPendingOperations() async {
    await CollectionQueues.waitForAll(collectionQueues.all)
  }

  /// Blocks until every operation submitted so far to any collection's queue has run.
  public func waitForPendingOperations() {
    CollectionQueues.waitForAll(collectionQueues.all)
  }
}
