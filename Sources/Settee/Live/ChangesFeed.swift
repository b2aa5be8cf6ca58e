import Foundation
import SetteeCore

/// A collection's continuous changes feed (CouchDB's `feed=continuous`): the changes after
/// a sequence number, then each new one as it is committed, from this `Database`, another
/// one on the same file, or another process, until the iteration ends.
///
/// ```swift
/// for try await change in people.changesFeed(since: lastSeen) {
///   lastSeen = change.seq
/// }
/// ```
///
/// As in CouchDB's feed, each document appears with its latest change: a document changed
/// again after the feed passed it comes again with its new sequence number, so nothing is
/// missed. Changes are read as the iteration asks for them (in pages of
/// ``ChangesFeed/pageSize``), so a slow consumer holds no backlog in memory.
public struct ChangesFeed: AsyncSequence, Sendable {
  /// Each element: one document's change.
  public typealias Element = Change
  /// How many changes are read at a time.
  public static let pageSize = 500
  let collection: DocumentCollection
  let since: Int64

  /// The iterator: it holds the subscription, which ends when it is released.
  public struct AsyncIterator: AsyncIteratorProtocol {
    let collection: DocumentCollection
    let subscription: Subscription
    var signals: AsyncStream<Void>.AsyncIterator
    var since: Int64
    var buffer: [Change] = []
    var position = 0
    var isReady = false

    /// The next change, waiting for one when none is left; `nil` once the task is
    /// cancelled.
    public mutating func next() async throws -> Change? {
      if !isReady {
        await subscription.ready()
        isReady = true
      }
      while true {
        if position < buffer.count {
          position += 1
          return buffer[position - 1]
        }
        let after = since
        let collection = self.collection
        let page = try await collection.database.withConnection(.reading) {
          try collection.changes(since: after, limit: ChangesFeed.pageSize)
        }
        if let last = page.last {
          buffer = page
          position = 0
          since = last.seq
          continue
        }
        guard await signals.next() != nil, !Task.isCancelled else { return nil }
      }
    }
  }

  /// Starts the feed.
  public func makeAsyncIterator() -> AsyncIterator {
    let subscription = Subscription(collection.database.changeMonitor, collection: collection.name)
    return AsyncIterator(
      collection: collection, subscription: subscription,
      signals: subscription.changes.makeAsyncIterator(), since: since)
  }
}

extension DocumentCollection {
  /// The longest a long poll waits, in seconds: a day.
  public static let maxChangesTimeout: Double = 86_400

  /// The continuous changes feed from a sequence number (see ``ChangesFeed``).
  public func changesFeed(since: Int64 = 0) -> ChangesFeed {
    ChangesFeed(collection: self, since: since)
  }

  /// CouchDB's long poll (`feed=longpoll`): the changes after `since` at once if there are
  /// any, else the first ones committed within `timeout` seconds (an empty list when
  /// none came).
  ///
  /// - Throws: ``SetteeError`` with code `invalidArgument` for a timeout that is not a
  ///   number of seconds from 0 to ``maxChangesTimeout`` or a negative limit.
  public func waitForChanges(since: Int64, timeout: Double, limit: Int? = nil) async throws
    -> [Change]
  {
    guard timeout.isFinite, (0...Self.maxChangesTimeout).contains(timeout) else {
      throw SetteeError(
        .invalidArgument,
        "a long poll's timeout must be a number of seconds from 0 to \(Int(Self.maxChangesTimeout)) (a day), not \(timeout)"
      )
    }
    let subscription = Subscription(database.changeMonitor, collection: name)
    await subscription.ready()
    let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(timeout * 1e9)
    let signals = subscription.changes
    while true {
      let changes = try await changes(since: since, limit: limit)
      if !changes.isEmpty { return changes }
      let now = DispatchTime.now().uptimeNanoseconds
      guard now < deadline else { return [] }
      // Wait for a change of this collection, or the deadline: whichever comes first.
      let woken = await withTaskGroup(of: Bool.self) { group in
        group.addTask {
          var iterator = signals.makeAsyncIterator()
          return await iterator.next() != nil
        }
        group.addTask {
          try? await Task.sleep(nanoseconds: deadline - now)
          return false
        }
        let first = await group.next() ?? false
        group.cancelAll()
        return first
      }
      if !woken { return try await self.changes(since: since, limit: limit) }
    }
  }
}
