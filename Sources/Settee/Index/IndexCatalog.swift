import GRDB
import GRDBSQLite
import SetteeCore

/// The collections' index lists, kept in memory and checked with one integer.
///
/// Every query and every write needs its collection's indexes; reading and decoding their
/// rows cost more than a small indexed query itself. A trigger changes the collection's
/// `index_version` with every change to its rows in `indexes` (see Schema), whichever
/// connection or process makes it, so a list is kept with the version it was read at and
/// used while the version is the same.
///
/// Lists are only kept from committed state, never from inside a write transaction, which
/// could still roll back: committed states never share a version, so a kept list cannot be
/// stale.
final class IndexCatalog: Sendable {
  private let lists = Locked<[Int64: (version: Int64, indexes: [StoredIndex])]>([:])
  private static let stateSQL = SQLFragment(
    "SELECT index_version, holds_nul FROM collections WHERE cid = ")

  /// The collection's indexes, ordered by name.
  func indexes(_ db: SQLConnection, cid: Int64) throws -> [StoredIndex] {
    try state(db, cid: cid).indexes
  }

  /// What a query needs to know of its collection, read with one statement: its indexes,
  /// and whether a document may hold U+0000 in a string (``Schema``'s `holds_nul`).
  func state(_ db: SQLConnection, cid: Int64) throws -> CollectionState {
    // Read through SQLite's C API: GRDB's row decoding cost a fifth of planning a query.
    let (version, holdsNUL) =
      try RawStatement(db, Self.stateSQL + SQLFragment.value(cid)).first {
        ($0.int64(0), $0.int64(1) != 0)
      } ?? (-1, true)
    if let known = lists.withLock({ $0[cid] }), known.version == version {
      return CollectionState(indexes: known.indexes, documentsHoldNUL: holdsNUL, version: version)
    }
    let indexes = try StoredIndex.all(db, cid: cid)
    let committed = db.readsCommittedState
    if committed { lists.withLock { $0[cid] = (version, indexes) } }
    return CollectionState(
      indexes: indexes, documentsHoldNUL: holdsNUL, version: committed ? version : nil)
  }
}

/// A collection's indexes and what queries must know of its documents.
struct CollectionState {
  var indexes: [StoredIndex]
  /// Whether a document may hold U+0000 in a string.
  var documentsHoldNUL: Bool
  /// The collection's `index_version` when the index list is the committed one (what
  /// plans may be kept with); `nil` when a write transaction read the list after changing
  /// it, since its changes could still roll back.
  var version: Int64?
}
