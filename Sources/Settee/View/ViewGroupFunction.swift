import GRDB
import GRDBSQLite
import SetteeCore

/// `settee_view_group(key, raw, level)`: the group of a view row at a group level, as a
/// binary key (``ViewCollation/groupKey(_:level:)``), so that reductions grouped by level
/// run as SQL `GROUP BY`. Registered through SQLite's C API, as ``ViewKeyFunctions`` are: it
/// runs once per row of a reduction.
enum ViewGroupFunction {
  static func register(in db: SQLConnection) {
    sqlite3_create_function_v2(
      db.sqliteConnection, "settee_view_group", 3, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nil,
      { context, _, arguments in ViewGroupFunction.call(context, arguments) }, nil, nil, nil)
  }

  private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

  private static func call(
    _ context: OpaquePointer?, _ arguments: UnsafeMutablePointer<OpaquePointer?>?
  ) {
    guard let arguments, let blob = sqlite3_value_blob(arguments[0]) else {
      sqlite3_result_null(context)
      return
    }
    let key = UnsafeRawBufferPointer(start: blob, count: Int(sqlite3_value_bytes(arguments[0])))
    let collation: ViewCollation = sqlite3_value_int(arguments[1]) != 0 ? .raw : .unicode
    let level = Int(sqlite3_value_int64(arguments[2]))
    guard let group = collation.groupKey(key, level: level) else {
      sqlite3_result_error(context, "settee_view_group: a view row holds a damaged key", -1)
      return
    }
    group.withUnsafeBytes { raw in
      sqlite3_result_blob(context, raw.baseAddress, Int32(raw.count), transient)
    }
  }
}
