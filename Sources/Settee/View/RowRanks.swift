import GRDB
import SetteeCore

/// How many rows of an ordered list come before a position: the `offset` of an
/// all-documents page (CouchDB's `_all_docs`, live ids in byte order) or of a view's page
/// (its rows in key order), which CouchDB reads off its B-trees' counts. SQLite keeps no
/// counts in its B-trees, so a count walks every row before the bound: at 100,000
/// documents an all-documents page near the end cost 13 ms, a view's 5 ms, ten times their
/// rows.
///
/// So counts already made are kept as checkpoints (a position and how many rows come
/// before it), for one state of the list, read in the same transaction as the count:
/// - live ids: the collection's `last_seq` and its live and deleted counts. Every write
///   that changes which documents are live takes a new sequence number; a whole-document
///   purge takes none but changes a count.
/// - a view's rows: its generation, `last_seq` and row count. A catch-up moves `last_seq`,
///   a reset moves the generation, a purge the row count.
///
/// So a state names one set of rows, and a new state drops the checkpoints. A count then
/// walks only from the nearest checkpoint. Only committed state is counted from or kept
/// (``SQLConnection/readsCommittedState``). What is kept is bounded: 256 checkpoints a
/// list, positions of at most 1 KB, 4,096 lists.
final class RowRanks: Sendable {
  /// Which list: a collection's live ids, or a view's rows.
  enum List: Hashable {
    case documents(cid: Int64)
    case view(vid: Int64)
  }

  private struct Checkpoints {
    var state: [Int64]
    /// Positions in byte order (SQLite's BINARY collation, and memcmp for blobs), each
    /// with the rows before it.
    var positions: [[UInt8]] = []
    var before: [Int] = []
  }

  /// The checkpoints kept per list.
  static let limit = 256
  /// The longest position kept (a start key comes from a request): a longer one is counted
  /// and answered, not kept.
  static let longestKept = 1024
  /// The lists kept at once; past it, every list's checkpoints go (dropped collections and
  /// views leave theirs behind until then).
  static let listsKept = 4096

  private let lists = Locked<[List: Checkpoints]>([:])

  init() {}

  /// How many rows of `list` in `state` come before `position` (in bytes); `count` counts
  /// the rows from a position (`nil`: the first) up to another, excluded.
  func countBefore(
    _ db: SQLConnection, _ list: List, state: [Int64], _ position: [UInt8],
    count: (_ from: [UInt8]?, _ to: [UInt8]) throws -> Int
  ) throws -> Int {
    guard db.readsCommittedState else { return try count(nil, position) }
    let nearest: (position: [UInt8], before: Int)? = lists.withLock { lists in
      guard let kept = lists[list], kept.state == state, !kept.positions.isEmpty else {
        return nil
      }
      let index = Self.index(of: position, in: kept.positions)
      if index < kept.positions.count && kept.positions[index] == position {
        return (position, kept.before[index])
      }
      // The checkpoint before, else the one after.
      let nearest = index > 0 ? index - 1 : index
      return (kept.positions[nearest], kept.before[nearest])
    }
    let counted: Int
    if let nearest {
      if nearest.position == position { return nearest.before }
      if nearest.position.lexicographicallyPrecedes(position) {
        counted = nearest.before + (try count(nearest.position, position))
      } else {
        counted = nearest.before - (try count(position, nearest.position))
      }
    } else {
      counted = try count(nil, position)
    }
    guard position.count <= Self.longestKept else { return counted }
    lists.withLock { lists in
      if lists[list] == nil && lists.count >= Self.listsKept { lists.removeAll() }
      var kept = lists[list] ?? Checkpoints(state: state)
      if kept.state != state { kept = Checkpoints(state: state) }
      let index = Self.index(of: position, in: kept.positions)
      guard index >= kept.positions.count || kept.positions[index] != position else { return }
      if kept.positions.count >= Self.limit {
        // Forget every other checkpoint: what is left still spreads over the list.
        kept.positions = kept.positions.enumerated().filter { $0.offset % 2 == 0 }.map(\.element)
        kept.before = kept.before.enumerated().filter { $0.offset % 2 == 0 }.map(\.element)
        let again = Self.index(of: position, in: kept.positions)
        kept.positions.insert(position, at: again)
        kept.before.insert(counted, at: again)
      } else {
        kept.positions.insert(position, at: index)
        kept.before.insert(counted, at: index)
      }
      lists[list] = kept
    }
    return counted
  }

  /// How many checkpoints `list` keeps now (for tests of the bounds).
  func keptCount(_ list: List) -> Int { lists.withLock { $0[list]?.positions.count ?? 0 } }

  /// The first index in `positions` whose position is not before `position`.
  private static func index(of position: [UInt8], in positions: [[UInt8]]) -> Int {
    var low = 0
    var high = positions.count
    while low < high {
      let middle = (low + high) / 2
      if positions[middle].lexicographicallyPrecedes(position) {
        low = middle + 1
      } else {
        high = middle
      }
    }
    return low
  }
}
