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

  private var aliasCount = 0
  /// How many conditions the SQL holds so far: nested paths multiply (each copy of an
  /// `$elemMatch` holds its own paths), so the total is bounded too.
  private var conditionCopies = 0
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

  // MARK: - Paths

  typealias Predicate = (inout SelectorCompiler, Candidate) throws -> SQLFragment

  /// "Some value at `path` satisfies `predicate`".
  mutating func candidates(_ context: Context, _ path: FieldPath, _ predicate: Predicate) throws
    -> SQLFragment
  {
    switch context {
    case .document(let row):
      if let first = path.components.first, first == "_id" || first == "_rev" {
        guard path.components.count == 1 else { return SQLFragment("0") }
        return try predicate(&self, .text(first == "_id" ? row.id : row.rev))
      }
      try SelectorCompiler.checkSize(path, knownObject: true)
      return try traverse(row.body, "$", path.components[...], knownObject: true, predicate)
    case .element(let value, let type):
      if path.isRoot { return try predicate(&self, .column(value: value, type: type)) }
      try SelectorCompiler.checkSize(path, knownObject: true)
      return SQLFragment("CASE WHEN ") + type + SQLFragment(" = 'object' THEN ")
        + (try traverse(value, "$", path.components[...], knownObject: true, predicate))
        + SQLFragment(" ELSE 0 END")
    case .key(let name):
      if path.isRoot { return try predicate(&self, .text(name)) }
      return SQLFragment("0")
    }
  }

  /// Follows `components` from the value at JSON path `path` in `source`, the way
  /// ``PathResolver`` does: member, array index, or each object element of an array.
  mutating func traverse(
    _ source: SQLFragment, _ path: String, _ components: ArraySlice<String>, knownObject: Bool,
    _ predicate: Predicate
  ) throws -> SQLFragment {
    let alternatives = try self.alternatives(
      source, path, components, knownObject: knownObject, predicate)
    return alternatives.count == 1 ? alternatives[0] : .or(alternatives)
  }

  /// The ways a path can lead to values, as one flat list to OR (flat, because SQLite's
  /// parser has a small stack for nested expressions).
  mutating func alternatives(
    _ source: SQLFragment, _ path: String, _ components: ArraySlice<String>, knownObject: Bool,
    _ predicate: Predicate
  ) throws -> [SQLFragment] {
    guard let component = components.first else {
      conditionCopies += 1
      if conditionCopies > SelectorCompiler.maxConditionCopies { throw BeyondSQL.tooLarge }
      return [try predicate(&self, .path(source: source, path: path))]
    }
    let rest = components.dropFirst()
    var alternatives: [SQLFragment] = []
    let here = Candidate.path(source: source, path: path)
    if component.utf8.contains(where: {
      $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") || $0 < 0x20
    }) {
      // SQLite's JSON paths cannot spell a name with a double quote, and compare labels with
      // the stored (escaped) text of names: look such members up by their decoded name.
      let member = nextAlias("m")
      let value = member + SQLFragment(".value")
      let type = member + SQLFragment(".type")
      let inner =
        rest.isEmpty
        ? try predicate(&self, .column(value: value, type: type))
        : SQLFragment("CASE WHEN ") + type + SQLFragment(" IN ('object', 'array') THEN ")
          + (try traverse(value, "$", rest, knownObject: false, predicate))
          + SQLFragment(" ELSE 0 END")
      alternatives.append(
        SQLFragment("CASE WHEN ") + here.type
          + SQLFragment(" = 'object' THEN EXISTS (SELECT 1 FROM ")
          + here.each + SQLFragment(" AS ") + member + SQLFragment(" WHERE ") + member
          + SQLFragment(".key = ") + .value(component) + SQLFragment(" AND ") + inner
          + SQLFragment(") ELSE 0 END"))
    } else {
      alternatives += try self.alternatives(
        source, path + ".\"" + component + "\"", rest, knownObject: false, predicate)
    }
    if !knownObject {
      if let index = FieldPath.arrayIndexOf(component) {
        alternatives += try self.alternatives(
          source, path + "[\(index)]", rest, knownObject: false, predicate)
      }
      let element = nextAlias("j")
      let inner = try traverse(
        element + SQLFragment(".value"), "$", components, knownObject: true, predicate)
      alternatives.append(
        SQLFragment("CASE WHEN ") + here.type
          + SQLFragment(" = 'array' THEN EXISTS (SELECT 1 FROM ")
          + here.each + SQLFragment(" AS ") + element + SQLFragment(" WHERE ") + element
          + SQLFragment(".type = 'object' AND ") + inner + SQLFragment(") ELSE 0 END"))
    }
    return alternatives
  }

  mutating func nextAlias(_ prefix: String) -> SQLFragment {
    aliasCount += 1
    return .identifier("\(prefix)\(aliasCount)")
  }

  // MARK: - Conditions

  /// A condition on one candidate value.
  mutating func condition(_ condition: Condition, _ candidate: Candidate) throws -> SQLFragment {
    let type = candidate.type
    if !candidate.mayBeContainer {
      switch condition {
      case .size, .all, .elementMatch, .allMatch, .keyMapMatch: return SQLFragment("0")
      case .exists: return SQLFragment("1")
      case .type(let wanted): return wanted == .string ? SQLFragment("1") : SQLFragment("0")
      default: return value(condition, value: candidate.value, type: type)
      }
    }
    switch condition {
    case .exists:
      return SQLFragment("(") + type + SQLFragment(" IS NOT NULL)")
    case .type(let wanted):
      return SQLFragment("(") + type + SQLFragment(" IN ") + SQLCompilerTypes.names(of: wanted)
        + SQLFragment(")")
    case .size(let count):
      return whenArray(type, candidate.arrayLength + SQLFragment(" = ") + .value(Int64(count)))
    case .all(let wanted):
      guard !wanted.isEmpty else { return SQLFragment("0") }
      var parts: [SQLFragment] = []
      var seen = Set<JSON>()
      for item in wanted where seen.insert(item).inserted {
        let element = nextAlias("a")
        parts.append(
          SQLFragment("EXISTS (SELECT 1 FROM ") + candidate.each + SQLFragment(" AS ") + element
            + SQLFragment(" WHERE ")
            + equal(
              item, value: element + SQLFragment(".value"), type: element + SQLFragment(".type"))
            + SQLFragment(")"))
      }
      return whenArray(type, .and(parts))
    case .elementMatch(let selector):
      let (element, inner) = try compileForElements(selector)
      return whenArray(
        type,
        SQLFragment("EXISTS (SELECT 1 FROM ") + candidate.each + SQLFragment(" AS ") + element
          + SQLFragment(" WHERE ") + inner + SQLFragment(")"))
    case .allMatch(let selector):
      let (element, inner) = try compileForElements(selector)
      return whenArray(
        type,
        candidate.arrayLength + SQLFragment(" > 0 AND NOT EXISTS (SELECT 1 FROM ") + candidate.each
          + SQLFragment(" AS ") + element + SQLFragment(" WHERE ") + inner.grouped
          + SQLFragment(" IS NOT 1)"))
    case .keyMapMatch(let selector):
      let member = nextAlias("k")
      let inner = try compile(selector, .key(member + SQLFragment(".key")))
      return SQLFragment("CASE WHEN ") + type
        + SQLFragment(" = 'object' THEN EXISTS (SELECT 1 FROM ")
        + candidate.each + SQLFragment(" AS ") + member + SQLFragment(" WHERE ") + inner
        + SQLFragment(") ELSE 0 END")
    default:
      // The value itself when it is not an array; for an array, any element (or the whole
      // array, for equality and comparison with an array argument).
      let element = nextAlias("v")
      var arrayCase = [
        SQLFragment("EXISTS (SELECT 1 FROM ") + candidate.each + SQLFragment(" AS ") + element
          + SQLFragment(" WHERE ")
          + value(
            condition, value: element + SQLFragment(".value"), type: element + SQLFragment(".type"))
          + SQLFragment(")")
      ]
      if let whole = wholeArray(condition, value: candidate.value) { arrayCase.append(whole) }
      // Conditions that no array can satisfy as a whole need no `<> 'array'` guard, nor do
      // comparisons with a scalar told to leave arrays out of the types they rank above.
      let itself: SQLFragment
      switch condition {
      case _ where condition.excludesArrays:
        itself = value(condition, value: candidate.value, type: type)
      case .greaterThan(let argument) where argument.isScalar:
        itself = compare(candidate.value, type, .greater, orEqual: false, argument, arrays: false)
      case .greaterThanOrEqual(let argument) where argument.isScalar:
        itself = compare(candidate.value, type, .greater, orEqual: true, argument, arrays: false)
      default:
        itself =
          SQLFragment("((") + type + SQLFragment(" <> 'array') AND ")
          + value(condition, value: candidate.value, type: type) + SQLFragment(")")
      }
      return SQLFragment("(") + itself + SQLFragment(" OR ") + whenArray(type, .or(arrayCase))
        + SQLFragment(")")
    }
  }

  /// A new alias for the rows of `json_each` over an array, and `selector` compiled against
  /// one of them (`$elemMatch`, `$allMatch`).
  mutating func compileForElements(_ selector: Selector) throws -> (
    alias: SQLFragment, inner: SQLFragment
  ) {
    let element = nextAlias("e")
    let inner = try compile(
      selector,
      .element(value: element + SQLFragment(".value"), type: element + SQLFragment(".type")))
    return (element, inner)
  }

  /// `expression` where `type` is `'array'`, else 0. A CASE, because SQLite may evaluate
  /// both sides of an AND, and JSON functions fail on values that are not JSON text.
  func whenArray(_ type: SQLFragment, _ expression: SQLFragment) -> SQLFragment {
    SQLFragment("CASE WHEN ") + type + SQLFragment(" = 'array' THEN ") + expression
      + SQLFragment(" ELSE 0 END")
  }

  /// A value condition on one non-array value (or array element).
  func value(_ condition: Condition, value: SQLFragment, type: SQLFragment) -> SQLFragment {
    switch condition {
    case .equal(let argument): return equal(argument, value: value, type: type)
    case .in(let arguments) where arguments.count > SelectorCompiler.maxInlineList:
      return inList(arguments, value: value, type: type)
    case .in(let arguments): return .or(arguments.map { equal($0, value: value, type: type) })
    case .lessThan(let argument): return compare(value, type, .less, orEqual: false, argument)
    case .lessThanOrEqual(let argument): return compare(value, type, .less, orEqual: true, argument)
    case .greaterThan(let argument): return compare(value, type, .greater, orEqual: false, argument)
    case .greaterThanOrEqual(let argument):
      return compare(value, type, .greater, orEqual: true, argument)
    case .regex(let pattern):
      if let literal = RegexLiteral(pattern: pattern), literal.isWholePattern {
        // Nothing but literal characters: a substring search (see RegexLiteral).
        if literal.text.isEmpty { return SQLFragment("(") + type + SQLFragment(" = 'text')") }
        return SQLFragment("(") + type + SQLFragment(" = 'text' AND instr(") + value
          + SQLFragment(", ") + .value(literal.text) + SQLFragment(") > 0)")
      }
      return SQLFragment("(") + type + SQLFragment(" = 'text' AND regexp(") + .value(pattern)
        + SQLFragment(", ") + value + SQLFragment("))")
    case .beginsWith(let prefix):
      let bytes = Array(prefix.utf8)
      // An empty blob would bind as NULL: the empty prefix is every string.
      if bytes.isEmpty { return SQLFragment("(") + type + SQLFragment(" = 'text')") }
      return SQLFragment("(") + type + SQLFragment(" = 'text' AND substr(CAST(") + value
        + SQLFragment(" AS BLOB), 1, ") + .value(Int64(bytes.count)) + SQLFragment(") = ")
        + .value(Data(bytes)) + SQLFragment(")")
    case .mod(let divisor, let remainder):
      return SQLFragment("(") + type + SQLFragment(" IN ('integer', 'real') AND ") + value
        + SQLFragment(" >= -9223372036854775808.0 AND ") + value
        + SQLFragment(" < 9223372036854775808.0 AND CAST(") + value + SQLFragment(" AS INTEGER) % ")
        + .value(divisor) + SQLFragment(" = ") + .value(remainder) + SQLFragment(")")
    default:
      return SQLFragment("0")
    }
  }

  /// Equality with a JSON value, by collation (`1` equals `1.0`).
  func equal(_ argument: JSON, value: SQLFragment, type: SQLFragment) -> SQLFragment {
    switch argument {
    case .null: return SQLFragment("(") + type + SQLFragment(" = 'null')")
    case .bool(let flag):
      return SQLFragment("(") + type
        + (flag ? SQLFragment(" = 'true')") : SQLFragment(" = 'false')"))
    // The value test comes first: it is false for most rows, and SQLite then skips the type.
    case .int, .double:
      return SQLFragment("(") + value + SQLFragment(" = ") + SQLCompilerTypes.number(argument)
        + SQLFragment(" AND ") + type + SQLFragment(" IN ('integer', 'real'))")
    case .string(let text):
      return SQLFragment("(") + value + SQLFragment(" = ") + .value(text) + SQLFragment(" AND ")
        + type
        + SQLFragment(" = 'text')")
    case .array, .object:
      return SQLFragment("(") + type + SQLFragment(" = ")
        + (argument.arrayValue != nil ? SQLFragment("'array'") : SQLFragment("'object'"))
        + SQLFragment(" AND settee_key(") + value + SQLFragment(", ") + type + SQLFragment(") = ")
        + .value(Data(CollationKey.encode(argument))) + SQLFragment(")")
    }
  }

  enum Direction { case less, greater }

  /// A comparison across types by the collation order; `null` never satisfies it. With
  /// `arrays: false` the value is known not to be an array (the caller tests arrays apart).
  func compare(
    _ value: SQLFragment, _ type: SQLFragment, _ direction: Direction, orEqual: Bool,
    _ argument: JSON,
    arrays: Bool = true
  ) -> SQLFragment {
    let rank = JSONCollation.rank(argument)
    let others =
      (direction == .greater
      ? SQLCompilerTypes.typesRanked(above: rank)
      : SQLCompilerTypes.typesRanked(below: rank).filter { $0 != "null" }).filter {
        arrays || $0 != "array"
      }
    var parts: [SQLFragment] = []
    let op: SQLFragment =
      switch (direction, orEqual) {
      case (.less, false): SQLFragment(" < ")
      case (.less, true): SQLFragment(" <= ")
      case (.greater, false): SQLFragment(" > ")
      case (.greater, true): SQLFragment(" >= ")
      }
    switch argument {
    case .null:
      break  // null itself never satisfies a comparison
    case .bool(let flag):
      if orEqual {
        parts.append(
          SQLFragment("(") + type + (flag ? SQLFragment(" = 'true')") : SQLFragment(" = 'false')")))
      }
    // The value test comes first: it is false for most rows, and SQLite then skips the type.
    case .int, .double:
      parts.append(
        SQLFragment("(") + value + op + SQLCompilerTypes.number(argument) + SQLFragment(" AND ")
          + type
          + SQLFragment(" IN ('integer', 'real'))"))
    case .string(let text):
      parts.append(
        SQLFragment("(") + value + op + .value(text) + SQLFragment(" AND ") + type
          + SQLFragment(" = 'text')"))
    case .array where !arrays:
      break
    case .array, .object:
      parts.append(
        SQLFragment("(") + type + SQLFragment(" = ")
          + (argument.arrayValue != nil ? SQLFragment("'array'") : SQLFragment("'object'"))
          + SQLFragment(" AND settee_key(") + value + SQLFragment(", ") + type + SQLFragment(")")
          + op
          + .value(Data(CollationKey.encode(argument))) + SQLFragment(")"))
    }
    if !others.isEmpty {
      parts.append(
        SQLFragment("(") + type + SQLFragment(" IN ") + SQLCompilerTypes.list(others)
          + SQLFragment(")"))
    }
    return .or(parts)
  }

  /// Equality and comparison of a whole array with an array argument.
  func wholeArray(_ condition: Condition, value: SQLFragment) -> SQLFragment? {
    func key(_ op: StaticString, _ argument: JSON) -> SQLFragment? {
      guard case .array = argument else { return nil }
      return SQLFragment("(settee_key(") + value + SQLFragment(", 'array') ") + SQLFragment(op)
        + SQLFragment(" ") + .value(Data(CollationKey.encode(argument))) + SQLFragment(")")
    }
    switch condition {
    case .equal(let argument): return key("=", argument)
    case .in(let arguments):
      let parts = arguments.compactMap { key("=", $0) }
      return parts.isEmpty ? nil : .or(parts)
    case .lessThan(let argument): return key("<", argument)
    case .lessThanOrEqual(let argument): return key("<=", argument)
    case .greaterThan(let argument): return key(">", argument)
    case .greaterThanOrEqual(let argument): return key(">=", argument)
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
    default: SQLFragment("NULL")
    }
  }
}

extension JSON {
  /// Neither an array nor an object.
  fileprivate var isScalar: Bool {
    switch self {
    case .array, .object: false
    default: true
    }
  }
}
