import GRDB
import SetteeCore

/// Keeps one JSON index's entries in step with document writes, in the write's transaction
/// (``JSONIndexKind``).
struct JSONIndexWriter: IndexWriter {
  private let db: SQLConnection
  private let index: StoredIndex
  /// Deletes one entry by its whole primary key.
  private let delete: String
  /// Deletes every entry of a document by scanning for its rid: only when deleting by key
  /// missed an entry, which would be a bug (indexes made before keys were deleted this
  /// way also have a rid index that makes it fast).
  private let deleteByRID: String
  private let insert: String
  /// The delete and insert statements, prepared at their first use and kept (looking
  /// them up in the connection's cache hashes their text each time).
  private var deleteStatement: RawStatement.Prepared?
  private var insertStatement: RawStatement.Prepared?
  /// The change in the number of documents with more than one entry.
  private var multiDelta: Int64 = 0
  /// One buffer for the values' JSON text.
  private var text: [UInt8] = []

  init(db: SQLConnection, index: StoredIndex) {
    self.db = db
    self.index = index
    let positions = 0..<index.definition.fields.count
    let columns =
      positions.map { StoredIndex.keyColumn($0) } + positions.map { StoredIndex.valueColumn($0) }
    insert =
      (SQLFragment("INSERT OR IGNORE INTO ") + index.table + SQLFragment(" (")
      + .joined(columns, separator: ", ") + SQLFragment(", id, rid, rev) VALUES (")
      + .joined(Array(repeating: SQLFragment("?"), count: columns.count + 3), separator: ", ")
      + SQLFragment(")")).text
    let keyMatch = positions.map { StoredIndex.keyColumn($0) + SQLFragment(" = ?") }
    delete =
      (SQLFragment("DELETE FROM ") + index.table + SQLFragment(" WHERE ")
      + .joined(keyMatch, separator: " AND ") + SQLFragment(" AND id = ? AND rid = ?")).text
    deleteByRID = (SQLFragment("DELETE FROM ") + index.table + SQLFragment(" WHERE rid = ?")).text
  }

  /// Entries are found by their keys, so JSON indexes need no index on `rid` (which cost
  /// every write a B-tree update per index, and every index build a sort).
  var needsPrevious: Bool { true }

  mutating func update(_ change: DocumentChange) throws {
    let (rid, document) = (change.rid, change.document)
    let rev = document.rev?.description ?? ""
    var before = 0
    if !change.isNew {
      guard let previous = change.previous, let previousJSON = change.previousJSON else {
        throw SetteeError(
          .storage,
          "internal error: replacing index entries of \(quoted(document.id)) without its previous version"
        )
      }
      let rows = try index.rows(previousJSON)
      let delete = try db.rawStatement(&deleteStatement, self.delete)
      for row in rows {
        let statement = RawStatement(db, statement: delete)
        let next = Self.bindKeys(row, to: statement)
        statement.bind(next, text: previous.id)
        statement.bind(next + 1, rid)
        try statement.execute()
        before += db.changesCount
      }
      if before != rows.count {
        try db.cachedStatement(sql: deleteByRID).execute(arguments: [rid])
        before += db.changesCount
      }
    }
    var after = 0
    if !document.isDeleted {
      let rows = try index.rows(change.json)
      let insert = try db.rawStatement(&insertStatement, self.insert)
      for row in rows {
        let statement = RawStatement(db, statement: insert)
        var next = Self.bindKeys(row, to: statement)
        for entry in row {
          if let value = entry.value {
            text.removeAll(keepingCapacity: true)
            JSONWriter.write(value, into: &text)
            text.withUnsafeBufferPointer { statement.bind(next, text: $0) }
          } else {
            statement.bindNull(next)
          }
          next += 1
        }
        statement.bind(next, text: document.id)
        statement.bind(next + 1, rid)
        statement.bind(next + 2, text: rev)
        try statement.execute()
      }
      after = rows.count
    }
    multiDelta += Int64((after > 1 ? 1 : 0) - (before > 1 ? 1 : 0))
  }

  /// Binds a row's keys to parameters 1…n; returns the next parameter's index.
  private static func bindKeys(_ row: [IndexKeys.Entry], to statement: RawStatement) -> Int32 {
    var next: Int32 = 1
    for entry in row {
      (entry.key ?? StoredIndex.missingKey).withUnsafeBufferPointer {
        statement.bind(next, blob: $0)
      }
      next += 1
    }
    return next
  }

  /// Records the changed count of multi-entry documents.
  func finish() throws {
    guard multiDelta != 0 else { return }
    try db.cachedStatement(sql: "UPDATE indexes SET multi_docs = multi_docs + ? WHERE xid = ?")
      .execute(arguments: [multiDelta, index.xid])
  }
}
