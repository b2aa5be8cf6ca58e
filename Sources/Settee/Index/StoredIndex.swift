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
  /// A JSON index as CouchDB's planner sees it (made once: every CouchDB-dialect query
  /// plans with it).
  let mango: MangoIndex?

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
    mango = definition.kind == .json ? try? MangoIndex(definition) : nil
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
    // CouchDB's index of no fields holds every document in id order, which the documents'
    // own primary key already is: it is kept in the catalog only, without entries.
    if definition.fields.isEmpty { return index }
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
      RawStatement(
        db, statement: db.uncachedRawStatement(sql: select.text), arguments: select.arguments),
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

  /// Rebuilds the collection's indexes of one kind: each is dropped and made again from its
  /// stored definition (its name, fields, design document and partial filter kept), as
  /// ``create(_:db:cid:)`` fills a new one.
  static func rebuild(_ db: SQLConnection, cid: Int64, kind: IndexDefinition.Kind) throws {
    for index in try all(db, cid: cid) where index.definition.kind == kind {
      try index.drop(db)
      _ = try create(index.definition, db: db, cid: cid)
    }
  }

  /// The table holding its entries: `ix_<xid>` for a JSON index, the FTS4 table
  /// `fts_<xid>` for a TEXT index.
  var entryTable: SQLFragment { definition.kind == .text ? TextIndex.table(self) : table }

  /// The collection's indexes of one kind as ``SecondaryIndexInfo`` lists them, with the
  /// rows of each.
  static func describe(
    _ db: SQLConnection, cid: Int64, kind: IndexDefinition.Kind, as info: SecondaryIndexInfo.Kind,
    upkeep: Upkeep
  ) throws -> [SecondaryIndexInfo] {
    try all(db, cid: cid).filter { $0.definition.kind == kind }.map { index in
      let count =
        index.hasEntries
        ? SQLFragment("SELECT count(*) FROM ") + index.entryTable
        : SQLFragment("SELECT count(*) FROM documents WHERE deleted = 0 AND cid = ")
          + .value(cid)
      return SecondaryIndexInfo(
        kind: info, name: index.definition.name, upkeep: upkeep.info,
        rows: try Int.fetchOne(db, sql: count.text) ?? 0)
    }
  }

  /// Drops every index of `kind` of the collection.
  static func dropAll(_ db: SQLConnection, cid: Int64, kind: IndexDefinition.Kind) throws {
    for index in try all(db, cid: cid) where index.definition.kind == kind { try index.drop(db) }
  }

  /// Whether the index keeps entries of its own: every index but CouchDB's of no fields.
  var hasEntries: Bool { !definition.fields.isEmpty }

  func drop(_ db: SQLConnection) throws {
    if hasEntries { try db.execute(sql: (SQLFragment("DROP TABLE ") + entryTable).text) }
    try db.execute(sql: "DELETE FROM indexes WHERE xid = ?", arguments: [xid])
    // Its statistics go too: the next index may get the same xid, and its own.
    if definition.kind == .json, try db.tableExists("sqlite_stat1") {
      try db.execute(sql: "DELETE FROM sqlite_stat1 WHERE tbl = ?", arguments: ["ix_\(xid)"])
    }
  }
}
