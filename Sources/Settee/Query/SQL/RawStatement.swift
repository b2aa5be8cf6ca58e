import Foundation
import GRDB
import GRDBSQLite
import SetteeCore

/// Runs a read statement through SQLite's C API: values bound with `sqlite3_bind_*` and
/// columns read with `sqlite3_column_*`, without GRDB's `StatementArguments` and `Row`
/// (whose generic conversions cost as much as a small indexed query itself).
///
/// A statement run here comes only from ``SQLConnection/rawStatement(sql:)`` and its
/// kin (``Prepared`` has no other maker): its SQL text carries ``marker``, so that the
/// connection's statement cache keeps it apart from any statement GRDB's fetch methods
/// run with the same SQL (GRDB keeps its own record of a cached statement's bindings,
/// which binding here behind its back would falsify).
struct RawStatement {
  /// A statement prepared for ``RawStatement`` only.
  struct Prepared {
    fileprivate let statement: Statement
  }

  /// Starts the SQL text of every cached raw statement (a comment: SQLite ignores it).
  static let marker = "/* raw */ "

  /// Kept so that a statement made for one use (not cached) lives as long as this.
  private let statement: Statement
  private let handle: SQLiteStatement
  private let connection: OpaquePointer?

  private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

  /// Prepares (or reuses) the statement for `sql` and binds its values.
  init(_ db: SQLConnection, _ sql: SQLFragment) throws {
    self.init(db, statement: try db.rawStatement(sql: sql.text), arguments: sql.arguments)
  }

  /// Binds `arguments` to a statement already prepared (cached or of its own).
  init(_ db: SQLConnection, statement: Prepared, arguments: [DatabaseValue]) {
    self.init(db, statement: statement)
    for (offset, value) in arguments.enumerated() {
      let index = Int32(offset + 1)
      switch value.storage {
      case .null: bindNull(index)
      case .int64(let number): bind(index, number)
      case .double(let number): bind(index, double: number)
      case .string(let text): bind(index, text: text)
      case .blob(let data):
        data.withUnsafeBytes { bind(index, blob: $0.assumingMemoryBound(to: UInt8.self)) }
      }
    }
  }

  /// A statement already prepared, to be bound parameter by parameter with `bind` (every
  /// parameter: the bindings of the last use were cleared after it).
  init(_ db: SQLConnection, statement prepared: Prepared) {
    statement = prepared.statement
    handle = statement.sqliteStatement
    connection = db.sqliteConnection
    sqlite3_reset(handle)
  }

  /// Binds parameter `index` (from 1) to NULL.
  func bindNull(_ index: Int32) { sqlite3_bind_null(handle, index) }

  /// Binds parameter `index` (from 1) to an integer.
  func bind(_ index: Int32, _ number: Int64) { sqlite3_bind_int64(handle, index, number) }

  /// Binds parameter `index` (from 1) to a floating-point number.
  func bind(_ index: Int32, double number: Double) { sqlite3_bind_double(handle, index, number) }

  /// Binds parameter `index` (from 1) to text.
  func bind(_ index: Int32, text: String) {
    var text = text
    text.withUTF8 { bind(index, text: $0) }
  }

  /// Binds parameter `index` (from 1) to text given as UTF-8 bytes. (Empty bytes may come
  /// without an address, which SQLite would take for NULL.)
  func bind(_ index: Int32, text bytes: UnsafeBufferPointer<UInt8>) {
    if let base = bytes.baseAddress {
      _ = sqlite3_bind_text(handle, index, base, Int32(bytes.count), Self.transient)
    } else {
      _ = sqlite3_bind_text(handle, index, "", 0, Self.transient)
    }
  }

  /// Binds parameter `index` (from 1) to a blob.
  func bind(_ index: Int32, blob bytes: UnsafeBufferPointer<UInt8>) {
    if let base = bytes.baseAddress {
      _ = sqlite3_bind_blob(handle, index, base, Int32(bytes.count), Self.transient)
    } else {
      _ = sqlite3_bind_zeroblob(handle, index, 0)
    }
  }

  /// Binds parameter `index` (from 1) to the value of `column` in `row`'s current row, as
  /// it is (no conversion).
  func bind(_ index: Int32, columnOf row: RawStatement, _ column: Int32) {
    sqlite3_bind_value(handle, index, sqlite3_column_value(row.handle, column))
  }

  /// Steps through the rows, calling `body` with each until it returns false.
  func forEach(_ body: (RawStatement) throws -> Bool) throws {
    defer {
      sqlite3_reset(handle)
      sqlite3_clear_bindings(handle)
    }
    while true {
      let code = sqlite3_step(handle)
      if code == SQLITE_DONE { return }
      guard code == SQLITE_ROW else {
        throw DatabaseError(
          resultCode: ResultCode(rawValue: code),
          message: connection.map { String(cString: sqlite3_errmsg($0)) })
      }
      if !(try body(self)) { return }
    }
  }

  /// The first row read by `read`, or `nil` when there is none.
  func first<T>(_ read: (RawStatement) throws -> T) throws -> T? {
    var result: T?
    try forEach { row in
      result = try read(row)
      return false
    }
    return result
  }

  /// Runs a statement that returns no rows (an insert, an update).
  func execute() throws { try forEach { _ in false } }

  /// The bytes of a SQL function's text argument as they are (`sqlite3_value_text` would
  /// first copy them to add a NUL terminator); `nil` for NULL (or empty text).
  static func bytes(ofArgument value: OpaquePointer?) -> UnsafeBufferPointer<UInt8>? {
    guard sqlite3_value_type(value) != SQLITE_NULL, let text = sqlite3_value_blob(value) else {
      return nil
    }
    return UnsafeBufferPointer(
      start: text.assumingMemoryBound(to: UInt8.self), count: Int(sqlite3_value_bytes(value)))
  }

  /// The column's bytes (text or blob); empty for NULL.
  func bytes(_ column: Int32) -> UnsafeBufferPointer<UInt8> {
    let count = Int(sqlite3_column_bytes(handle, column))
    guard count > 0, let text = sqlite3_column_text(handle, column) else {
      return UnsafeBufferPointer(start: nil, count: 0)
    }
    return UnsafeBufferPointer(start: text, count: count)
  }

  /// The column as a string.
  func string(_ column: Int32) -> String { String(decoding: bytes(column), as: UTF8.self) }

  /// The column as an integer (0 for NULL).
  func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }

  /// Whether the column is NULL.
  func isNull(_ column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }

  /// Whether the column holds text.
  func isText(_ column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_TEXT }

  /// The column as JSON, for columns of Settee's tables that hold JSON text or numbers
  /// (NULL is `null`); text that does not parse is `corruption`, naming `what`.
  func json(_ column: Int32, _ what: @autoclosure () -> String) throws -> JSON {
    switch sqlite3_column_type(handle, column) {
    case SQLITE_NULL: .null
    case SQLITE_INTEGER: .int(sqlite3_column_int64(handle, column))
    case SQLITE_FLOAT: .double(sqlite3_column_double(handle, column))
    default: try StoredData.reading(what()) { try JSONParser.parse(bytes(column)) }
    }
  }
}

extension SQLConnection {
  /// `slot`'s statement, prepared from `sql` the first time and kept there: a statement
  /// that runs for every document of a write or a build is held by its user, since the
  /// connection's statement cache hashes the SQL text at each lookup.
  func rawStatement(_ slot: inout RawStatement.Prepared?, _ sql: String) throws
    -> RawStatement.Prepared
  {
    if let statement = slot { return statement }
    let statement = try rawStatement(sql: sql)
    slot = statement
    return statement
  }

  /// The connection's cached statement for `sql`, for ``RawStatement`` only (its text
  /// marked apart from GRDB's: ``RawStatement/marker``).
  func rawStatement(sql: String) throws -> RawStatement.Prepared {
    RawStatement.Prepared(statement: try cachedStatement(sql: RawStatement.marker + sql))
  }

  /// A statement of its own for `sql` (not cached), for ``RawStatement`` only.
  func uncachedRawStatement(sql: String) throws -> RawStatement.Prepared {
    RawStatement.Prepared(statement: try makeStatement(sql: sql))
  }

  /// Runs `body` in a deferred transaction (a read's snapshot is taken by its first
  /// read), begun and ended with the connection's cached statements; rolled back when
  /// `body` throws. For connections outside any transaction.
  func inReadTransaction<T>(_ body: () throws -> T) throws -> T {
    try RawStatement(self, statement: rawStatement(sql: "BEGIN DEFERRED TRANSACTION")).execute()
    let result: T
    do {
      result = try body()
      try RawStatement(self, statement: rawStatement(sql: "COMMIT TRANSACTION")).execute()
    } catch {
      if !isInsideTransaction { throw error }
      try? RawStatement(self, statement: rawStatement(sql: "ROLLBACK TRANSACTION")).execute()
      throw error
    }
    return result
  }

  /// Runs `body` with a page cache of up to `mebibytes` (SQLite's default is 2 MB), then
  /// gives the connection its own size back. For writes that touch more pages than 2 MB
  /// hold: a smaller cache spills changed pages into the WAL and writes them again when
  /// they change again, and reads pages a second time that the same write already read.
  /// The cache only grows as pages are used, and shrinks again when the size goes back:
  /// the size is what the write may hold in memory at its peak.
  func withLargePageCache<T>(mebibytes: Int = 64, _ body: () throws -> T) throws -> T {
    let size = try Int.fetchOne(self, sql: "PRAGMA cache_size") ?? -2_000
    try execute(sql: "PRAGMA cache_size = -\(mebibytes * 1024)")
    defer { try? execute(sql: "PRAGMA cache_size = \(size)") }
    return try body()
  }
}
