import GRDB
import GRDBSQLite
import SetteeCore

/// `settee_entry_key(rid, json, prefix_type…)`: an index entry's key for one field, from the
/// field's JSON text as `body -> path` gives it (NULL when missing) and the JSON types of the
/// values along the path before it. A value or path through an array needs one entry per
/// element (``IndexKeys``): the function then records the document's `rid` for the build to
/// index in Swift and returns NULL, which the build's `INSERT OR IGNORE` leaves out (key
/// columns are NOT NULL).
///
/// Registered through SQLite's C API rather than GRDB's `DatabaseFunction`: a build calls it
/// once per document and field, and GRDB's argument array and strings cost as much as the
/// parsing and encoding (about a sixth of a build). It exists only during a build
/// (``during(_:_:)``), with that build's record of documents as its user data.
enum EntryKeyFunction {
  /// The documents a build met with an array along an indexed field.
  final class ArrayDocuments {
    var rids = Set<Int64>()
  }

  /// Runs `body` with the function registered on `db`, and removes it afterwards.
  static func during<T>(_ db: SQLConnection, _ body: (ArrayDocuments) throws -> T) throws -> T {
    let documents = ArrayDocuments()
    let retained = Unmanaged.passRetained(documents)
    // Not SQLITE_DETERMINISTIC: it records what it sees.
    sqlite3_create_function_v2(
      db.sqliteConnection, "settee_entry_key", -1, SQLITE_UTF8, retained.toOpaque(),
      { context, count, arguments in EntryKeyFunction.call(context, Int(count), arguments) }, nil,
      nil, nil)
    defer {
      sqlite3_create_function_v2(
        db.sqliteConnection, "settee_entry_key", -1, SQLITE_UTF8, nil, nil, nil, nil, nil)
      retained.release()
    }
    return try body(documents)
  }

  private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

  private static func call(
    _ context: OpaquePointer?, _ count: Int, _ arguments: UnsafeMutablePointer<OpaquePointer?>?
  ) {
    guard let arguments, count >= 2, let userData = sqlite3_user_data(context) else {
      sqlite3_result_error(context, "settee_entry_key needs a rid and the field's JSON text", -1)
      return
    }
    func array() {
      Unmanaged<ArrayDocuments>.fromOpaque(userData).takeUnretainedValue().rids.insert(
        sqlite3_value_int64(arguments[0]))
      sqlite3_result_null(context)
    }
    for position in 2..<max(count, 2) where isArrayType(arguments[position]) {
      array()
      return
    }
    let value = arguments[1]
    guard let bytes = RawStatement.bytes(ofArgument: value) else {
      result(context, StoredIndex.missingKey)
      return
    }
    // Strings, integers and literals straight from their text; the rest parsed.
    var key: [UInt8] = []
    key.reserveCapacity(max(bytes.count + 2, 24))
    if CollationKey.appendPlain(jsonText: bytes, to: &key) {
      result(context, key)
      return
    }
    do {
      let json = try JSONParser.parse(bytes)
      if case .array = json {
        array()
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
