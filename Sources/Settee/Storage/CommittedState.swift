import GRDB
import GRDBSQLite

/// The one rule for every cache of the engine (collection ids, index lists, view
/// definitions, `where` settings): a value may be kept only when it was read from committed
/// state, never from inside a write transaction that has written, which could still roll
/// back. A rolled-back write that was cached would outlive itself: a collection id reused
/// by another collection, a version number that comes back with other contents.
extension SQLConnection {
  /// Whether what this connection reads now is committed state: outside a transaction, in
  /// a read transaction, or in a write transaction that has not written yet.
  var readsCommittedState: Bool {
    sqlite3_txn_state(sqliteConnection, nil) != SQLITE_TXN_WRITE
  }
}
