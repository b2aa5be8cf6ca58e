import Foundation
import GRDB
import SetteeCore

/// An index as the database holds it: its definition and where its entries live.
///
/// A class: the planner passes indexes around a dozen times per query, and copying the
/// definition's strings and arrays each time was a sixth of planning a small query.
final class StoredIndex: Sendable {
  let xid: Int64
  let definition: IndexDefinition
  /// Documents with more than one entry in the index.
  let multiDocuments: Int64
  /// Entries, and entries per distinct first key, as SQLite counted them when the index was
  /// built (0 when unknown).
  let entries: Int64
  let entriesPerKey: Int64
  /// The entry table of a JSON index (made once: every query names it).
  let table: SQLFragment

  init(
    xid: Int64, definition: IndexDefinition, multiDocuments: Int64, entries: Int64 = 0,
    entriesPerKey: Int64 = 0
  ) {
    self.xid = xid
    self.definition = definition
    self.multiDocuments = multiDocuments
    self.entries = entries
    self.entriesPerKey = entriesPerKey
    table = .identifier("ix_\(xid)")
  }

  /// The key column of the field at `position`.
  static func keyColumn(_ position: Int) -> SQLFragment {
    position < keyColumns.count ? keyColumns[position] : .identifier("k\(position)")
  }

  /// The value column (JSON text, NULL when missing) of the field at `position`, which lets
  /// a covering query answer from the index alone.
  static func valueColumn(_ position: Int) -> SQLFragment {
    position < valueColumns.count ? valueColumns[position] : .identifier("v\(position)")
  }

  /// `x."k<position>"`: the key column of an entry table aliased `x`, as queries name it.
  static func entryKeyColumn(_ position: Int) -> SQLFragment {
    position < entryKeyColumns.count
      ? entryKeyColumns[position] : SQLFragment("x.") + keyColumn(position)
  }

  private static let keyColumns = (0..<16).map { SQLFragment.identifier("k\($0)") }
  private static let entryKeyColumns = keyColumns.map { SQLFragment("x.") + $0 }
  private static let valueColumns = (0..<16).map { SQLFragment.identifier("v\($0)") }

  /// The key that stands for a missing field (it sorts before `null`).
  static let missingKey: [UInt8] = [0x00]

  static func all(_ db: SQLConnection, cid: Int64) throws -> [StoredIndex] {
    let rows = try Row.fetchAll(
      db.cachedStatement(
        sql:
          "SELECT xid, name, type, fields, settings, multi_docs, entries, entries_per_key, ddoc, partial_filter FROM indexes WHERE cid = ? ORDER BY name"
      ),
      arguments: [cid])
    return try rows.map { row in
      StoredIndex(
        xid: try row.value(0),
        definition: try definition(
          name: try row.value(1), type: try row.value(2), fields: try row.value(3),
          settings: try row.value(4), ddoc: try row.value(8),
          partialFilter: try row.value(9)),
        multiDocuments: try row.value(5), entries: try row.value(6), entriesPerKey: try row.value(7)
      )
    }
  }

  /// Parsed definitions by their stored text: every query reads the index list, and
  /// parsing it again each time cost more than the rest of planning.
  private static let definitions = Locked<[[String]: IndexDefinition]>([:])

  static func definition(
    name: String, type: String, fields: String, settings: String, ddoc: String? = nil,
    partialFilter: String? = nil
  ) throws -> IndexDefinition {
    let key = [name, type, fields, settings, ddoc ?? "\u{0}", partialFilter ?? "\u{0}"]
    if let known = definitions.withLock({ $0[key] }) { return known }
    let definition = try StoredData.reading("the definition of index \(JSON.string(name))") {
      let fieldNames = try JSONParser.parse(fields).arrayValue?.compactMap(\.stringValue) ?? []
      var settingValues: [String: String] = [:]
      for member in try JSONParser.parse(settings).objectValue ?? [:] {
        settingValues[member.key] = member.value.stringValue
      }
      var definition = try IndexDefinition(
        name: name, fields: fieldNames, type: type, settings: settingValues)
      definition.designDocument = ddoc
      definition.partialFilter = try partialFilter.map {
        try SelectorParser.parse(JSONParser.parse($0))
      }
      return definition
    }
    definitions.withLock { cache in
      if cache.count > 1_024 { cache.removeAll() }
      cache[key] = definition
    }
    return definition
  }

  /// Creates an index and fills it from the collection's live documents.
  static func create(_ definition: IndexDefinition, db: SQLConnection, cid: Int64) throws
    -> StoredIndex
  {
    let fields = JSONWriter.string(.array(definition.fields.map { .string($0.description) }))
    try db.execute(
      sql:
        "INSERT INTO indexes (cid, name, type, fields, settings, ddoc, partial_filter) VALUES (?, ?, ?, ?, ?, ?, ?)",
      arguments: [
        cid, definition.name, definition.kind.rawValue, fields,
        JSONWriter.string(IndexDefinition.json(definition.settings)), definition.designDocument,
        definition.partialFilter.map { JSONWriter.string($0.json) },
      ])
    let index = StoredIndex(xid: db.lastInsertedRowID, definition: definition, multiDocuments: 0)
    if definition.kind == .text {
      try TextIndex.create(index, db: db)
      var maintainer = IndexMaintainer(db: db, indexes: [index])
      try index.indexLive(db, cid: cid, &maintainer)
      try maintainer.finish()
      return index
    }
    let positions = 0..<definition.fields.count
    let keys = SQLFragment.joined(
      positions.map { keyColumn($0) + SQLFragment(" BLOB NOT NULL") }, separator: ", ")
    let values = SQLFragment.joined(
      positions.map { valueColumn($0) + SQLFragment(" TEXT") }, separator: ", ")
    try db.execute(
      sql: (SQLFragment("CREATE TABLE ") + index.table + SQLFragment(" (") + keys
        + SQLFragment(", id TEXT NOT NULL, rid INTEGER NOT NULL, rev TEXT NOT NULL, ") + values
        + SQLFragment(", PRIMARY KEY (") + index.primaryKey + SQLFragment(")) WITHOUT ROWID")).text)
    let (entries, multiDocuments) = try index.fill(db, cid: cid)
    // The planner's statistics: entries, and entries per distinct first key (what
    // ANALYZE would write in sqlite_stat1, at a tenth of its cost: the first key column
    // leads the primary key, so SQLite counts distinct keys by skipping along it).
    let distinct =
      try Int.fetchOne(
        db,
        sql: (SQLFragment("SELECT count(*) FROM (SELECT DISTINCT k0 FROM ") + index.table
          + SQLFragment(")")).text) ?? 0
    let perKey = distinct > 0 ? (entries + distinct - 1) / distinct : 0
    try db.execute(
      sql: "UPDATE indexes SET entries = ?, entries_per_key = ?, multi_docs = ? WHERE xid = ?",
      arguments: [entries, perKey, multiDocuments, index.xid])
    // SQLite's planner needs them too, once it has statistics for `documents` (PRAGMA
    // optimize gathers them, after an import for instance): believing an unmeasured entry
    // table to hold a million rows, it would scan every document to build a Bloom filter
    // before a `limit 10` read. Written as ANALYZE would write them, for the primary key
    // (k0…, id, rid). SQLite creates sqlite_stat1 only through ANALYZE: of the small
    // `indexes` table, if no ANALYZE has run yet.
    if try !db.tableExists("sqlite_stat1") { try db.execute(sql: "ANALYZE indexes") }
    let stat =
      ([entries, max(perKey, 1)] + Array(repeating: 1, count: definition.fields.count + 1))
      .map(String.init).joined(separator: " ")
    let name = "ix_\(index.xid)"
    try db.execute(
      sql: "INSERT INTO sqlite_stat1 (tbl, idx, stat) VALUES (?, ?, ?)",
      arguments: [name, name, stat])
    return StoredIndex(
      xid: index.xid, definition: definition, multiDocuments: Int64(multiDocuments),
      entries: Int64(entries), entriesPerKey: Int64(perKey))
  }

  /// Writes the entries of the collection's live documents, in key order, with one
  /// statement: ``IndexEntriesTable`` gives each document's entries (keys and covered
  /// values), and SQLite sorts them and appends them to the entry table (appending to a
  /// B-tree is several times faster than inserting at random places). Returns how many
  /// entries it wrote and how many documents gave more than one.
  func fill(_ db: SQLConnection, cid: Int64) throws -> (entries: Int, multiDocuments: Int) {
    let positions = 0..<definition.fields.count
    let columns =
      positions.map { StoredIndex.keyColumn($0) } + positions.map { StoredIndex.valueColumn($0) }
    let insert =
      SQLFragment("INSERT INTO ") + table + SQLFragment(" (") + .joined(columns, separator: ", ")
      + SQLFragment(", id, rid, rev) SELECT ")
      + .joined(columns.map { SQLFragment("e.") + $0 }, separator: ", ")
      + SQLFragment(", d.id, d.rid, d.rev FROM documents d, ")
      + .identifier(IndexEntriesTable.name)
      + SQLFragment("(d.id, d.rev, d.body) e WHERE d.cid = ") + .value(cid)
      + SQLFragment(" AND d.deleted = 0 ORDER BY ")
      + .joined(positions.map { .integer($0 + 1) }, separator: ", ")
      + SQLFragment(", d.id, d.rid")
    return try IndexEntriesTable.during(db, index: self) { build in
      // A helper thread sorts each batch of entries (as much as the page cache holds) while
      // this one reads the next documents; a larger cache, which leaves the whole sort for
      // the end, was slower. The entry table's pages stay in memory up to 64 MB instead of
      // being written to the WAL as the cache fills and written again when changed (a
      // 100,000-document build wrote 10,253 WAL frames for a 3,415-page index).
      let spill = try Int.fetchOne(db, sql: "PRAGMA cache_spill") ?? 0
      try db.execute(sql: "PRAGMA threads = 1")
      try db.execute(sql: "PRAGMA cache_spill = 16384")
      defer {
        try? db.execute(sql: "PRAGMA threads = 0")
        try? db.execute(sql: "PRAGMA cache_spill = \(spill)")
      }
      try db.execute(sql: insert.text, arguments: insert.statementArguments)
      return (db.changesCount, build.multiDocuments)
    }
  }

  /// `k0, k1, …, id, rid`: the entry table's primary key, the order entries are kept in.
  var primaryKey: SQLFragment {
    .joined(
      definition.fields.indices.map { StoredIndex.keyColumn($0) }
        + [SQLFragment("id"), SQLFragment("rid")], separator: ", ")
  }

  /// Gives `maintainer` every live document of the collection.
  private func indexLive(_ db: SQLConnection, cid: Int64, _ maintainer: inout IndexMaintainer)
    throws
  {
    let select =
      SQLFragment("SELECT d.rid, d.id, d.rev, d.body FROM ") + .liveDocuments(cid: cid)
    // A statement of its own (the maintainer's statements run while it steps).
    try index(
      RawStatement(db, statement: db.makeStatement(sql: select.text), arguments: select.arguments),
      &maintainer)
  }

  private func index(_ rows: RawStatement, _ maintainer: inout IndexMaintainer) throws {
    try rows.forEach { row in
      let id = row.string(1)
      let document = Document(
        id: id, rev: try DocumentReader.storedRevision(row.string(2), documentID: id),
        body: try DocumentReader.parseBody(row.bytes(3), documentID: id))
      try maintainer.update(rid: row.int64(0), document: document, isNew: true, previous: nil)
      return true
    }
  }

  /// The entries a document gives: one row per combination of its fields' values (see
  /// ``IndexKeys``), none when a partial index's filter does not match it.
  func rows(_ json: JSON) throws -> [[IndexKeys.Entry]] {
    if let filter = definition.partialFilter, !(try Matcher.matches(filter, json)) { return [] }
    return try IndexKeys.rows(json, fields: definition.fields, indexName: definition.name)
  }

  func drop(_ db: SQLConnection) throws {
    let table = definition.kind == .text ? TextIndex.table(self) : self.table
    try db.execute(sql: (SQLFragment("DROP TABLE ") + table).text)
    try db.execute(sql: "DELETE FROM indexes WHERE xid = ?", arguments: [xid])
  }
}

/// Keeps a collection's indexes in step with document writes, in the same transaction.
struct IndexMaintainer {
  /// A JSON index and its statements, written once.
  private struct Target {
    var index: StoredIndex
    /// Deletes one entry by its whole primary key.
    var delete: String
    /// Deletes every entry of a document by scanning for its rid: only when deleting by key
    /// missed an entry, which would be a bug (indexes made before keys were deleted this
    /// way also have a rid index that makes it fast).
    var deleteByRID: String
    var insert: String
    /// The delete and insert statements, prepared at their first use and kept (looking
    /// them up in the connection's cache hashes their text each time).
    var deleteStatement: Statement?
    var insertStatement: Statement?
  }

  private let db: SQLConnection
  private var targets: [Target]
  private let textIndexes: [TextIndex]
  private var multiDelta: [Int64]

  init(db: SQLConnection, indexes: [StoredIndex]) {
    self.db = db
    targets = indexes.filter { $0.definition.kind == .json }.map { index in
      let positions = 0..<index.definition.fields.count
      let columns =
        positions.map { StoredIndex.keyColumn($0) } + positions.map { StoredIndex.valueColumn($0) }
      let insert =
        SQLFragment("INSERT OR IGNORE INTO ") + index.table + SQLFragment(" (")
        + .joined(columns, separator: ", ") + SQLFragment(", id, rid, rev) VALUES (")
        + .joined(Array(repeating: SQLFragment("?"), count: columns.count + 3), separator: ", ")
        + SQLFragment(")")
      let keyMatch = positions.map { StoredIndex.keyColumn($0) + SQLFragment(" = ?") }
      let delete =
        SQLFragment("DELETE FROM ") + index.table + SQLFragment(" WHERE ")
        + .joined(keyMatch, separator: " AND ") + SQLFragment(" AND id = ? AND rid = ?")
      let deleteByRID = SQLFragment("DELETE FROM ") + index.table + SQLFragment(" WHERE rid = ?")
      return Target(
        index: index, delete: delete.text, deleteByRID: deleteByRID.text, insert: insert.text)
    }
    textIndexes = indexes.filter { $0.definition.kind == .text }.map(TextIndex.init)
    multiDelta = Array(repeating: 0, count: targets.count)
  }

  /// Whether ``update(rid:document:isNew:previous:)`` needs the previous version of a document:
  /// its entries are found by their keys, so JSON indexes need no index on `rid` (which
  /// cost every write a B-tree update per index, and every index build a sort).
  var needsPrevious: Bool { !targets.isEmpty }

  /// Whether the collection has no index to keep.
  var isEmpty: Bool { targets.isEmpty && textIndexes.isEmpty }

  /// Replaces a document's entries (none for a deleted document). `isNew`: the document had
  /// no entries (it is new, or replaces a tombstone). `previous`: the stored version being
  /// replaced (with its `_rev`) when it had entries and ``needsPrevious``.
  mutating func update(rid: Int64, document: Document, isNew: Bool, previous: Document?) throws {
    guard !targets.isEmpty || !textIndexes.isEmpty else { return }
    let json = JSON.object(document.json)
    for text in textIndexes {
      try text.update(rid: rid, document: document, json: json, isNew: isNew, db: db)
    }
    let rev = document.rev?.description ?? ""
    // One buffer for the values' JSON text.
    var text: [UInt8] = []
    let previousJSON = previous.map { JSON.object($0.json) }
    for (position, target) in targets.enumerated() {
      var before = 0
      if !isNew {
        guard let previous, let previousJSON else {
          throw SetteeError(
            .storage,
            "internal error: replacing index entries of \(quoted(document.id)) without its previous version"
          )
        }
        let rows = try target.index.rows(previousJSON)
        let delete = try db.statement(&targets[position].deleteStatement, target.delete)
        for row in rows {
          let statement = RawStatement(db, statement: delete)
          let next = Self.bindKeys(row, to: statement)
          statement.bind(next, text: previous.id)
          statement.bind(next + 1, rid)
          try statement.execute()
          before += db.changesCount
        }
        if before != rows.count {
          try db.cachedStatement(sql: target.deleteByRID).execute(arguments: [rid])
          before += db.changesCount
        }
      }
      var after = 0
      if !document.isDeleted {
        let rows = try target.index.rows(json)
        let insert = try db.statement(&targets[position].insertStatement, target.insert)
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
      multiDelta[position] += Int64((after > 1 ? 1 : 0) - (before > 1 ? 1 : 0))
    }
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

  /// Records the changed counts of multi-entry documents.
  func finish() throws {
    for (target, delta) in zip(targets, multiDelta) where delta != 0 {
      try db.cachedStatement(sql: "UPDATE indexes SET multi_docs = multi_docs + ? WHERE xid = ?")
        .execute(arguments: [delta, target.index.xid])
    }
  }
}
