extension MangoSelector {
  /// A selector in the default dialect (``Selector``) that matches every document this one
  /// matches, and as few others as it can say: what the SQL path (with its indexes) reads
  /// before ``MangoMatcher`` decides.
  ///
  /// Why a superset is always possible: a path reads in Cloudant Sync's dialect every value
  /// it reads in CouchDB's (and values inside arrays of objects besides); equality on
  /// numbers, booleans and `null` is the same in both; an order across types is a union of
  /// whole types and one type's range; and a string equal to `s` in ICU's collation either
  /// starts with the first character of `s`, or starts with a character before a space or
  /// from DEL on (an ignorable control or format character, or a precomposed letter), when
  /// `s` starts with a printable ASCII character. What cannot be said so narrowly (`$ne`,
  /// `$regex`, `$elemMatch`, …) asks only that the path lead somewhere.
  package var candidates: Selector {
    switch self {
    case .everything, .text, .not: return .all
    case .and(let parts): return .conjunction(parts.map(\.candidates))
    case .or(let parts):
      let relaxed = parts.map(\.candidates)
      if relaxed.isEmpty || relaxed.contains(.all) { return .all }
      return .disjunction(relaxed)
    case .field(let components, let condition):
      if components.isEmpty || components.contains(where: \.isEmpty) { return .all }
      let path = FieldPath(components: components)
      if components == ["_id"] { return MangoSelector.idCandidates(path, condition) }
      return MangoSelector.candidates(path, condition)
    }
  }

  static func candidates(_ path: FieldPath, _ condition: MangoCondition) -> Selector {
    let exists = Selector.condition(path, .exists)
    switch condition {
    case .compare(.eq, let value): return equal(path, value)
    case .compare(.ne, _): return exists
    case .compare(let comparison, let value):
      let below = comparison == .lt || comparison == .lte
      let valueRank = JSONCollation.rank(value)
      var parts: [Selector] = []
      for type in wholeTypes where below ? rank(of: type) < valueRank : rank(of: type) > valueRank {
        parts.append(.condition(path, .type(type)))
      }
      switch value {
      case .int, .double, .largeInteger:
        let condition: Condition =
          switch comparison {
          case .lt: .lessThan(value)
          case .lte: .lessThanOrEqual(value)
          case .gt: .greaterThan(value)
          default: .greaterThanOrEqual(value)
          }
        parts.append(.condition(path, condition))
      default:
        // The argument's own type, whole: ICU orders strings (and what holds them) another
        // way than code points; a strict bound on `null` or a boolean is covered anyway.
        parts.append(.condition(path, .type(JSONType(of: value))))
      }
      return .disjunction(parts)
    case .in(let values):
      // `$in` also matches an array by its elements: where equality is said by type, an
      // array holding such an element must be a candidate too.
      return values.isEmpty
        ? exists : .disjunction(values.map { equal(path, $0, inArrays: true) })
    case .exists(true), .type, .mod, .regex, .nin, .not, .elemMatch, .allMatch, .keyMapMatch:
      return exists
    case .exists(false): return .all
    case .beginsWith(let prefix): return .condition(path, .beginsWith(prefix))
    case .size(let count):
      // Settee's SQL takes sizes up to Int32.max (as its own `$size` does); a larger one
      // leaves the matcher to answer.
      return count <= Int(Int32.max) ? .condition(path, .size(count)) : exists
    case .all(let values):
      if values.isEmpty || (values.count == 1 && values[0].arrayValue != nil) { return exists }
      return .condition(path, .all(values))
    }
  }

  /// `_id` compares in Erlang's term order: a string id against a string byte by byte, as
  /// the default dialect compares; against anything else, every id is greater.
  static func idCandidates(_ path: FieldPath, _ condition: MangoCondition) -> Selector {
    switch condition {
    case .compare(let comparison, .string(let id)):
      switch comparison {
      case .eq: return .condition(path, .equal(.string(id)))
      case .lt: return .condition(path, .lessThan(.string(id)))
      case .lte: return .condition(path, .lessThanOrEqual(.string(id)))
      case .gt: return .condition(path, .greaterThan(.string(id)))
      case .gte: return .condition(path, .greaterThanOrEqual(.string(id)))
      case .ne: return .all
      }
    case .in(let values):
      let ids = values.filter { $0.stringValue != nil }
      return ids.isEmpty ? .all : .condition(path, .in(ids))
    case .beginsWith(let prefix): return .condition(path, .beginsWith(prefix))
    default: return .all
    }
  }

  /// The types in CouchDB's order, booleans as one.
  private static let wholeTypes: [JSONType] = [.null, .boolean, .number, .string, .array, .object]

  private static func rank(of type: JSONType) -> Int {
    switch type {
    case .null: 0
    case .boolean: 1
    case .number: 3
    case .string: 4
    case .array: 5
    case .object: 6
    }
  }

  /// Values equal to `value` in CouchDB's collation, and perhaps others; with `inArrays`,
  /// arrays with such an element too (value conditions reach elements by themselves, type
  /// conditions do not).
  static func equal(_ path: FieldPath, _ value: JSON, inArrays: Bool = false) -> Selector {
    let byType = equalByType(path, value)
    guard inArrays, case .condition(_, .type) = byType else { return byType }
    return .disjunction([byType, .condition(path, .type(.array))])
  }

  private static func equalByType(_ path: FieldPath, _ value: JSON) -> Selector {
    switch value {
    case .null, .bool, .int, .double, .largeInteger:
      return .condition(path, .equal(value))
    case .string(let text):
      guard let first = text.unicodeScalars.first, first.value >= 0x20, first.value < 0x7F else {
        return .condition(path, .type(.string))
      }
      return .disjunction([
        .condition(path, .beginsWith(String(first))),
        .condition(path, .lessThan(" ")),
        .condition(path, .greaterThanOrEqual("\u{7F}")),
      ])
    case .array: return .condition(path, .type(.array))
    case .object: return .condition(path, .type(.object))
    }
  }
}
