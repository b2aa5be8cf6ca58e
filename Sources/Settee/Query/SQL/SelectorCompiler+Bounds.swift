import SetteeCore

// How the compiler keeps its SQL exact and of a sane size: documents holding U+0000 go to
// the matcher, long lists become lookups, and paths that would multiply are refused
// (``BeyondSQL``), so the query is checked in Swift instead.
extension SelectorCompiler {
  /// `compiled`, except for documents whose body holds U+0000 in a string, which the
  /// reference matcher checks (`settee_match`): SQLite's JSON functions read such strings
  /// only up to the U+0000, so `"y\u0000z"` would compare as `"y"`. Bodies are printed by
  /// JSONWriter, which writes U+0000 as `\u0000`, so a byte search finds them; a body that
  /// merely holds the six characters `\u0000` goes to the matcher too, which is exact anyway.
  /// A `$text` selector cannot be checked by the matcher and stays as it is.
  ///
  /// The shape is `(compiled AND no U+0000) OR (U+0000 AND matcher)`, not a CASE: SQLite
  /// short-circuits AND and OR where a WHERE clause jumps on them, but evaluates every
  /// operand of an AND that gives a CASE's value (4x slower scans, measured), and this
  /// order searches each body for U+0000 about once.
  static func nulSafe(_ compiled: SQLFragment, _ selector: Selector, _ row: Row) -> SQLFragment {
    guard selector != .all, selector.textClauseCount == 0 else { return compiled }
    return SQLFragment("((") + compiled + SQLFragment(" AND instr(") + row.body
      + SQLFragment(", '\\u0000') = 0) OR (instr(") + row.body
      + SQLFragment(", '\\u0000') > 0 AND settee_match(")
      + .value(JSONWriter.string(selector.json)) + SQLFragment(", ") + row.id
      + SQLFragment(", ") + row.rev + SQLFragment(", ") + row.body + SQLFragment(")))")
  }

  /// The most copies of a condition one path may put into SQL (see ``copies(_:knownObject:)``).
  static let maxCopiesPerPath = 256

  /// Throws ``BeyondSQL/longPath(_:)`` when the SQL for `path` would hold more than
  /// ``maxCopiesPerPath`` copies of its condition.
  static func checkSize(_ path: FieldPath, knownObject: Bool) throws {
    if path.components.count > 4,
      copies(path.components[...], knownObject: knownObject) > maxCopiesPerPath
    {
      throw BeyondSQL.longPath(path)
    }
  }

  /// How many times ``alternatives(_:_:_:knownObject:_:)`` writes the condition for a path:
  /// each component that may meet an array doubles it (the member, and the member of each
  /// element), so it is about 2^components.
  static func copies(_ components: ArraySlice<String>, knownObject: Bool) -> Int {
    guard let component = components.first else { return 1 }
    let rest = components.dropFirst()
    let next = copies(rest, knownObject: false)
    if next > maxCopiesPerPath { return next }
    guard !knownObject else { return next }
    // The member, the array index (for a numeric component), and the member of each
    // element (which is the same component, known to meet an object: `next` copies again).
    let index = FieldPath.arrayIndexOf(component) == nil ? 0 : next
    return next + index + next
  }

  /// A long `$or` with its equalities on one path merged into one `$in` per path (which
  /// is exactly their disjunction, and compiles to a lookup in a list), other branches kept.
  static func mergingEqualities(_ parts: [Selector]) -> [Selector] {
    var values: [FieldPath: [JSON]] = [:]
    var paths: [FieldPath] = []
    var rest: [Selector] = []
    for part in parts {
      guard case .condition(let path, let condition) = part else {
        rest.append(part)
        continue
      }
      switch condition {
      case .equal(let value):
        if values[path] == nil { paths.append(path) }
        values[path, default: []].append(value)
      case .in(let list):
        if values[path] == nil { paths.append(path) }
        values[path, default: []].append(contentsOf: list)
      default: rest.append(part)
      }
    }
    return paths.map { .condition($0, .in(values[$0]!)) } + rest
  }

  /// Past this many values, `$in` binds its strings and its numbers as two JSON arrays
  /// read by `json_each`, rather than one `?` per value: any length then fits in SQLite's
  /// limits on variables and expression depth, and SQLite looks values up in a temporary
  /// index of the list instead of testing each in turn.
  static let maxInlineList = 16

  /// `$in` over a long list: strings and numbers by lookup in bound JSON arrays; `null`,
  /// booleans, arrays and objects (few, in practice) one by one.
  func inList(_ arguments: [JSON], value: SQLFragment, type: SQLFragment) -> SQLFragment {
    var strings: [JSON] = []
    var numbers: [JSON] = []
    var parts: [SQLFragment] = []
    for argument in arguments {
      switch argument {
      case .string: strings.append(argument)
      case .int, .double, .largeInteger: numbers.append(argument)
      default: parts.append(equal(argument, value: value, type: type))
      }
    }
    func lookup(_ list: [JSON]) -> SQLFragment {
      value + SQLFragment(" IN (SELECT value FROM json_each(")
        + .value(JSONWriter.string(.array(list))) + SQLFragment("))")
    }
    if !strings.isEmpty {
      parts.append(
        SQLFragment("(") + type + SQLFragment(" = 'text' AND ") + lookup(strings) + SQLFragment(")")
      )
    }
    if !numbers.isEmpty {
      parts.append(
        SQLFragment("(") + type + SQLFragment(" IN ('integer', 'real') AND ") + lookup(numbers)
          + SQLFragment(")"))
    }
    return .or(parts)
  }

}
