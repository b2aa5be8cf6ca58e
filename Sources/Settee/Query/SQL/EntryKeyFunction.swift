import GRDB
import GRDBSQLite
import SetteeCore

/// `settee_entry_key(json, prefix_type…)`: an index entry's key for one field, from the
/// field's JSON text as `body -> path` gives it (NULL when missing) and the JSON types of the
/// values along the path before it. It refuses (``SQLFunctions/arrayInIndexedField``) a
/// value or path through an array, which needs one entry per element: the SQL build of an
/// index then stops and the index is built in Swift.
///
/// Registered through SQLite's C API rather than GRDB's `DatabaseFunction`: a build calls it
/// once per document and field, and GRDB's argument array and strings cost as much as the
/// parsing and encoding (about a sixth of a build).
enum EntryKeyFunction {
  static func register(in db: SQLConnection) {
    sqlite3_create_function_v2(
      db.sqliteConnection, "settee_entry_key", -1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nil,
      { context, count, arguments in EntryKeyFunction.call(context, Int(count), arguments) }, nil,
      nil, nil)
  }

  private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

  private static func call(
    _ context: OpaquePointer?, _ count: Int, _ arguments: UnsafeMutablePointer<OpaquePointer?>?
  ) {
    guard let arguments, count >= 1 else {
      sqlite3_result_error(context, "settee_entry_key needs the field's JSON text", -1)
      return
    }
    for position in 1..<max(count, 1) where isArrayType(arguments[position]) {
      sqlite3_result_error(context, SQLFunctions.arrayInIndexedField, -1)
      return
    }
    let value = arguments[0]
    guard sqlite3_value_type(value) != SQLITE_NULL, let text = sqlite3_value_text(value) else {
      result(context, StoredIndex.missingKey)
      return
    }
    let bytes = UnsafeBufferPointer(start: text, count: Int(sqlite3_value_bytes(value)))
    do {
      let json = try JSONParser.parse(bytes)
      if case .array = json {
        sqlite3_result_error(context, SQLFunctions.arrayInIndexedField, -1)
        return
      }
      result(context, CollationKey.encode(json))
    } catch {
      sqlite3_result_error(context, "settee_entry_key: \(error)", -1)
    }
  }

  private static func isArrayType(_ value: OpaquePointer?) -> Bool {
    guard sqlite3_value_type(value) == SQLITE_TEXT, sqlite3_value_bytes(value) == 5,
      let text = sqlite3_value_text(value)
    else { return false }
    return UnsafeBufferPointer(start: text, count: 5).elementsEqual("array".utf8)
  }

  private static func result(_ context: OpaquePointer?, _ key: [UInt8]) {
    key.withUnsafeBytes { raw in
      sqlite3_result_blob(context, raw.baseAddress, Int32(raw.count), transient)
    }
  }
}
