import Foundation
import GRDB
import SetteeCore

// One condition on the values a path leads to, in SQL.
extension SelectorCompiler {
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
    case .int, .double, .largeInteger:
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
    case .int, .double, .largeInteger:
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
