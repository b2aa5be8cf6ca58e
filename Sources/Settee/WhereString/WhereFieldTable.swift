import GRDB
import SetteeCore

/// A collection's materialized `where` fields: the table `wf_<cid>` (one row per live
/// document: its `rid` and one column per queryable or indexed field, default applied),
/// its indexes `wx_<cid>_<n>`, and the triggers on `documents` that keep it current
/// whichever face writes. The fields' paths and defaults are rows of `where_fields`,
/// read by the triggers, so no path or value is ever written into the schema's SQL.
enum WhereFieldTable {
  static func tableName(_ cid: Int64) -> String { "wf_\(cid)" }

  /// The most fields a collection can materialize (SQLite allows 2,000 columns a table).
  static let maxColumns = 500

  static func column(_ number: Int) -> SQLFragment { .identifier("c\(number)") }

  // MARK: - Settings

  /// The collection's stored settings and their version (0 when it has none).
  static func load(_ db: SQLConnection, cid: Int64) throws -> (WhereSettings, Int64) {
    guard
      let row = try Row.fetchOne(
        db.cachedStatement(sql: "SELECT settings, version FROM where_settings WHERE cid = ?"),
        arguments: [cid])
    else { return (WhereSettings(), 0) }
    let text: String = try row.value(0)
    let settings = try StoredData.reading("the where settings of collection \(cid)") {
      try WhereSettings(json: JSONParser.parse(text))
    }
    return (settings, try row.value(1))
  }

  /// The version of the collection's settings (0 when it has none), and whether a
  /// document of the collection may hold U+0000 in a string (``Schema``'s `holds_nul`):
  /// what every `where` query reads first, in one statement.
  static func state(_ db: SQLConnection, cid: Int64) throws -> (version: Int64, holdsNUL: Bool) {
    try RawStatement(db, stateSQL + .value(cid)).first { ($0.int64(0), $0.int64(1) != 0) }
      ?? (0, false)
  }

  private static let stateSQL = SQLFragment(
    "SELECT coalesce((SELECT version FROM where_settings w WHERE w.cid = c.cid), 0), holds_nul FROM collections c WHERE c.cid = "
  )

  /// Stores new settings in place of `old` (stored at `version`, as ``load(_:cid:)`` read
  /// them), rebuilding the field table when its fields or defaults change; equal settings
  /// write nothing.
  ///
  /// - Throws: ``SetteeError`` with code `uniqueViolation` when a unique index would hold
  ///   a value twice (nothing is changed: the caller's transaction rolls back).
  static func apply(
    _ db: SQLConnection, cid: Int64, _ settings: WhereSettings,
    replacing old: WhereSettings, version: Int64
  ) throws {
    guard settings != old else { return }
    if settings.columns != old.columns || settings.indexes != old.indexes
      || settings.columns.contains(where: {
        settings.defaultValue(of: $0) != old.defaultValue(of: $0)
      })
    {
      try rebuild(db, cid: cid, settings)
    }
    try db.execute(
      sql:
        "INSERT INTO where_settings (cid, settings, version) VALUES (?, ?, ?) ON CONFLICT (cid) DO UPDATE SET settings = excluded.settings, version = excluded.version",
      arguments: [cid, JSONWriter.string(settings.json), version + 1])
  }

  /// Rebuilds every collection's field table, triggers and indexes as this version writes
  /// them (a schema migration: see ``Schema``). A collection whose rebuild fails (a unique
  /// index that the new reading of its fields would break) keeps its table as it was, and
  /// ``check(_:cid:collection:_:)`` names the values it holds wrongly.
  static func rebuildAll(_ db: SQLConnection) throws {
    let cids = try Int64.fetchAll(db, sql: "SELECT cid FROM where_settings ORDER BY cid")
    for cid in cids {
      guard let (settings, _) = try? load(db, cid: cid), !settings.columns.isEmpty else {
        continue
      }
      try? db.inSavepoint {
        try rebuild(db, cid: cid, settings)
        return .commit
      }
    }
  }

  /// Rebuilds the collection's field table, triggers and indexes from its stored settings
  /// and documents.
  static func rebuild(_ db: SQLConnection, cid: Int64) throws {
    try rebuild(db, cid: cid, try load(db, cid: cid).0)
  }

  private static func rebuild(_ db: SQLConnection, cid: Int64, _ settings: WhereSettings) throws {
    let table = SQLFragment.identifier(tableName(cid))
    for suffix in ["insert", "update", "delete"] {
      try execute(db, SQLFragment("DROP TRIGGER IF EXISTS ") + trigger(cid, suffix))
    }
    try execute(db, SQLFragment("DROP TABLE IF EXISTS ") + table)
    try db.execute(sql: "DELETE FROM where_fields WHERE cid = ?", arguments: [cid])
    let columns = settings.columns
    guard !columns.isEmpty else { return }
    guard columns.count <= maxColumns else {
      throw SetteeError(
        .limitExceeded,
        "a collection can have at most \(maxColumns) queryable and indexed fields, not \(columns.count)"
      )
    }

    var names: [SQLFragment] = []
    var fromBody: [SQLFragment] = []
    for (number, field) in fieldRows(settings).enumerated() {
      try db.execute(
        sql:
          "INSERT INTO where_fields (cid, col, path, has_default, default_value) VALUES (?, ?, ?, ?, ?)",
        arguments: [cid, number, field.path, field.hasDefault, field.defaultValue])
      names.append(column(number))
      fromBody.append(try value(of: columns[number], in: SQLFragment("d.body"), settings))
    }
    let columnList = SQLFragment.joined(names, separator: ", ")
    try execute(
      db,
      SQLFragment("CREATE TABLE ") + table + SQLFragment(" (rid INTEGER PRIMARY KEY, ")
        + columnList + SQLFragment(")"))
    try execute(
      db,
      SQLFragment("INSERT INTO ") + table + SQLFragment(" (rid, ") + columnList
        + SQLFragment(") SELECT d.rid, ") + .joined(fromBody, separator: ", ")
        + SQLFragment(" FROM ") + .liveDocuments(cid: cid))
    for (number, index) in settings.indexes.enumerated() {
      let keys = index.keys.map { key in
        column(columns.firstIndex(of: key.field)!)
          + SQLFragment(key.descending ? " DESC" : " ASC")
      }
      if index.isUnique {
        try refuseDuplicates(db, cid: cid, index, columns: columns)
      }
      try execute(
        db,
        SQLFragment(index.isUnique ? "CREATE UNIQUE INDEX " : "CREATE INDEX ")
          + .identifier("wx_\(cid)_\(number)") + SQLFragment(" ON ") + table + SQLFragment(" (")
          + .joined(keys, separator: ", ") + SQLFragment(")"))
    }
    for (_, statement) in triggers(cid: cid, columns: columns.count) {
      try execute(db, statement)
    }
  }

  /// The rows of `where_fields` that `settings` make, in column order: each field's path
  /// and default, which the triggers read.
  static func fieldRows(_ settings: WhereSettings) -> [(
    path: String, hasDefault: Bool, defaultValue: DatabaseValue
  )] {
    settings.columns.map { field in
      let defaultValue = settings.defaultValue(of: field)
      return (
        (try? jsonPath(field)) ?? "", defaultValue != nil,
        defaultValue?.whereArgument ?? .null
      )
    }
  }

  /// The triggers on `documents` that keep the field table of `columns` fields current,
  /// by name, as they are created (and as the schema keeps their text).
  static func triggers(cid: Int64, columns: Int) -> [(name: String, sql: SQLFragment)] {
    let table = SQLFragment.identifier(tableName(cid))
    let columnList = SQLFragment.joined((0..<columns).map(column), separator: ", ")
    // In a trigger: the path and default read from where_fields; whether the body holds
    // U+0000 is `h.nul`, searched for once for the row.
    let fromRow = (0..<columns).map { number in
      SQLFragment("(SELECT ")
        + value(
          body: SQLFragment("NEW.body"), path: SQLFragment("f.path"),
          default: SQLFragment(
            "(CASE WHEN NOT f.has_default THEN NULL WHEN typeof(f.default_value) = 'blob' THEN CAST(f.default_value AS TEXT) ELSE f.default_value END)"
          ), reading: .wholeWhen(SQLFragment("h.nul")))
        + SQLFragment(" FROM where_fields f WHERE f.cid = ") + .integer(Int(cid))
        + SQLFragment(" AND f.col = ") + .integer(number) + SQLFragment(")")
    }
    // The new row's values, with the byte search for U+0000 made once for all fields.
    let row =
      SQLFragment("SELECT NEW.rid, ") + .joined(fromRow, separator: ", ")
      + SQLFragment(" FROM (SELECT instr(NEW.body, '\\u0000') > 0 AS nul) h")
    let cidText = SQLFragment.integer(Int(cid))
    return [
      (
        "wf_\(cid)_insert",
        SQLFragment("CREATE TRIGGER ") + trigger(cid, "insert")
          + SQLFragment(" AFTER INSERT ON documents WHEN NEW.cid = ") + cidText
          + SQLFragment(" AND NEW.deleted = 0 BEGIN INSERT INTO ") + table
          + SQLFragment(" (rid, ") + columnList + SQLFragment(") ") + row + SQLFragment("; END")
      ),
      (
        "wf_\(cid)_update",
        SQLFragment("CREATE TRIGGER ") + trigger(cid, "update")
          + SQLFragment(" AFTER UPDATE OF body, deleted ON documents WHEN NEW.cid = ") + cidText
          + SQLFragment(" BEGIN DELETE FROM ") + table + SQLFragment(" WHERE rid = OLD.rid; ")
          + SQLFragment("INSERT INTO ") + table + SQLFragment(" (rid, ") + columnList
          + SQLFragment(") ") + row + SQLFragment(" WHERE NEW.deleted = 0; END")
      ),
      (
        "wf_\(cid)_delete",
        SQLFragment("CREATE TRIGGER ") + trigger(cid, "delete")
          + SQLFragment(" AFTER DELETE ON documents WHEN OLD.cid = ") + cidText
          + SQLFragment(" BEGIN DELETE FROM ") + table + SQLFragment(" WHERE rid = OLD.rid; END")
      ),
    ]
  }

  private static func trigger(_ cid: Int64, _ suffix: String) -> SQLFragment {
    .identifier("wf_\(cid)_\(suffix)")
  }

  private static func execute(_ db: SQLConnection, _ sql: SQLFragment) throws {
    try db.execute(sql: sql.text, arguments: sql.statementArguments)
  }

  /// Refuses a unique index over values two live documents share.
  private static func refuseDuplicates(
    _ db: SQLConnection, cid: Int64, _ index: WhereIndex, columns: [FieldPath]
  ) throws {
    let keys = index.keys.map { column(columns.firstIndex(of: $0.field)!) }
    let list = SQLFragment.joined(keys, separator: ", ")
    let notNull = keys.map { $0 + SQLFragment(" IS NOT NULL") }
    let sql =
      SQLFragment("SELECT ") + list + SQLFragment(", min(rid), max(rid) FROM ")
      + .identifier(tableName(cid)) + SQLFragment(" WHERE ") + .and(notNull)
      + SQLFragment(" GROUP BY ") + list + SQLFragment(" HAVING count(*) > 1 LIMIT 1")
    guard let row = try Row.fetchOne(db, sql: sql.text, arguments: sql.statementArguments) else {
      return
    }
    let values = (0..<keys.count).map { JSON(whereValue: row[$0] as DatabaseValue) }
    let ids = try String.fetchAll(
      db, sql: "SELECT id FROM documents WHERE rid IN (?, ?) ORDER BY id",
      arguments: [row[keys.count] as DatabaseValue, row[keys.count + 1] as DatabaseValue])
    throw SetteeError(
      .uniqueViolation,
      "cannot add unique index \(index): documents \(ids.map(quoted).joined(separator: " and ")) both hold \(describe(values)); nothing was changed"
    )
  }

  static func describe(_ values: [JSON]) -> String {
    values.count == 1
      ? JSONWriter.string(values[0]) : JSONWriter.string(.array(values))
  }

  // MARK: - Checking

  /// Compares the collection's field table with its documents: one row per live
  /// document, each value what the document gives (for ``Database/check()-854zx``).
  static func check(
    _ db: SQLConnection, cid: Int64, collection: String, _ report: inout CheckReport
  ) throws {
    func problem(_ id: String?, _ message: String) {
      report.add(
        CheckReport.Problem(
          collection: collection, documentID: id, index: "where fields", message: message))
    }
    let settings: WhereSettings
    do { settings = try load(db, cid: cid).0 } catch let error as SetteeError {
      return problem(nil, error.reason)
    }
    let columns = settings.columns
    guard !columns.isEmpty else { return }
    // What the triggers read, and the triggers themselves, as the settings make them: a
    // changed path or a dropped trigger leaves the rows right until the next write.
    let stored = try Row.fetchAll(
      db, sql: "SELECT col, path, has_default, default_value FROM where_fields WHERE cid = ?",
      arguments: [cid])
    var storedFields: [Int: (String?, Bool, DatabaseValue)] = [:]
    for row in stored { storedFields[row[0]] = (row[1], row[2], row[3]) }
    for (number, expected) in fieldRows(settings).enumerated() {
      guard let (path, hasDefault, defaultValue) = storedFields.removeValue(forKey: number) else {
        problem(nil, "the field \(columns[number]) has no row in where_fields")
        continue
      }
      if path != expected.path || hasDefault != expected.hasDefault
        || defaultValue != expected.defaultValue
      {
        problem(
          nil,
          "the field \(columns[number]) is stored in where_fields as path \(path.map(quoted) ?? "NULL") with default \(defaultValue), where its settings make \(quoted(expected.path)) with \(expected.defaultValue)"
        )
      }
    }
    for number in storedFields.keys.sorted() {
      problem(nil, "where_fields has a row for column \(number), which no field has")
    }
    let schema = try Row.fetchAll(
      db,
      sql: "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND name LIKE ? ESCAPE '\\'",
      arguments: ["wf\\_\(cid)\\_%"])
    var triggerText: [String: String] = [:]
    for row in schema { triggerText[row[0]] = row[1] }
    for (name, statement) in triggers(cid: cid, columns: columns.count) {
      guard let text = triggerText[name] else {
        problem(nil, "the trigger \(name) that keeps the field table current is missing")
        continue
      }
      if text != statement.text {
        problem(nil, "the trigger \(name) is not the one Settee makes for the fields")
      }
    }
    let table = SQLFragment.identifier(tableName(cid))
    let missing =
      SQLFragment("SELECT d.id FROM documents d LEFT JOIN ") + table
      + SQLFragment(" f ON f.rid = d.rid WHERE d.cid = ") + .value(cid)
      + SQLFragment(" AND d.deleted = 0 AND f.rid IS NULL")
    for id in try String.fetchAll(db, sql: missing.text, arguments: missing.statementArguments) {
      problem(id, "the live document has no row in the field table \(tableName(cid))")
    }
    let extra =
      SQLFragment("SELECT f.rid FROM ") + table
      + SQLFragment(" f LEFT JOIN documents d ON d.rid = f.rid AND d.cid = ") + .value(cid)
      + SQLFragment(" AND d.deleted = 0 WHERE d.rid IS NULL")
    for rid in try Int64.fetchAll(db, sql: extra.text, arguments: extra.statementArguments) {
      problem(nil, "row \(rid) of the field table \(tableName(cid)) has no live document")
    }
    var differs: [SQLFragment] = []
    for (number, field) in columns.enumerated() {
      differs.append(
        SQLFragment("f.") + column(number) + SQLFragment(" IS NOT ")
          + (try value(of: field, in: SQLFragment("d.body"), settings)))
    }
    let wrong =
      SQLFragment("SELECT d.id FROM documents d JOIN ") + table
      + SQLFragment(" f ON f.rid = d.rid WHERE d.cid = ") + .value(cid)
      + SQLFragment(" AND json_valid(d.body) AND ") + .or(differs)
    for id in try String.fetchAll(db, sql: wrong.text, arguments: wrong.statementArguments) {
      problem(id, "the field table \(tableName(cid)) holds values the document does not give")
    }
  }

  // MARK: - Unique violations

  /// The error for a document that a unique index of the `where` face refused
  /// (`SQLITE_CONSTRAINT_UNIQUE` from the field table's trigger): the first unique index
  /// whose values for the new document another document already holds, found in the file
  /// rather than read from SQLite's message. `nil` when none is (the refusal was another's).
  static func uniqueViolation(
    _ db: SQLConnection, cid: Int64, body: String, documentID: String
  ) -> SetteeError? {
    guard let (settings, _) = try? load(db, cid: cid) else { return nil }
    let columns = settings.columns
    indexes: for index in settings.indexes where index.isUnique {
      // The values the new document would have put in.
      var values: [JSON] = []
      var match: [SQLFragment] = []
      for key in index.keys {
        guard let number = columns.firstIndex(of: key.field),
          let read = try? value(of: key.field, in: .value(body), settings)
        else { continue indexes }
        let sql = SQLFragment("SELECT ") + read
        let value = JSON(
          whereValue: (try? DatabaseValue.fetchOne(
            db, sql: sql.text, arguments: sql.statementArguments))
            ?? .null)
        // SQLite's unique indexes hold any number of NULLs: a NULL refuses nothing.
        if value == .null { continue indexes }
        values.append(value)
        match.append(column(number) + SQLFragment(" IS ") + .whereValue(value.whereArgument))
      }
      let sql =
        SQLFragment("SELECT d.id FROM ") + .identifier(tableName(cid))
        + SQLFragment(" f JOIN documents d ON d.rid = f.rid WHERE ") + .and(match)
        + SQLFragment(" AND d.id <> ") + .value(documentID) + SQLFragment(" LIMIT 1")
      guard let holder = try? String.fetchOne(db, sql: sql.text, arguments: sql.statementArguments)
      else { continue }
      return SetteeError(
        .uniqueViolation,
        "unique index \(index) already holds \(describe(values)) (document \(quoted(holder))): document \(quoted(documentID)) cannot be written; nothing was written",
        documentID: documentID)
    }
    return nil
  }

}

extension JSON {
  /// A SQLite value as a `where` query reads it back: JSON text stays text.
  init(whereValue value: DatabaseValue) {
    switch value.storage {
    case .null: self = .null
    case .int64(let number): self = .int(number)
    case .double(let number): self = .double(number)
    case .string(let text): self = .string(text)
    case .blob: self = .null
    }
  }
}
