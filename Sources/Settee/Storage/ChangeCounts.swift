import GRDB
import SetteeCore

/// Exact counts of a collection's changes after a sequence number (CouchDB's `pending`),
/// kept so that a reader paging through the feed counts only the changes it moved past.
/// Counting walks every change to come: a client reading a 100,000-change feed 1,000 at a
/// time walked five million rows to be told how many were left.
///
/// A count is used again only while the collection is as it was counted: the same last
/// sequence number (every write takes a new one, and so does deleting the collection) and
/// the same last purge (a purge removes changes without one). Counts are kept and used only
/// in committed state (``SQLConnection/readsCommittedState``).
final class ChangeCounts: Sendable {
  private struct Count {
    var cid: Int64
    var since: Int64
    var count: Int
    var lastSequence: Int64
    var lastPurge: Int64
  }

  private let counts = Locked<[Count]>([])
  /// How many counts are kept (for as many readers paging at once).
  private static let kept = 16
  /// How many changes between a kept count and the asked one are walked, at most, before
  /// counting from scratch.
  private static let walked = 10_000

  /// How many changes of collection `cid` come after `since`.
  func count(_ db: SQLConnection, cid: Int64, since: Int64) throws -> Int {
    guard db.readsCommittedState else { return try walk(db, cid: cid, since: since) }
    let lastSequence = try DocumentReader.lastSequence(db, cid: cid)
    guard since < lastSequence else { return 0 }
    let lastPurge =
      try Int64.fetchOne(
        db.cachedStatement(sql: "SELECT max(purge_seq) FROM purges WHERE cid = ?"),
        arguments: [cid]) ?? 0
    let nearest = counts.withLock { counts in
      counts.filter {
        $0.cid == cid && $0.lastSequence == lastSequence && $0.lastPurge == lastPurge
      }.min { abs($0.since - since) < abs($1.since - since) }
    }
    var count: Int?
    if let nearest {
      let (low, high) = (min(nearest.since, since), max(nearest.since, since))
      let between =
        try Int.fetchOne(
          db.cachedStatement(
            sql: """
              SELECT count(*) FROM (SELECT 1 FROM documents
                WHERE cid = ? AND seq > ? AND seq <= ? LIMIT ?)
              """),
          arguments: [cid, low, high, Self.walked + 1]) ?? 0
      if between <= Self.walked {
        count = since >= nearest.since ? nearest.count - between : nearest.count + between
      }
    }
    let result = try count ?? walk(db, cid: cid, since: since)
    do {
      let known = Count(
        cid: cid, since: since, count: result, lastSequence: lastSequence, lastPurge: lastPurge)
      counts.withLock { counts in
        // Counts of an older state of this collection are no use again.
        counts.removeAll {
          $0.cid == cid
            && ($0.lastSequence != lastSequence || $0.lastPurge != lastPurge
              || $0.since == since)
        }
        counts.append(known)
        if counts.count > Self.kept { counts.removeFirst(counts.count - Self.kept) }
      }
    }
    return result
  }

  /// The count, walking every change after `since`.
  private func walk(_ db: SQLConnection, cid: Int64, since: Int64) throws -> Int {
    try Int.fetchOne(
      db.cachedStatement(sql: "SELECT count(*) FROM documents WHERE cid = ? AND seq > ?"),
      arguments: [cid, since]) ?? 0
  }
}
