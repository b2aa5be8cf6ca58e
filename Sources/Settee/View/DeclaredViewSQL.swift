import Foundation
import GRDB
import GRDBSQLite
import SetteeCore

/// Catching a declarative view up in SQL: for definitions that SQLite's JSON operators can
/// map exactly (a key of plain member paths, a value that is nothing, one field or several
/// fields; no `each`, no filter, not the whole document), the documents changed since the
/// view's last update are mapped by one `INSERT … SELECT`, with no document parsed in
/// Swift. Everything else, and collections whose strings hold U+0000 (which SQLite's JSON
/// functions read cut short), is mapped in Swift, the same way; the differential tests
/// hold the two equal.
struct DeclaredViewSQL {
  let keyParts: [Source]
  let compound: Bool
  let value: Value

  /// Where one part of a key or value comes from: a member path of the stored body, or
  /// the document's id or revision (columns of their own: the body holds neither).
  enum Source {
    case path(String)
    case id
    case rev

    /// The part as JSON text (NULL when the body lacks the member).
    var sql: SQLFragment {
      switch self {
      case .path(let path): SQLFragment("(body -> ") + .value(path) + SQLFragment(")")
      case .id: SQLFragment("json_quote(id)")
      case .rev: SQLFragment("json_quote(rev)")
      }
    }
  }

  enum Value {
    case none
    case field(Source)
    case fields([Source])
  }

  init?(_ definition: ViewDefinition) {
    // One rule of fields, without `each` or a filter.
    guard definition.rules.count == 1, !definition.keyFields.isEmpty, definition.each == nil,
      definition.filter == nil, let emitted = definition.value
    else { return nil }
    func source(_ path: FieldPath) -> Source? {
      if path.components == ["_id"] { return .id }
      if path.components == ["_rev"] { return .rev }
      // Member names only: SQLite reads "$.tags.0" as a member "0", where a Settee path
      // also reads an array index, and its path labels have no escapes.
      guard !path.components.isEmpty, path.components[0] != "_id", path.components[0] != "_rev"
      else { return nil }
      for component in path.components {
        guard !component.isEmpty, FieldPath.arrayIndexOf(component) == nil,
          component.unicodeScalars.allSatisfy({
            ($0.properties.isAlphabetic || $0.properties.numericType != nil || $0 == "_"
              || $0 == "-")
              && $0 != "\"" && $0 != "\\"
          })
        else { return nil }
      }
      return .path(path.components.reduce(JSONPathText.root, JSONPathText.member))
    }
    var keys: [Source] = []
    for field in definition.keyFields {
      guard let part = source(field) else { return nil }
      keys.append(part)
    }
    keyParts = keys
    compound = definition.compoundKey
    switch emitted {
    case .none: value = .none
    case .document: return nil
    case .field(let field):
      guard let part = source(field) else { return nil }
      value = .field(part)
    case .fields(let fields):
      var parts: [Source] = []
      for field in fields {
        guard let part = source(field) else { return nil }
        parts.append(part)
      }
      value = .fields(parts)
    }
  }

  /// Deletes the rows of documents changed in `(from, to]` and maps them again.
  ///
  /// - Returns: rows added and removed.
  func catchUp(_ db: SQLConnection, _ view: StoredView, from: Int64, to: Int64, fresh: Bool)
    throws -> ViewStore.RowCounts
  {
    var counts = ViewStore.RowCounts()
    // The documents of `documents` changed in (from, to].
    let changed =
      SQLFragment("cid = ") + .value(view.cid) + SQLFragment(" AND seq > ") + .value(from)
      + SQLFragment(" AND seq <= ") + .value(to)
    if !fresh {
      let delete =
        SQLFragment("DELETE FROM ") + view.table
        + SQLFragment(" WHERE doc_id IN (SELECT id FROM documents WHERE ") + changed
        + SQLFragment(") RETURNING ") + ViewStore.otherValue
      for other in try Bool.fetchAll(db, sql: delete.text, arguments: delete.statementArguments) {
        counts.removed += 1
        if other { counts.otherRemoved += 1 }
      }
      // The view's errors are few (usually none): each is looked up in `documents`,
      // rather than listing the changed documents a second time.
      let errors =
        SQLFragment("DELETE FROM view_errors WHERE vid = ") + .value(view.vid)
        + SQLFragment(" AND EXISTS (SELECT 1 FROM documents WHERE id = view_errors.doc_id AND ")
        + changed + SQLFragment(")")
      try db.execute(sql: errors.text, arguments: errors.statementArguments)
    }
    // Each key part as JSON text (NULL when missing, so the document emits nothing).
    let parts = keyParts.map(\.sql)
    let key =
      compound
      ? SQLFragment("json_array(") + .joined(parts, separator: ", ") + SQLFragment(")")
      : parts[0]
    let value: SQLFragment =
      switch self.value {
      case .none: SQLFragment("NULL")
      case .field(let part): SQLFragment("settee_view_value(") + part.sql + SQLFragment(")")
      case .fields(let parts):
        SQLFragment("json_array(") + .joined(parts.map(\.sql), separator: ", ")
          + SQLFragment(")")
      }
    let present = SQLFragment.and(parts.map { $0 + SQLFragment(" IS NOT NULL") })
    // The rows of the changed documents: binary key, document id, 0 (each document emits
    // one row), key as JSON, value.
    let rows =
      SQLFragment("SELECT settee_view_key(k, ") + .value(view.collation == .raw ? 1 : 0)
      + SQLFragment("), id, 0, k, v FROM (SELECT id, ") + key + SQLFragment(" AS k, ") + value
      + SQLFragment(" AS v FROM documents WHERE ") + changed
      + SQLFragment(" AND deleted = 0 AND ") + .notDesignID(SQLFragment("id"))
      + SQLFragment(" AND ") + present + SQLFragment(")")
    let columns =
      SQLFragment("INSERT INTO ") + view.table
      + SQLFragment(" (key, doc_id, n, key_json, value) ")
    if fresh {
      // A first build fills the empty table in one statement.
      let insert = columns + rows
      try DocumentReader.namingDamagedBodies(db, cid: view.cid) {
        try db.execute(sql: insert.text, arguments: insert.statementArguments)
      }
      counts.added = db.changesCount
      switch self.value {
      case .none, .fields: counts.otherAdded = counts.added  // values are null, or arrays
      case .field:
        let after =
          SQLFragment("SELECT count(*) FROM ") + view.table + SQLFragment(" WHERE ")
          + ViewStore.otherValue
        counts.otherAdded =
          try Int.fetchOne(db, sql: after.text, arguments: after.statementArguments) ?? 0
      }
      return counts
    }
    // A catch-up inserts row by row: one `INSERT … SELECT` into a table with rows would
    // copy every page it changes into a statement journal first (it may fail halfway on a
    // duplicate key), which SQLite keeps in a temporary file past 64 KB (1,000 changed
    // documents: 1,054 writes to it).
    let insert = RawStatement(
      db,
      statement: try db.rawStatement(
        sql: (columns + SQLFragment("VALUES (?, ?, ?, ?, ?)")).text))
    try DocumentReader.namingDamagedBodies(db, cid: view.cid) {
      try RawStatement(db, rows).forEach { row in
        for column in Int32(0)..<5 { insert.bind(column + 1, columnOf: row, column) }
        try insert.execute()
        counts.added += 1
        if row.isNull(4) || row.isText(4) { counts.otherAdded += 1 }
        return true
      }
    }
    return counts
  }
}

/// `settee_view_key(json, raw)`: the binary key (``ViewCollation``) of a key given as JSON
/// text; `settee_view_value(json)`: a value as views store it (`NULL` for null or missing,
/// numbers as numbers, anything else as its JSON text). Registered through SQLite's C API,
/// not GRDB's `DatabaseFunction` (whose argument arrays and strings cost as much as the
/// work): a view build calls them once per document.
enum ViewKeyFunctions {
  static func register(in db: SQLConnection) {
    sqlite3_create_function_v2(
      db.sqliteConnection, "settee_view_key", 2, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nil,
      { context, _, arguments in ViewKeyFunctions.key(context, arguments) }, nil, nil, nil)
    sqlite3_create_function_v2(
      db.sqliteConnection, "settee_view_value", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nil,
      { context, _, arguments in ViewKeyFunctions.value(context, arguments) }, nil, nil, nil)
  }

  private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

  private static func json(_ value: OpaquePointer?) throws -> JSON? {
    try RawStatement.bytes(ofArgument: value).map { try JSONParser.parse($0) }
  }

  private static func key(
    _ context: OpaquePointer?, _ arguments: UnsafeMutablePointer<OpaquePointer?>?
  ) {
    guard let arguments else { return }
    do {
      guard let json = try json(arguments[0]) else {
        sqlite3_result_null(context)
        return
      }
      let collation: ViewCollation = sqlite3_value_int(arguments[1]) != 0 ? .raw : .unicode
      let key = try collation.key(json)
      key.withUnsafeBytes { raw in
        sqlite3_result_blob(context, raw.baseAddress, Int32(raw.count), transient)
      }
    } catch {
      sqlite3_result_error(context, "settee_view_key: \(error)", -1)
    }
  }

  private static func value(
    _ context: OpaquePointer?, _ arguments: UnsafeMutablePointer<OpaquePointer?>?
  ) {
    guard let arguments else { return }
    guard let text = RawStatement.bytes(ofArgument: arguments[0]), let first = text.first else {
      sqlite3_result_null(context)
      return
    }
    switch first {
    case UInt8(ascii: "n"): sqlite3_result_null(context)
    case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
      switch try? JSONParser.parse(text) {
      case .int(let number)?: sqlite3_result_int64(context, number)
      case .double(let number)?: sqlite3_result_double(context, number)
      // An integer past 64 bits is stored as its text, as ViewStore.encodeValue stores it.
      case .largeInteger?:
        text.withMemoryRebound(to: CChar.self) {
          sqlite3_result_text(context, $0.baseAddress, Int32($0.count), transient)
        }
      default: sqlite3_result_error(context, "settee_view_value: a number that does not parse", -1)
      }
    default:
      text.withMemoryRebound(to: CChar.self) {
        sqlite3_result_text(context, $0.baseAddress, Int32($0.count), transient)
      }
    }
  }
}
