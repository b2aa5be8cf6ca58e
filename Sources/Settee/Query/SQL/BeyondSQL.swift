import GRDB
import SetteeCore

/// Why a selector is checked by the reference matcher in Swift rather than in SQL.
///
/// The SQL path must give exactly the matcher's results; some selectors it cannot give
/// them for, or not at a sane size, and those are filtered in Swift instead (linear in the
/// selector, whatever its shape): the query still answers, correctly.
enum BeyondSQL: Error, Hashable {
  /// A string in the selector holds U+0000, which SQLite's C interface cuts off when it is
  /// bound (so `"a\u0000b"` would compare as `"a"`).
  case nulInValue
  /// A path that may cross arrays at many levels: the SQL for it grows as 2^components.
  case longPath(FieldPath)
  /// Paths inside `$elemMatch`, `$allMatch` or `$keyMapMatch` multiply: too many copies.
  case tooLarge
  /// SQLite refused the statement as too large or too deep (its own limits: expression
  /// depth, parser stack, number of variables or terms).
  case sqliteLimit(String)

  /// Whether SQLite's error says the statement is beyond one of its size limits: a
  /// string or blob too long (`SQLITE_TOOBIG`), or a statement it refused to prepare
  /// (`SQLITE_ERROR`, which has no finer code: its message names the limit, as
  /// ``QueryRefusal`` reads it).
  static func isSizeLimit(_ error: DatabaseError) -> Bool {
    // SQLite's own TOOBIG, not a function's limit (``SQLFunctions/limitExceeded``).
    if error.extendedResultCode == .SQLITE_TOOBIG { return true }
    guard error.resultCode == .SQLITE_ERROR, let message = error.message else { return false }
    return [
      "parser stack overflow", "Expression tree is too large", "too many SQL variables",
      "too many terms in compound SELECT", "too many columns",
      "too many FROM clause terms", "at most 64 tables in a join",
    ].contains { message.contains($0) }
  }

  var text: String {
    switch self {
    case .nulInValue: "a string in the selector holds U+0000, which SQLite's text functions cut off"
    case .longPath(let path):
      "the path \(JSONWriter.string(.string(path.description))) crosses arrays at too many levels for SQL of a sane size"
    case .tooLarge: "its SQL would hold more than \(SelectorCompiler.maxConditionCopies) conditions"
    case .sqliteLimit(let message): "SQLite cannot run the selector's SQL (\(message))"
    }
  }
}

extension Selector {
  /// Whether a string anywhere in the selector's arguments holds U+0000.
  var holdsNUL: Bool {
    switch self {
    case .all, .text: false
    case .not(let inner): inner.holdsNUL
    case .and(let parts), .or(let parts): parts.contains { $0.holdsNUL }
    case .condition(_, let condition): condition.holdsNUL
    }
  }
}

extension Condition {
  var holdsNUL: Bool {
    switch self {
    case .equal(let value), .lessThan(let value), .lessThanOrEqual(let value),
      .greaterThan(let value), .greaterThanOrEqual(let value):
      value.holdsNUL
    case .in(let values), .all(let values): values.contains { $0.holdsNUL }
    case .regex(let text), .beginsWith(let text): Names.containsNUL(text)
    case .elementMatch(let selector), .allMatch(let selector), .keyMapMatch(let selector):
      selector.holdsNUL
    case .exists, .type, .size, .mod: false
    }
  }
}

extension JSON {
  var holdsNUL: Bool {
    switch self {
    case .string(let text): Names.containsNUL(text)
    case .array(let elements): elements.contains { $0.holdsNUL }
    case .object(let object): object.contains { Names.containsNUL($0.key) || $0.value.holdsNUL }
    default: false
    }
  }
}
