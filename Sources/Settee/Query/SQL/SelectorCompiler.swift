import Foundation
import GRDB
import SetteeCore

/// Compiles a ``Selector`` into an SQL boolean expression over a row of `documents` (NULL,
/// which SQLite gives for a missing value, counts as false throughout), with SQLite's JSON functions, so that the SQL path gives exactly the
/// reference ``Matcher``'s results.
///
/// A pure function of the selector: it reads no database, and every value and JSON path
/// reaches SQL as a bound argument.
struct SelectorCompiler {
  /// The SQL names of the document row's columns.
  struct Row: Equatable {
    var body: SQLFragment
    var id: SQLFragment
    var rev: SQLFragment
    var rowid: SQLFragment

    static let documents = Row(
      body: SQLFragment("d.body"), id: SQLFragment("d.id"), rev: SQLFragment("d.rev"),
      rowid: SQLFragment("d.rid"))
  }

  /// What a selector is evaluated against.
  enum Context {
    case document(Row)
    /// An array element (inside `$elemMatch`/`$allMatch`): its value and JSON type columns.
    case element(value: SQLFragment, type: SQLFragment)
    /// An object member name (inside `$keyMapMatch`).
    case key(SQLFragment)
  }

  /// One value found at a path.
  enum Candidate {
    /// The value at JSON path `path` (bound) inside the JSON text `source`.
    case path(source: SQLFragment, path: String)
    /// A value and its JSON type held in columns (`value` is JSON text for arrays).
    case column(value: SQLFragment, type: SQLFragment)
    /// A string held in a column that is not JSON (`_id`, `_rev`, a member name).
    case text(SQLFragment)

    var value: SQLFragment {
      switch self {
      case .path(let source, let path):
        SQLFragment("json_extract(") + source + SQLFragment(", ") + .value(path) + SQLFragment(")")
      case .column(let value, _), .text(let value): value
      }
    }

    /// Whether the value may be an array or object (and JSON functions may read it).
    var mayBeContainer: Bool {
      if case .text = self { false } else { true }
    }

    var type: SQLFragment {
      switch self {
      case .path(let source, let path):
        SQLFragment("json_type(") + source + SQLFragment(", ") + .value(path) + SQLFragment(")")
      case .column(_, let type): type
      case .text: SQLFragment("'text'")
      }
    }

    /// `json_each(…)` over the value (an array or object).
    var each: SQLFragment {
      switch self {
      case .path(let source, let path):
        SQLFragment("json_each(") + source + SQLFragment(", ") + .value(path) + SQLFragment(")")
      case .column(let value, _), .text(let value):
        SQLFragment("json_each(") + value + SQLFragment(")")
      }
    }

    var arrayLength: SQLFragment {
      switch self {
      case .path(let source, let path):
        SQLFragment("json_array_length(") + source + SQLFragment(", ") + .value(path)
          + SQLFragment(")")
      case .column(let value, _), .text(let value):
        SQLFragment("json_array_length(") + value + SQLFragment(")")
      }
    }
  }

  /// How many aliases (`m1`, `j2`) the SQL has used, to name the next one.
  var aliasCount = 0
  /// How many conditions the SQL holds so far: nested paths multiply (each copy of an
  /// `$elemMatch` holds its own paths), so the total is bounded too.
  var conditionCopies = 0
  static let maxConditionCopies = 4096
  /// The collection's TEXT index, for `$text` clauses.
  var textIndex: TextIndex.Query?

  /// Compiles a selector over a `documents` row aliased `d`, with the collection's TEXT
  /// index when it has one.
  static func compile(_ selector: Selector, textIndex: TextIndex.Query?, nulSafe: Bool = true)
    throws -> SQLFragment
  {
    if selector.holdsNUL { throw BeyondSQL.nulInValue }
    guard let textIndex, selector.textClauseCount > 0 else {
      return try compile(selector, nulSafe: nulSafe)
    }
    var compiler = SelectorCompiler()
    compiler.textIndex = textIndex
    return try compiler.compile(selector, .document(.documents))
  }

  /// Compiles a selector over a `documents` row aliased `d`.
  ///
  /// Compiled selectors are kept in a small cache: an application runs the same few
  /// query shapes again and again, and compiling costs more than running an indexed query.
  ///
  /// - Parameter nulSafe: whether documents holding U+0000 go to the matcher
  ///   (``nulSafe(_:_:_:)``); only a collection known to hold none may skip it.
  static func compile(_ selector: Selector, row: Row = .documents, nulSafe: Bool = true) throws
    -> SQLFragment
  {
    let cacheable = row == .documents
    let key = CacheKey(selector: selector, nulSafe: nulSafe)
    if cacheable, let cached = cache.withLock({ $0[key] }) { return cached }
    if selector.holdsNUL { throw BeyondSQL.nulInValue }
    var compiler = SelectorCompiler()
    var compiled = try compiler.compile(selector, .document(row))
    if nulSafe { compiled = SelectorCompiler.nulSafe(compiled, selector, row) }
    if cacheable {
      cache.withLock { cache in
        if cache.count >= 256 { cache.removeAll(keepingCapacity: true) }
        cache[key] = compiled
      }
    }
    return compiled
  }

  struct CacheKey: Hashable {
    var selector: Selector
    var nulSafe: Bool
  }

  private static let cache = Locked<[CacheKey: SQLFragment]>([:])

  mutating func compile(_ selector: Selector, _ context: Context) throws -> SQLFragment {
    switch selector {
    case .all: return SQLFragment("1")
    case .and(let parts): return .and(try parts.map { try compile($0, context) })
    case .or(let parts) where parts.count > SelectorCompiler.maxInlineList:
      return .or(try SelectorCompiler.mergingEqualities(parts).map { try compile($0, context) })
    case .or(let parts): return .or(try parts.map { try compile($0, context) })
    // NULL (an unknown, which SQLite gives for a missing value) counts as false; `IS NOT 1`
    // keeps that true under negation, so NOT gives the complement.
    case .not(let inner): return (try compile(inner, context)).grouped + SQLFragment(" IS NOT 1")
    case .text(let search):
      guard let textIndex else {
        throw SetteeError(
          .noUsableIndex,
          "\"$text\" needs a TEXT index on the collection: create one with ensureIndexed(fields, name:, type: .text)"
        )
      }
      guard case .document(let row) = context else {
        throw SetteeError(.invalidQuery, "\"$text\" may only apply to whole documents")
      }
      return SQLFragment("(") + row.rowid + SQLFragment(" IN (") + (try textIndex.rids(search))
        + SQLFragment("))")
    case .condition(let path, let condition):
      let compiled = try candidates(context, path) { compiler, candidate in
        try compiler.condition(condition, candidate)
      }
      guard case .document(let row) = context,
        let needles = SelectorCompiler.needles(path, condition)
      else {
        return compiled
      }
      // A document can only hold one of these strings if its JSON text holds the string's
      // JSON form: bodies are printed by JSONWriter, one spelling per string. Testing that
      // first is a byte search, far cheaper than the JSON functions, and never changes the
      // result (the condition implies it).
      let found = SQLFragment.or(
        needles.map {
          SQLFragment("instr(") + row.body + SQLFragment(", ") + .value($0) + SQLFragment(")")
        })
      return SQLFragment("(") + found + SQLFragment(" AND ") + compiled + SQLFragment(")")
    }
  }

  /// The JSON texts one of which a document's body must contain for `condition` to hold at
  /// `path`: equality with strings, and the required text of a `$regex` (not under `_id` or
  /// `_rev`, which are not in the body).
  static func needles(_ path: FieldPath, _ condition: Condition) -> [String]? {
    guard let first = path.components.first, first != "_id", first != "_rev" else { return nil }
    switch condition {
    case .equal(.string(let text)): return [JSONWriter.string(.string(text))]
    case .regex(let pattern):
      // A match holds the pattern's required text, and JSONWriter escapes byte by byte, so
      // the body holds that text's escaped form (without the quotes around a whole string).
      guard let literal = RegexLiteral(pattern: pattern), !literal.text.isEmpty else {
        return nil
      }
      return [String(JSONWriter.string(.string(literal.text)).dropFirst().dropLast())]
    case .in(let values) where !values.isEmpty && values.count <= 8:
      let texts = values.compactMap { $0.stringValue }
      return texts.count == values.count ? texts.map { JSONWriter.string(.string($0)) } : nil
    default: return nil
    }
  }
}

extension Condition {
  /// Whether the value test of this condition fails for every array value itself (its
  /// type checks leave arrays out), so that arrays are only seen element by element.
  var excludesArrays: Bool {
    func scalar(_ value: JSON) -> Bool {
      switch value {
      case .array, .object: false
      default: true
      }
    }
    switch self {
    case .equal(let value): return scalar(value)
    case .in(let values): return values.allSatisfy(scalar)
    case .regex, .beginsWith, .mod: return true
    case .lessThan(let value), .lessThanOrEqual(let value): return scalar(value)
    default: return false
    }
  }
}

/// SQLite's JSON type names (`json_type`) in collation order.
enum SQLCompilerTypes {
  /// By ``JSONCollation/rank(_:)``: null, false, true, numbers, text, array, object.
  static let ranked: [[String]] = [
    ["null"], ["false"], ["true"], ["integer", "real"], ["text"], ["array"], ["object"],
  ]

  static func typesRanked(above rank: Int) -> [String] { Array(ranked[(rank + 1)...].joined()) }
  static func typesRanked(below rank: Int) -> [String] { Array(ranked[..<rank].joined()) }

  static func names(of type: JSONType) -> SQLFragment {
    switch type {
    case .null: list(["null"])
    case .boolean: list(["true", "false"])
    case .number: list(["integer", "real"])
    case .string: list(["text"])
    case .array: list(["array"])
    case .object: list(["object"])
    }
  }

  /// `('a', 'b')` from the fixed type names above (never user input).
  static func list(_ names: [String]) -> SQLFragment {
    .joined(
      names.map { name in
        switch name {
        case "null": SQLFragment("'null'")
        case "false": SQLFragment("'false'")
        case "true": SQLFragment("'true'")
        case "integer": SQLFragment("'integer'")
        case "real": SQLFragment("'real'")
        case "text": SQLFragment("'text'")
        case "array": SQLFragment("'array'")
        default: SQLFragment("'object'")
        }
      }, separator: ", "
    ).grouped
  }

  static func number(_ value: JSON) -> SQLFragment {
    switch value {
    case .int(let number): .value(number)
    case .double(let number): .value(number)
    // SQLite reads an integer past 64 bits as its nearest double, as the matcher does.
    case .largeInteger: .value(value.doubleValue ?? 0)
    default: SQLFragment("NULL")
    }
  }
}

extension JSON {
  /// Neither an array nor an object.
  var isScalar: Bool {
    switch self {
    case .array, .object: false
    default: true
    }
  }
}
