import Foundation
import SetteeCore

/// One result of a query, with what it takes to tell whether it is still current (seed
/// 002's `stale`).
public struct LiveResult<Value: Sendable>: Sendable {
  /// The query's result.
  public let value: Value
  /// The collection's change sequence number the result was read at.
  public let sequence: Int64
  let source: LiveSource<Value>

  /// Whether running the query now would give another result: `false` at once when nothing
  /// was written to the collection since (one small read), else the query runs again and
  /// the results are compared, so writes that do not change this result leave it fresh.
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func isStale() throws -> Bool {
    if try source.currentSequence() == sequence { return false }
    return !source.same(try source.fetch().value, value)
  }

  /// Whether the result is stale, without blocking the caller's thread.
  public func isStale() async throws -> Bool {
    try await source.database.withConnection(.reading) { try self.isStale() }
  }
}

/// How a live query reads its result, and when two results are the same.
struct LiveSource<Value: Sendable>: Sendable {
  let database: Database
  let collection: String
  /// The result and the collection sequence number it was read at, read together.
  let fetch: @Sendable () throws -> (value: Value, sequence: Int64)
  let same: @Sendable (Value, Value) -> Bool

  func currentSequence() throws -> Int64 { try database.collection(collection).lastSequence() }

  func result(_ fetched: (value: Value, sequence: Int64)) -> LiveResult<Value> {
    LiveResult(value: fetched.value, sequence: fetched.sequence, source: self)
  }
}

/// A query whose results update themselves (seed 002's live queries): an `AsyncSequence`
/// whose first element is the current result and whose next ones come when a committed
/// write changed the result, from this `Database`, another one on the same file, or
/// another process.
///
/// ```swift
/// for try await result in people.observe(FindQuery(matching: Field("age") >= 18)) {
///   show(result.value)
/// }
/// ```
///
/// A write to another collection wakes nothing; a write to this collection that leaves the
/// result as it was yields nothing. Bursts are coalesced: the first change after a quiet
/// time comes at once, later ones in a burst at growing intervals (up to a second), and
/// the last element is always the final state. The query runs when the iteration asks for
/// its next element, so a slow consumer gets the newest result, not a queue of old ones.
/// Ending the iteration (a `break`, a cancelled task) ends the observation at once.
public struct LiveQuery<Value: Sendable>: AsyncSequence, Sendable {
  /// Each element: a result and its sequence number.
  public typealias Element = LiveResult<Value>
  let source: LiveSource<Value>

  /// The iterator: it holds the observation, which ends when it is released.
  public struct AsyncIterator: AsyncIteratorProtocol {
    let source: LiveSource<Value>
    let subscription: Subscription
    var signals: AsyncStream<Void>.AsyncIterator
    var last: (value: Value, sequence: Int64)? = nil
    var throttle = Throttle()

    /// The current result first, then each changed one; `nil` once the task is cancelled.
    public mutating func next() async throws -> LiveResult<Value>? {
      guard let previous = last else {
        await subscription.ready()
        let first = try await source.database.withConnection(.reading, source.fetch)
        last = first
        return source.result(first)
      }
      while true {
        guard await signals.next() != nil else { return nil }
        // Commits closer together than 10 ms since the last result are a burst, which the
        // throttle spaces out; a commit after a quiet time is answered at once.
        guard await throttle.wait(burst: subscription.takeBurst()) else { return nil }
        let fetched = try await source.database.withConnection(.reading, source.fetch)
        last = fetched
        if !source.same(fetched.value, previous.value) { return source.result(fetched) }
      }
    }
  }

  /// Starts observing.
  public func makeAsyncIterator() -> AsyncIterator {
    let subscription = Subscription(source.database.changeMonitor, collection: source.collection)
    return AsyncIterator(
      source: source, subscription: subscription,
      signals: subscription.changes.makeAsyncIterator())
  }
}

/// One observer's subscription to a collection's changes, ended when released.
final class Subscription: Sendable {
  let changes: AsyncStream<Void>
  private let id: Int
  private let monitor: ChangeMonitor

  init(_ monitor: ChangeMonitor, collection: String) {
    self.monitor = monitor
    (id, changes) = monitor.subscribe(collection: collection)
  }

  /// Whether the changes since the last call came in a burst.
  func takeBurst() -> Bool { monitor.takeBurst(id) }

  /// Awaited before the observer's first read: every commit after that read is signalled.
  func ready() async { await monitor.ready() }

  deinit { monitor.unsubscribe(id) }
}

/// Spaces out the results of a burst of writes: a change after a quiet time passes at
/// once; while changes keep coming (closer than 10 ms apart), each result waits for an
/// interval that doubles from 20 ms up to 1 s.
struct Throttle {
  static let minimum: Double = 0.02
  static let maximum: Double = 1
  var interval = Throttle.minimum
  var lastPass: UInt64 = 0

  /// Waits as a burst requires; false when the task was cancelled meanwhile.
  mutating func wait(burst: Bool) async -> Bool {
    if burst {
      let elapsed = Double(DispatchTime.now().uptimeNanoseconds &- lastPass) / 1e9
      if elapsed < interval {
        do { try await Task.sleep(nanoseconds: UInt64((interval - elapsed) * 1e9)) } catch {
          return false
        }
      }
      interval = min(interval * 2, Throttle.maximum)
    } else {
      interval = Throttle.minimum
    }
    lastPass = DispatchTime.now().uptimeNanoseconds
    return !Task.isCancelled
  }
}

extension DocumentCollection {
  /// The matching documents, as a live query.
  public func observe(_ query: FindQuery) -> LiveQuery<[Document]> {
    live(same: ==) { try self.find(query) }
  }

  /// One document (`nil` while it does not exist or is deleted), as a live query.
  public func observeDocument(_ id: String) -> LiveQuery<Document?> {
    live(same: ==) { try self.get(id) }
  }

  /// How many documents match, as a live query.
  public func observeCount(_ query: FindQuery) -> LiveQuery<Int> {
    live(same: ==) { try self.count(query) }
  }

  /// How many live documents the collection holds, as a live query.
  public func observeCount() -> LiveQuery<Int> {
    live(same: ==) { try self.count() }
  }

  /// The all-documents query, as a live query (a new element when its rows change).
  public func observeAllDocuments(_ query: ViewQuery = ViewQuery()) -> LiveQuery<ViewResult> {
    LiveQuery(
      source: LiveSource(
        database: database, collection: name,
        fetch: {
          let result = try self.allDocuments(query)
          return (result, result.updateSeq)
        }, same: { $0.rows == $1.rows }))
  }

  /// A query's result now, with its sequence number, to ask later whether it is stale.
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func snapshot(_ query: FindQuery) throws -> LiveResult<[Document]> {
    let source = observe(query).source
    return source.result(try source.fetch())
  }

  /// A query's result now, with its sequence number, without blocking the caller's thread.
  public func snapshot(_ query: FindQuery) async throws -> LiveResult<[Document]> {
    try await database.withConnection(.reading) { try self.snapshot(query) }
  }

  /// A live query whose result and sequence number are read in one transaction.
  func live<Value: Sendable>(
    same: @escaping @Sendable (Value, Value) -> Bool,
    _ read: @escaping @Sendable () throws -> Value
  ) -> LiveQuery<Value> {
    // The collection's reads inside this one run in its transaction: one snapshot.
    LiveQuery(
      source: LiveSource(
        database: database, collection: name,
        fetch: { try database.read { _ in (try read(), try lastSequence()) } }, same: same))
  }
}

extension View {
  /// A view query, as a live query: a new element when its rows (or map errors) change.
  /// The view catches up with each change, as a query does.
  public func observe(_ query: ViewQuery = ViewQuery()) -> LiveQuery<ViewResult> {
    LiveQuery(
      source: LiveSource(
        database: collection.database, collection: collection.name,
        fetch: {
          let result = try self.query(query)
          return (result, result.updateSeq)
        }, same: { $0.rows == $1.rows && $0.errors == $1.errors }))
  }
}
