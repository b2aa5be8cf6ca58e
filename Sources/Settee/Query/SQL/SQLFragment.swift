import GRDB
import SetteeCore

/// A piece of SQL built from three kinds of part: fixed SQL text written in this module,
/// bound values, and identifiers quoted by ``identifier(_:)``. User input can only ever
/// become a bound value, so it cannot change the statement.
struct SQLFragment: Sendable, Hashable, CustomStringConvertible {
  /// The text's UTF-8 bytes: a literal's where they are, until something is appended (a
  /// statement is built from dozens of literals; copying each into a string of its own
  /// was a third of planning a small query).
  private var storage: Storage
  private(set) var arguments: [DatabaseValue]

  private enum Storage: Sendable {
    case literal(StaticString)
    case bytes([UInt8])
  }

  /// SQL text written in this module (never user input).
  init(_ text: StaticString) {
    storage = .literal(text)
    arguments = []
  }

  private init(literal: StaticString, arguments: [DatabaseValue]) {
    storage = .literal(literal)
    self.arguments = arguments
  }

  private init(text: String, arguments: [DatabaseValue]) {
    storage = .bytes(Array(text.utf8))
    self.arguments = arguments
  }

  /// The SQL text.
  var text: String { withUTF8 { String(decoding: $0, as: UTF8.self) } }

  private func withUTF8<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
    switch storage {
    case .literal(let literal): literal.withUTF8Buffer(body)
    case .bytes(let bytes): bytes.withUnsafeBufferPointer(body)
    }
  }

  private mutating func append(_ tail: UnsafeBufferPointer<UInt8>) {
    switch storage {
    case .literal(let literal):
      var bytes: [UInt8] = []
      bytes.reserveCapacity(max(128, literal.utf8CodeUnitCount + tail.count))
      literal.withUTF8Buffer { bytes.append(contentsOf: $0) }
      bytes.append(contentsOf: tail)
      storage = .bytes(bytes)
    case .bytes(var bytes):
      // Out of the enum first, so that the array is not shared when it grows.
      storage = .literal("")
      bytes.append(contentsOf: tail)
      storage = .bytes(bytes)
    }
  }

  static func == (lhs: SQLFragment, rhs: SQLFragment) -> Bool {
    lhs.arguments == rhs.arguments && lhs.hasSameText(as: rhs)
  }

  private func hasSameText(as other: SQLFragment) -> Bool {
    withUTF8 { left in other.withUTF8 { right in left.elementsEqual(right) } }
  }

  /// Whether the two are the same statement, text and values byte for byte (`==` compares
  /// text values by Swift's canonical equivalence, which binds different bytes).
  func isIdentical(to other: SQLFragment) -> Bool {
    guard hasSameText(as: other), arguments.count == other.arguments.count else { return false }
    return zip(arguments, other.arguments).allSatisfy { left, right in
      switch (left.storage, right.storage) {
      case (.null, .null): true
      case (.int64(let a), .int64(let b)): a == b
      case (.double(let a), .double(let b)): a.bitPattern == b.bitPattern
      case (.string(let a), .string(let b)): a.hasSameBytes(as: b)
      case (.blob(let a), .blob(let b)): a == b
      default: false
      }
    }
  }

  /// The same text with other values bound (as many, in the same places).
  func replacingArguments(_ arguments: [DatabaseValue]) -> SQLFragment {
    precondition(
      arguments.count == self.arguments.count, "a statement's values are replaced one for one")
    var result = self
    result.arguments = arguments
    return result
  }

  func hash(into hasher: inout Hasher) {
    withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    hasher.combine(arguments)
  }

  /// A bound value: `?`.
  static func value(_ value: some DatabaseValueConvertible) -> SQLFragment {
    SQLFragment(literal: "?", arguments: [value.databaseValue])
  }

  static func value(_ value: DatabaseValue) -> SQLFragment {
    SQLFragment(literal: "?", arguments: [value])
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
    rhs.withUTF8 { lhs.append($0) }
    if !rhs.arguments.isEmpty { lhs.arguments += rhs.arguments }
  }

  /// The fragments joined by a separator.
  static func joined(_ parts: [SQLFragment], separator: StaticString) -> SQLFragment {
    guard var result = parts.first else { return SQLFragment("") }
    for part in parts.dropFirst() {
      separator.withUTF8Buffer { result.append($0) }
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
    withUTF8 { bytes in
      keyword.withUTF8Buffer { prefix in
        precondition(
          bytes.starts(with: prefix), "\(text) does not start with \(keyword)")
        var result = SQLFragment("")
        result.append(UnsafeBufferPointer(rebasing: bytes[prefix.count...]))
        result.arguments = arguments
        return result
      }
    }
  }

  /// This fragment without a trailing piece that holds no parameter (`suffix`'s arguments
  /// are not compared), or nil when it does not end with its text.
  func droppingSuffix(_ suffix: SQLFragment) -> SQLFragment? {
    precondition(suffix.arguments.isEmpty, "\(suffix) holds parameters")
    return withUTF8 { bytes in
      suffix.withUTF8 { tail in
        guard bytes.count >= tail.count, bytes.reversed().starts(with: tail.reversed()) else {
          return nil
        }
        var result = SQLFragment("")
        result.append(UnsafeBufferPointer(rebasing: bytes[..<(bytes.count - tail.count)]))
        result.arguments = arguments
        return result
      }
    }
  }

  /// Parenthesized.
  var grouped: SQLFragment { SQLFragment("(") + self + SQLFragment(")") }

  /// `documents d WHERE …`: the live documents of collection `cid`, read through the id
  /// index, by name: statistics gathered while one collection held every document
  /// (`ANALYZE` after a large import) make SQLite expect that many rows for any
  /// collection, and read the whole table for a small one.
  static func liveDocuments(cid: Int64) -> SQLFragment {
    SQLFragment("documents d INDEXED BY documents_by_id WHERE d.cid = ") + .value(cid)
      + SQLFragment(" AND d.deleted = 0")
  }

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
