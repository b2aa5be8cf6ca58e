import GRDB

/// A piece of SQL built from three kinds of part: fixed SQL text written in this module,
/// bound values, and identifiers quoted by ``identifier(_:)``. User input can only ever
/// become a bound value, so it cannot change the statement.
struct SQLFragment: Sendable, Hashable, CustomStringConvertible {
  private(set) var text: String
  private(set) var arguments: [DatabaseValue]

  /// SQL text written in this module (never user input).
  init(_ text: StaticString) {
    // Not "\(text)": interpolation goes through the generic description machinery.
    self.text = text.withUTF8Buffer { String(decoding: $0, as: UTF8.self) }
    arguments = []
  }

  private init(text: String, arguments: [DatabaseValue]) {
    self.text = text
    self.arguments = arguments
  }

  /// A bound value: `?`.
  static func value(_ value: some DatabaseValueConvertible) -> SQLFragment {
    SQLFragment(text: "?", arguments: [value.databaseValue])
  }

  static func value(_ value: DatabaseValue) -> SQLFragment {
    SQLFragment(text: "?", arguments: [value])
  }

  /// A quoted identifier. Identifiers are made by Settee (`ix_12`, aliases such as `j3`),
  /// but they are quoted anyway, by this one function.
  static func identifier(_ name: String) -> SQLFragment {
    var text = "\""
    for character in name.unicodeScalars {
      if character == "\"" { text.unicodeScalars.append("\"") }
      text.unicodeScalars.append(character)
    }
    text += "\""
    return SQLFragment(text: text, arguments: [])
  }

  /// An integer written into the text (for generated numbers such as LIMIT counts).
  static func integer(_ number: Int) -> SQLFragment {
    SQLFragment(text: String(number), arguments: [])
  }

  /// `consuming`: in a chain `a + b + c`, each intermediate result is appended to in place
  /// rather than copied.
  static func + (lhs: consuming SQLFragment, rhs: SQLFragment) -> SQLFragment {
    lhs += rhs
    return lhs
  }

  static func += (lhs: inout SQLFragment, rhs: SQLFragment) {
    lhs.text += rhs.text
    lhs.arguments += rhs.arguments
  }

  /// The fragments joined by a separator.
  static func joined(_ parts: [SQLFragment], separator: StaticString) -> SQLFragment {
    guard var result = parts.first else { return SQLFragment("") }
    let separator = separator.withUTF8Buffer { String(decoding: $0, as: UTF8.self) }
    for part in parts.dropFirst() {
      result.text += separator
      result += part
    }
    return result
  }

  /// `(a AND b …)`; `1` for none.
  static func and(_ parts: [SQLFragment]) -> SQLFragment {
    parts.isEmpty ? SQLFragment("1") : balanced(parts[...], separator: " AND ")
  }

  /// `(a OR b …)`; `0` for none.
  static func or(_ parts: [SQLFragment]) -> SQLFragment {
    parts.isEmpty ? SQLFragment("0") : balanced(parts[...], separator: " OR ")
  }

  /// How many operands one flat `AND`/`OR` chain holds at most.
  static let maxChain = 64

  /// The parts joined by `separator` in parentheses; past ``maxChain`` parts, as a balanced
  /// tree of such groups. SQLite parses `a OR b OR c …` into a tree as deep as the list is
  /// long and refuses trees deeper than 1,000; a balanced tree of chains is
  /// `maxChain + log2(n)` deep, so lists of any length parse.
  static func balanced(_ parts: ArraySlice<SQLFragment>, separator: StaticString) -> SQLFragment {
    if parts.count <= maxChain {
      return SQLFragment("(") + joined(Array(parts), separator: separator) + SQLFragment(")")
    }
    let middle = parts.startIndex + parts.count / 2
    return SQLFragment("(") + balanced(parts[..<middle], separator: separator)
      + SQLFragment(separator) + balanced(parts[middle...], separator: separator)
      + SQLFragment(")")
  }

  /// This fragment without a leading keyword that it is known to start with.
  func dropFirst(_ keyword: StaticString) -> SQLFragment {
    let prefix = keyword.withUTF8Buffer { String(decoding: $0, as: UTF8.self) }
    precondition(text.hasPrefix(prefix), "\(text) does not start with \(prefix)")
    return SQLFragment(text: String(text.dropFirst(prefix.count)), arguments: arguments)
  }

  /// Parenthesized.
  var grouped: SQLFragment { SQLFragment("(") + self + SQLFragment(")") }

  /// The id in `column` is not a design document's (``Document/isDesignID(_:)``, in SQL):
  /// a range on the id under BINARY collation (bytes), so it costs a comparison and can
  /// use the id index.
  static func notDesignID(_ column: SQLFragment) -> SQLFragment {
    SQLFragment("(") + column + SQLFragment(" < ") + .value("_design/") + SQLFragment(" OR ")
      + column + SQLFragment(" >= ") + .value("_design0") + SQLFragment(")")
  }

  var statementArguments: StatementArguments {
    // GRDB's initializer for a sequence of concrete values maps it through a key path that
    // the runtime instantiates on every call (a tenth of a small query's time); the one for
    // existentials does not.
    StatementArguments(arguments.map { $0 as (any DatabaseValueConvertible)? })
  }

  var description: String { text }
}
