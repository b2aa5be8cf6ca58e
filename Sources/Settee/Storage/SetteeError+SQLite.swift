import Foundation
import GRDB
import SetteeCore

extension SetteeError {
  /// Converts any error to a ``SetteeError``: ours pass through; SQLite's become `busy`,
  /// `readOnly`, `corruption`, `io` or `storage` by their result code.
  static func from(_ error: any Error, _ context: String, busyTimeout: Double? = nil)
    -> SetteeError
  {
    if let error = error as? SetteeError { return error }
    if let error = error as? RowDecodingError {
      // Settee wrote every value it reads back (Row.value(_:)): one of another type or
      // NULL where it writes none was damaged in the file.
      return SetteeError(
        .corruption,
        "\(context): the database file is damaged (a stored value is not what Settee writes there)",
        cause: "\(error)", underlyingError: error)
    }
    guard let error = error as? DatabaseError else {
      return SetteeError(.storage, context, cause: "\(error)", underlyingError: error)
    }
    let cause = error.message ?? "\(error.resultCode)"
    if error.resultCode == .SQLITE_ERROR, let message = error.message,
      message.hasPrefix("malformed MATCH expression")
    {
      // FTS4's own parser refused a search that Settee's checks let through (SQLITE_ERROR,
      // as for every statement SQLite refuses: see QueryRefusal).
      return SetteeError(
        .invalidQuery,
        "a \"$text\" search is malformed (as SQLite's full-text search reads it, \(message.dropFirst("malformed MATCH expression: ".count))): check its AND, OR, NOT and NEAR",
        underlyingError: error)
    }
    if error.extendedResultCode == SQLFunctions.limitExceeded {
      return SetteeError(.limitExceeded, cause, underlyingError: error)
    }
    if let refused = QueryRefusal(error) {
      return SetteeError(
        refused.code, "\(context): \(refused.reason)", cause: cause, underlyingError: error)
    }
    switch error.resultCode {
    case .SQLITE_INTERRUPT:
      return SetteeError(
        .limitExceeded,
        "\(context): the query ran past its time limit (Configuration.queryTimeLimit) and was stopped; nothing was changed",
        cause: cause, underlyingError: error)
    case .SQLITE_BUSY, .SQLITE_LOCKED:
      let waited = busyTimeout.map { " for \($0) s (the busy timeout)" } ?? ""
      return SetteeError(
        .busy,
        "\(context): the database is locked by another connection or process that is writing; waited\(waited). An all-or-nothing import holds the write lock until it commits (import with --batch-size to commit as it goes); raise the timeout with Configuration.busyTimeout or --busy-timeout",
        cause: cause, underlyingError: error)
    case .SQLITE_READONLY:
      return SetteeError(
        .readOnly, "\(context): the database file or its directory cannot be written",
        cause: cause, underlyingError: error)
    case .SQLITE_CORRUPT, .SQLITE_NOTADB:
      return SetteeError(
        .corruption, "\(context): the database file is damaged", cause: cause,
        underlyingError: error)
    case .SQLITE_FULL:
      return SetteeError(
        .io, "\(context): the disk is full; nothing was written", cause: cause,
        underlyingError: error)
    case .SQLITE_CANTOPEN, .SQLITE_IOERR, .SQLITE_PERM:
      return SetteeError(.io, context, cause: cause, underlyingError: error)
    default:
      return SetteeError(.storage, context, cause: cause, underlyingError: error)
    }
  }

  static func wrapping<T>(_ context: String, _ body: () throws -> T) throws -> T {
    do { return try body() } catch { throw from(error, context) }
  }
}
