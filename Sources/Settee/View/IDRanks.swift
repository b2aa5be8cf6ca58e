import GRDB
import SetteeCore

/// How many live documents of a collection have an id before a given one: the `offset` of
/// an all-documents page (CouchDB's `_all_docs`), which CouchDB reads off its B-tree's
/// counts. SQLite keeps no counts in its B-trees, so a count walks every id before the
/// bound: at 100,000 documents a page near the end cost 13 ms, ten times its rows.
///
/// So counts already made are kept as checkpoints (an id and how many live ids come
/// before it), for one state of the collection: its `last_seq` and its live and deleted
/// counts, read in the same transaction. Every write that changes which documents are live
/// takes a new sequence number; a whole-document purge takes none but changes a count;
/// so a state names one set of live ids, and a new state drops the checkpoints. A count
/// then walks only from the nearest checkpoint. Only committed state is counted from or
/// kept (``SQLConnection/readsCommittedState``).
final class IDRanks: Sendable {
  /// A collection's state, as its row in `collections` says.
  struct State: Hashable {
    var lastSeq: Int64
    var live: Int
    var deleted: Int
  }

  private struct Checkpoints {
    var state: State
    /// Ids in byte order (SQLite's BINARY collation), each with the live ids before it.
    var ids: [[UInt8]] = []
    var before: [Int] = []
  }

  /// The checkpoints kept per collection.
  static let limit = 256

  private let collections = Locked<[Int64: Checkpoints]>([:])

  init() {}

  /// How many live documents of collection `cid` have an id before `id` (in bytes).
  func countBefore(_ db: SQLConnection, cid: Int64, state: State, _ id: String) throws -> Int {
    let bytes = Array(id.utf8)
    guard db.readsCommittedState else { return try Self.count(db, cid: cid, from: nil, to: id) }
    let nearest: (id: String, before: Int)? = collections.withLock { collections in
      guard let kept = collections[cid], kept.state == state, !kept.ids.isEmpty else { return nil }
      let position = Self.position(of: bytes, in: kept.ids)
      if position < kept.ids.count && kept.ids[position] == bytes {
        return (id, kept.before[position])
      }
      // The checkpoint before, else the one after.
      let index = position > 0 ? position - 1 : position
      return (String(decoding: kept.ids[index], as: UTF8.self), kept.before[index])
    }
    let count: Int
    if let nearest {
      if nearest.id == id { return nearest.before }
      if Array(nearest.id.utf8).lexicographicallyPrecedes(bytes) {
        count = nearest.before + (try Self.count(db, cid: cid, from: nearest.id, to: id))
      } else {
        count = nearest.before - (try Self.count(db, cid: cid, from: id, to: nearest.id))
      }
    } else {
      count = try Self.count(db, cid: cid, from: nil, to: id)
    }
    collections.withLock { collections in
      var kept = collections[cid] ?? Checkpoints(state: state)
      if kept.state != state { kept = Checkpoints(state: state) }
      let position = Self.position(of: bytes, in: kept.ids)
      guard position >= kept.ids.count || kept.ids[position] != bytes else { return }
      if kept.ids.count >= Self.limit {
        // Forget every other checkpoint: what is left still spreads over the ids.
        kept.ids = kept.ids.enumerated().filter { $0.offset % 2 == 0 }.map(\.element)
        kept.before = kept.before.enumerated().filter { $0.offset % 2 == 0 }.map(\.element)
        let again = Self.position(of: bytes, in: kept.ids)
        kept.ids.insert(bytes, at: again)
        kept.before.insert(count, at: again)
      } else {
        kept.ids.insert(bytes, at: position)
        kept.before.insert(count, at: position)
      }
      collections[cid] = kept
    }
    return count
  }

  /// The first position in `ids` whose id is not before `id`.
  private static func position(of id: [UInt8], in ids: [[UInt8]]) -> Int {
    var low = 0
    var high = ids.count
    while low < high {
      let middle = (low + high) / 2
      if ids[middle].lexicographicallyPrecedes(id) { low = middle + 1 } else { high = middle }
    }
    return low
  }

  /// The live documents with `from <= id < to` (`from` nil: from the first).
  private static func count(_ db: SQLConnection, cid: Int64, from: String?, to: String) throws
    -> Int
  {
    var sql = SQLFragment("SELECT count(*) FROM ") + .liveDocuments(cid: cid)
    if let from { sql += SQLFragment(" AND id >= ") + .value(from) }
    sql += SQLFragment(" AND id < ") + .value(to)
    return try Int.fetchOne(db.cachedStatement(sql: sql.text), arguments: sql.statementArguments)
      ?? 0
  }
}
