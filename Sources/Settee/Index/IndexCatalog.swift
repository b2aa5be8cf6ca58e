import GRDB
import GRDBSQLite
import SetteeCore
import Synchronization

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
  private let lists = Mutex<[Int64: (version: Int64, indexes: [StoredIndex])]>([:])

  /// The collection's indexes, ordered by name.
  func indexes(_ db: SQLConnection, cid: Int64) throws -> [StoredIndex] {
    let version =
      try Int64.fetchOne(
        db.cachedStatement(sql: "SELECT index_version FROM collections WHERE cid = ?"),
        arguments: [cid]) ?? -1
    if let known = lists.withLock({ $0[cid] }), known.version == version { return known.indexes }
    let indexes = try StoredIndex.all(db, cid: cid)
    if sqlite3_txn_state(db.sqliteConnection, nil) != SQLITE_TXN_WRITE {
      lists.withLock { $0[cid] = (version, indexes) }
    }
    return indexes
  }
}
