import Foundation
import GRDB
import SetteeCore

/// The two faces stored as views: seed 002's views (Swift or declarative) and seed 001's
/// value indexes. Each has its own namespace of names in a collection.
enum ViewKind: String, Sendable {
  case view
  case value
}

/// How this process maps documents for one view: a registered Swift closure or a stored
/// declarative definition, with its reduce.
struct ViewMapper: Sendable {
  let version: String
  let collation: ViewCollation
  let reduce: ViewReduce?
  let map: @Sendable (Document) throws -> [(key: JSON, value: JSON)]
  /// For a declarative view, its definition, which may map in SQL (``DeclaredViewSQL``).
  var declared: ViewDefinition? = nil
  /// For a map function that runs elsewhere (JavaScript): maps documents many at a time,
  /// given as JSON text (`_id`, `_rev`, then the body), one result per document. A
  /// catch-up then hands it batches instead of calling ``map`` per document.
  var mapTexts: ViewTextMapper? = nil

  /// The name stored for the reduce: a built-in's, `"custom"`, or `nil`.
  var reduceName: String? { reduce.map { $0.builtinName ?? "custom" } }
}

/// A row of the `views` table (see ``Schema``).
struct StoredView: Sendable {
  var vid: Int64
  var cid: Int64
  var kind: ViewKind
  var name: String
  var version: String
  /// Whether a declarative definition is stored (read it with ``ViewStore/definition(_:_:)``).
  var hasDefinition: Bool
  var collation: ViewCollation
  var collatorVersion: String
  var reduceName: String?
  var lastSeq: Int64
  var totalRows: Int
  /// How many rows hold a value that is not a number.
  var otherValues: Int
  /// The collection's sequence number when the row was read (read with it, so that
  /// checking whether the view is behind costs no other statement).
  var collectionSeq: Int64
  /// Whether map errors are recorded for it (read with it, likewise).
  var hasErrors: Bool
  /// Changes whenever the definition columns do (see ``Schema``).
  var generation: Int64

  /// The table of its rows.
  var table: SQLFragment { .identifier("vw_\(vid)") }

  static let columns = SQLFragment(
    "vid, cid, kind, name, version, definition IS NOT NULL, collation, collator_version, reduce, last_seq, total_rows, other_values, generation, (SELECT last_seq FROM collections c WHERE c.cid = views.cid), EXISTS (SELECT 1 FROM view_errors e WHERE e.vid = views.vid)"
  )

  /// Whether the stored definition is `mapper`'s (declarative or not) and its keys were
  /// made by this process's ICU: nothing to rebuild.
  func matches(_ mapper: ViewMapper, declared: Bool) throws -> Bool {
    let icu = try mapper.collation.version()
    return version == mapper.version && collation == mapper.collation
      && reduceName == mapper.reduceName && hasDefinition == declared && collatorVersion == icu
  }

  init(row: Row) throws {
    vid = try row.value(0)
    cid = try row.value(1)
    let kindName: String = try row.value(2)
    name = try row.value(3)
    version = try row.value(4)
    hasDefinition = try row.value(5)
    let collationName: String = try row.value(6)
    collatorVersion = try row.value(7)
    reduceName = try row.value(8)
    lastSeq = try row.value(9)
    totalRows = try row.value(10)
    otherValues = try row.value(11)
    generation = try row.value(12)
    collectionSeq = try row.value(13) ?? 0
    hasErrors = try row.value(14)
    guard let kind = ViewKind(rawValue: kindName),
      let collation = ViewCollation(rawValue: collationName)
    else {
      throw SetteeError(.corruption, "view \(JSON.string(name)) has a damaged definition")
    }
    self.kind = kind
    self.collation = collation
  }
}

/// Reads and writes views inside open transactions: the catalog, catching up from the
/// changes feed, and queries.
enum ViewStore {
  // MARK: - Catalog

  static func load(_ db: SQLConnection, cid: Int64, kind: ViewKind, name: String) throws
    -> StoredView?
  {
    let sql =
      SQLFragment("SELECT ") + StoredView.columns
      + SQLFragment(" FROM views WHERE cid = ? AND kind = ? AND name = ?")
    guard
      let row = try Row.fetchOne(
        db.cachedStatement(sql: sql.text), arguments: [cid, kind.rawValue, name])
    else { return nil }
    return try StoredView(row: row)
  }

  static func all(_ db: SQLConnection, cid: Int64, kind: ViewKind) throws -> [StoredView] {
    let sql =
      SQLFragment("SELECT ") + StoredView.columns
      + SQLFragment(" FROM views WHERE cid = ? AND kind = ? ORDER BY name")
    return try Row.fetchAll(db, sql: sql.text, arguments: [cid, kind.rawValue]).map(StoredView.init)
  }

  /// Every view and value index of the database, with its collection's name.
  static func everything(_ db: SQLConnection) throws -> [(collection: String, view: StoredView)] {
    var names: [Int64: String] = [:]
    for row in try Row.fetchAll(db, sql: "SELECT cid, name FROM collections") {
      names[try row.value(0)] = try row.value(1)
    }
    let sql =
      SQLFragment("SELECT ") + StoredView.columns
      + SQLFragment(" FROM views ORDER BY cid, kind, name")
    return try Row.fetchAll(db, sql: sql.text).map { row in
      let view = try StoredView(row: row)
      return (names[view.cid] ?? "", view)
    }
  }

  /// Creates the view, or brings its stored definition to `mapper`'s: a changed version,
  /// collation, reduce or ICU version empties its rows so that it rebuilds.
  ///
  /// - Returns: the view as stored now.
  static func ensure(
    _ db: SQLConnection, collection: String, kind: ViewKind, name: String, mapper: ViewMapper,
    definition: String?
  ) throws -> StoredView {
    let cid = try DocumentReader.ensureCollection(db, collection)
    let collatorVersion = try mapper.collation.version()
    if var view = try load(db, cid: cid, kind: kind, name: name) {
      if try view.matches(mapper, declared: definition != nil) { return view }
      try reset(db, view)
      try db.execute(
        sql: """
          UPDATE views SET version = ?, definition = ?, collation = ?, collator_version = ?,
            reduce = ?, generation = generation + 1 WHERE vid = ?
          """,
        arguments: [
          mapper.version, definition, mapper.collation.rawValue, collatorVersion,
          mapper.reduceName, view.vid,
        ])
      view.version = mapper.version
      view.hasDefinition = definition != nil
      view.collation = mapper.collation
      view.collatorVersion = collatorVersion
      view.reduceName = mapper.reduceName
      view.lastSeq = 0
      view.totalRows = 0
      view.otherValues = 0
      view.hasErrors = false
      view.generation += 1
      return view
    }
    try db.execute(
      sql: """
        INSERT INTO views (cid, kind, name, version, definition, collation, collator_version, reduce)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?)
        """,
      arguments: [
        cid, kind.rawValue, name, mapper.version, definition, mapper.collation.rawValue,
        collatorVersion, mapper.reduceName,
      ])
    let vid = db.lastInsertedRowID
    let table = SQLFragment.identifier("vw_\(vid)")
    let index = SQLFragment.identifier("vw_\(vid)_by_doc")
    // Rows sort by binary key, then document id, then emission order; `key_json` keeps
    // the key as emitted (the binary key cannot be read back), `value` the value (see
    // ``encodeValue(_:)``).
    try db.execute(
      sql: (SQLFragment("CREATE TABLE ") + table
        + SQLFragment(
          " (key BLOB NOT NULL, doc_id TEXT NOT NULL, n INTEGER NOT NULL, key_json TEXT NOT NULL, value, PRIMARY KEY (key, doc_id, n)) WITHOUT ROWID; CREATE INDEX "
        ) + index + SQLFragment(" ON ") + table + SQLFragment(" (doc_id)")).text)
    guard let view = try load(db, cid: cid, kind: kind, name: name) else {
      throw SetteeError(.storage, "view \(JSON.string(name)) vanished after it was created")
    }
    return view
  }

  /// Empties a view's rows and errors, so that it rebuilds from sequence 0; a new
  /// generation, so that nothing kept of its rows (``RowRanks``) is taken for the new ones.
  static func reset(_ db: SQLConnection, _ view: StoredView) throws {
    try db.execute(sql: (SQLFragment("DELETE FROM ") + view.table).text)
    try db.execute(sql: "DELETE FROM view_errors WHERE vid = ?", arguments: [view.vid])
    try db.execute(
      sql: """
        UPDATE views SET last_seq = 0, total_rows = 0, other_values = 0,
          generation = generation + 1 WHERE vid = ?
        """,
      arguments: [view.vid])
  }

  static func drop(_ db: SQLConnection, _ view: StoredView) throws {
    try db.execute(sql: (SQLFragment("DROP TABLE ") + view.table).text)
    try db.execute(sql: "DELETE FROM view_errors WHERE vid = ?", arguments: [view.vid])
    try db.execute(sql: "DELETE FROM views WHERE vid = ?", arguments: [view.vid])
  }

  /// Refuses what JSON cannot hold (NaN, infinities), which a Swift map closure could emit.
  static func checkEmitted(_ value: JSON, _ what: String) throws {
    switch value {
    case .double(let number) where !number.isFinite:
      throw SetteeError(
        .invalidDocument, "the map function emitted \(number) in a \(what): JSON has no such number"
      )
    case .array(let elements): for element in elements { try checkEmitted(element, what) }
    case .object(let members): for member in members { try checkEmitted(member.value, what) }
    default: break
    }
  }

  /// A value as stored: `NULL` for `null`, numbers as SQLite numbers (so that `_sum`
  /// and `_stats` can run in SQL), anything else as JSON text.
  static func encodeValue(_ value: JSON) -> DatabaseValue {
    switch value {
    case .null: .null
    case .int(let number): number.databaseValue
    case .double(let number): number.databaseValue
    default: JSONWriter.string(value).databaseValue
    }
  }

  static func decodeValue(_ value: DatabaseValue) throws -> JSON {
    switch value.storage {
    case .null: return .null
    case .int64(let number): return .int(number)
    case .double(let number): return .double(number)
    case .string(let text): return try StoredData.json(text, "a view row's value")
    case .blob: throw SetteeError(.corruption, "a view row holds a damaged value")
    }
  }

  /// A declarative view's stored definition (JSON text).
  static func definition(_ db: SQLConnection, _ view: StoredView) throws -> String? {
    try String.fetchOne(
      db.cachedStatement(sql: "SELECT definition FROM views WHERE vid = ?"), arguments: [view.vid])
  }

  /// The documents whose map function threw, oldest first.
  static func errors(_ db: SQLConnection, _ view: StoredView) throws -> [ViewMapError] {
    guard view.hasErrors else { return [] }
    return try Row.fetchAll(
      db.cachedStatement(sql: "SELECT doc_id, message FROM view_errors WHERE vid = ? ORDER BY seq"),
      arguments: [view.vid]
    ).map { ViewMapError(documentID: $0[0], message: $0[1]) }
  }
}
