import GRDB
import SetteeCore

/// SQLite's refusals of a statement, by result code: what the user's query asked becomes
/// the user's error, `invalidQuery` or `limitExceeded`, and a table, column or index of
/// Settee's that is missing from the file is `corruption`, instead of a `storage` failure.
///
/// `SQLITE_TOOBIG` says itself what it is. A statement SQLite cannot prepare, though, is
/// `SQLITE_ERROR` whatever the reason (its extended codes name other things: a missing
/// collation, a retry, a snapshot), so within that code alone the message tells the
/// reasons apart, here in one place. A message this table does not know (SQLite worded
/// it otherwise) leaves the error a `storage` failure that quotes it: never a wrong kind.
struct QueryRefusal {
  var code: SetteeError.Code
  var reason: String

  private static let known: [(prefix: String, code: SetteeError.Code, reason: String)] = [
    (
      "parser stack overflow", .limitExceeded,
      "the query nests too deeply for SQLite's parser (nested function calls, CASE and prefix operators cost the most): write it with fewer levels"
    ),
    (
      "Expression tree is too large", .limitExceeded,
      "the query's expression is too deep for SQLite (at most 1,000 levels)"
    ),
    (
      "too many SQL variables", .limitExceeded,
      "the query binds more values than SQLite allows in one statement (aliases expanded, each use of one binds its values again)"
    ),
    (
      "too many terms in ORDER BY clause", .limitExceeded,
      "the query orders by more terms than SQLite allows (64)"
    ),
    (
      "too many terms in compound SELECT", .limitExceeded,
      "the query has more parts than SQLite allows in one statement"
    ),
    (
      "LIKE or GLOB pattern too complex", .limitExceeded,
      "a LIKE or GLOB pattern is longer than SQLite allows (50,000 bytes)"
    ),
    (
      "too many arguments on function", .invalidQuery,
      "a function is given more arguments than SQLite allows (SQLITE_MAX_FUNCTION_ARG)"
    ),
    (
      "ESCAPE expression must be a single character", .invalidQuery,
      "the ESCAPE of a LIKE must be a single character"
    ),
    (
      "integer overflow", .invalidQuery,
      "an integer computed by the query overflows 64 bits (such as abs(-9223372036854775808))"
    ),
    (
      "no such table", .corruption,
      "the database file is damaged: a table that Settee made is missing"
    ),
    (
      "no such column", .corruption,
      "the database file is damaged: a column that Settee made is missing"
    ),
    (
      "no such index", .corruption,
      "the database file is damaged: an index that Settee made is missing"
    ),
  ]

  init?(_ error: DatabaseError) {
    switch error.extendedResultCode {
    case .SQLITE_TOOBIG:
      (code, reason) = (
        .limitExceeded, "the query builds a string or blob larger than SQLite allows"
      )
    case _ where error.resultCode == .SQLITE_ERROR:
      guard let message = error.message,
        let match = Self.known.first(where: { message.hasPrefix($0.prefix) })
      else { return nil }
      (code, reason) = (match.code, match.reason)
      // SQLite's message names the function ("too many arguments on function \"char\"").
      if match.prefix == "too many arguments on function" { reason = "\(message): \(reason)" }
    default:
      return nil
    }
  }
}
