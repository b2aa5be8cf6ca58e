/// A selector in CouchDB 3.5's normal form: what CouchDB's Mango (`mango_selector`) makes of
/// a selector before it plans and matches, so that ``MangoMatcher`` can match as CouchDB
/// matches (``QueryDialect/couchDB``).
///
/// Normalizing follows CouchDB's three steps: operators made explicit (a bare value is
/// `$eq`, several members an implicit `$and`, each operator's argument checked), field
/// names pushed down through `$and`, `$or`, `$not` and `$nor` into dotted paths, and
/// negations pushed down to the conditions (`{"$not": {"n": {"$gt": 0}}}` is
/// `{"n": {"$lte": 0}}`, which a document without `n` does not match). Inside `$elemMatch`,
/// `$allMatch` and `$keyMapMatch` CouchDB pushes no negation down, so a `$not` there stays
/// the complement.
package indirect enum MangoSelector: Sendable, Hashable {
  /// `{}`: every document.
  case everything
  /// Every part matches (`$and: []` matches everything).
  case and([MangoSelector])
  /// One part matches (`$or: []` matches everything, as CouchDB 3.5's matcher has it).
  case or([MangoSelector])
  /// The part does not match (only inside `$elemMatch`, `$allMatch` and `$keyMapMatch`).
  case not(MangoSelector)
  /// A condition on the value at a path: components as CouchDB splits `a.b\.c`; no
  /// components for the element itself inside `$elemMatch`.
  case field([String], MangoCondition)
  /// `$text`: CouchDB without a search index matches every document with it.
  case text(JSON)

  /// A comparison operator.
  package enum Comparison: String, Sendable, Hashable {
    case lt = "$lt"
    case lte = "$lte"
    case eq = "$eq"
    case ne = "$ne"
    case gte = "$gte"
    case gt = "$gt"

    /// The operator that holds exactly where this one does not.
    var negated: Comparison {
      switch self {
      case .lt: .gte
      case .lte: .gt
      case .eq: .ne
      case .ne: .eq
      case .gte: .lt
      case .gt: .lte
      }
    }
  }

  /// A selector from `_find`'s `selector` member.
  ///
  /// - Throws: ``SetteeError`` with CouchDB's error name (``SetteeError/couchDBError``):
  ///   `bad_arg` for an operator's bad argument, `invalid_operator` for an unknown
  ///   operator, `not_supported` for `$where` and the geo operators, `invalid_selector` for
  ///   a condition without a field name.
  package static func parse(_ json: JSON) throws -> MangoSelector {
    guard case .object(let object) = json else {
      throw SetteeError.couchDB(
        "invalid_selector_json", "Selector must be a JSON object, not: \(JSONWriter.string(json))")
    }
    if object.isEmpty { return .everything }
    let selector = try translate(json, path: nil, element: false)
    // CouchDB refuses a field-less condition only when it is the whole selector; below an
    // `$and` it applies to the document itself (and `{"$gt": 5}` there matches every one).
    if case .field([], _) = selector { throw missingFieldName }
    return selector
  }

  /// The fields the selector names at its top and under `$and`/`$or` (`mango_selector:fields`).
  package var fieldNames: [[String]] {
    switch self {
    case .and(let parts), .or(let parts): parts.flatMap(\.fieldNames)
    case .field(let path, _): [path]
    case .everything, .not, .text: []
    }
  }

  static let missingFieldName = SetteeError.couchDB(
    "invalid_selector", "One or more conditions is missing a field name.")

  /// One step of CouchDB's normalizing: `value` under the field path `path` (`nil` at the
  /// top, `""` for the element inside `$elemMatch`). `element`
  /// says negations stay where they are (inside `$elemMatch` and its kin).
  private static func translate(_ value: JSON, path: String?, element: Bool) throws
    -> MangoSelector
  {
    guard case .object(let object) = value else {
      return field(path, .compare(.eq, value))
    }
    if object.isEmpty {
      // `{}` below the top is a value: `{"a": {}}` is `a` equal to `{}`.
      return field(path, .compare(.eq, value))
    }
    if object.count > 1 {
      return .and(
        try object.map { try translate(.object([$0.key: $0.value]), path: path, element: element) })
    }
    let (name, argument) = (object[0].key, object[0].value)
    switch name {
    case "$and", "$or", "$nor":
      guard case .array(let parts) = argument else { throw badArgument(name, argument) }
      let translated = try parts.map { try translate($0, path: path, element: element) }
      if name == "$and" { return .and(translated) }
      if name == "$or" { return .or(translated) }
      // CouchDB's matcher knows no `$nor` where negations are not pushed down.
      if element { throw SetteeError.couchDB("invalid_operator", "Invalid operator: $nor") }
      return .and(try translated.map(negate))
    case "$not":
      guard case .object = argument else { throw badArgument(name, argument) }
      let inner = try translate(argument, path: path, element: element)
      return element ? .not(inner) : try negate(inner)
    case "$elemMatch", "$allMatch", "$keyMapMatch":
      guard case .object = argument else { throw badArgument(name, argument) }
      let inner = try translate(argument, path: "", element: true)
      let condition: MangoCondition =
        switch name {
        case "$elemMatch": .elemMatch(inner)
        case "$allMatch": .allMatch(inner)
        default: .keyMapMatch(inner)
        }
      return field(path, condition)
    case "$text":
      switch argument {
      case .string, .int, .double, .largeInteger, .bool: return .text(argument)
      default: throw badArgument(name, argument)
      }
    case "$where", "$geoWithin", "$geoIntersects", "$near", "$nearSphere":
      throw SetteeError.couchDB("not_supported", "Unsupported operator: \(name)")
    default:
      if name.utf8.first == UInt8(ascii: "$") {
        let checked = try condition(name, argument)
        return field(path, checked)
      }
      let joined = path.map { $0.isEmpty ? name : $0 + "." + name } ?? name
      return try translate(argument, path: joined, element: element)
    }
  }

  /// A terminal operator and its checked argument (CouchDB's `norm_ops`).
  private static func condition(_ name: String, _ argument: JSON) throws -> MangoCondition {
    switch name {
    case "$lt", "$lte", "$eq", "$ne", "$gte", "$gt":
      return .compare(Comparison(rawValue: name)!, argument)
    case "$in", "$nin", "$all":
      guard case .array(let values) = argument else { throw badArgument(name, argument) }
      return name == "$in" ? .in(values) : name == "$nin" ? .nin(values) : .all(values)
    case "$exists":
      guard case .bool(let flag) = argument else { throw badArgument(name, argument) }
      return .exists(flag)
    case "$type":
      guard case .string(let type) = argument else { throw badArgument(name, argument) }
      return .type(type)
    case "$mod":
      // Integers only (CouchDB's `is_integer`), and a divisor of 0, on which CouchDB's
      // matcher fails with a 500, refused here.
      guard case .array(let pair) = argument, pair.count == 2, case .int(let divisor) = pair[0],
        case .int(let remainder) = pair[1], divisor != 0
      else { throw badArgument(name, argument) }
      return .mod(divisor: divisor, remainder: remainder)
    case "$regex":
      guard case .string(let pattern) = argument, RegexCache.isValid(pattern) else {
        throw badArgument(name, argument)
      }
      return .regex(pattern)
    case "$beginsWith":
      // CouchDB's `norm_ops` takes only a string; anything else falls to its last clause.
      guard case .string(let prefix) = argument else {
        throw SetteeError.couchDB("invalid_operator", "Invalid operator: \(name)")
      }
      return .beginsWith(prefix)
    case "$size":
      guard case .int(let count) = argument, count >= 0, let size = Int(exactly: count) else {
        throw badArgument(name, argument)
      }
      return .size(size)
    default:
      throw SetteeError.couchDB("invalid_operator", "Invalid operator: \(name)")
    }
  }

  /// A condition at a path; none (the top, or the element itself) is the value the
  /// condition is matched against.
  private static func field(_ path: String?, _ condition: MangoCondition) -> MangoSelector {
    .field(components(path ?? ""), condition)
  }

  /// CouchDB's negation (`negate` in `mango_selector`): De Morgan through `$and` and `$or`,
  /// comparisons and `$in`/`$exists` turned around, anything else wrapped in `$not`.
  private static func negate(_ selector: MangoSelector) throws -> MangoSelector {
    switch selector {
    case .and(let parts): return .or(try parts.map(negate))
    case .or(let parts): return .and(try parts.map(negate))
    case .not(let inner): return inner
    case .field(let path, let condition): return .field(path, condition.negated)
    case .text(let argument):
      throw badArgument("$not", ["$default": ["$text": argument]])
    case .everything:
      throw missingFieldName
    }
  }

  private static func badArgument(_ name: String, _ argument: JSON) -> SetteeError {
    SetteeError.couchDB(
      "bad_arg", "Bad argument for operator \(name): \(JSONWriter.string(argument))")
  }

  /// A field name split as CouchDB's `mango_util:parse_field` splits it: at each `.` not
  /// escaped as `\.`.
  package static func components(_ path: String) -> [String] {
    if path.isEmpty { return [] }
    var components: [String] = []
    var current = ""
    var escaped = false
    for character in path {
      if escaped {
        if character != "." { current.append("\\") }
        current.append(character)
        escaped = false
      } else if character == "\\" {
        escaped = true
      } else if character == "." {
        components.append(current)
        current = ""
      } else {
        current.append(character)
      }
    }
    if escaped { current.append("\\") }
    components.append(current)
    return components
  }
}

/// One condition on a value in CouchDB's normal form (``MangoSelector``).
package indirect enum MangoCondition: Sendable, Hashable {
  /// `$lt`, `$lte`, `$eq`, `$ne`, `$gte`, `$gt`: in CouchDB's collation (ICU for strings;
  /// Erlang's term order for `_id`), across types.
  case compare(MangoSelector.Comparison, JSON)
  /// `$in`: equal to one of the values (on an array: one of its elements is).
  case `in`([JSON])
  /// `$nin`: equal to none of them (on an array: none of its elements is).
  case nin([JSON])
  /// `$exists`.
  case exists(Bool)
  /// `$type`: `null`, `boolean`, `number`, `string`, `array` or `object`.
  case type(String)
  /// `$mod` on an integer.
  case mod(divisor: Int64, remainder: Int64)
  /// `$regex` on a string.
  case regex(String)
  /// `$beginsWith` on a string.
  case beginsWith(String)
  /// `$all`: an array holding each of the values.
  case all([JSON])
  /// `$size` of an array.
  case size(Int)
  /// `$elemMatch`: a non-empty array with an element that matches.
  case elemMatch(MangoSelector)
  /// `$allMatch`: a non-empty array whose elements all match.
  case allMatch(MangoSelector)
  /// `$keyMapMatch`: a non-empty object with a member name that matches.
  case keyMapMatch(MangoSelector)
  /// The condition does not hold (the value must still be there).
  case not(MangoCondition)

  /// The condition that holds for a value exactly where this one does not.
  var negated: MangoCondition {
    switch self {
    case .compare(let comparison, let value): .compare(comparison.negated, value)
    case .in(let values): .nin(values)
    case .nin(let values): .in(values)
    case .exists(let flag): .exists(!flag)
    case .not(let inner): inner
    default: .not(self)
    }
  }
}

extension MangoSelector {
  /// The selector as CouchDB shows its normal form (`_explain`'s `selector`): `$and` and
  /// `$or` of single-field conditions, each `{"path": {"$operator": argument}}`, the
  /// element itself under `""`.
  package var json: JSON {
    switch self {
    case .everything: return [:]
    case .and(let parts): return ["$and": .array(parts.map(\.json))]
    case .or(let parts): return ["$or": .array(parts.map(\.json))]
    case .not(let inner): return ["$not": inner.json]
    case .text(let argument): return ["$default": ["$text": argument]]
    case .field(let path, let condition):
      let name = path.map { $0.replacingOccurrences(of: ".", with: "\\.") }.joined(separator: ".")
      return .object([name: condition.json])
    }
  }
}

extension MangoCondition {
  /// `{"$operator": argument}`.
  package var json: JSON {
    switch self {
    case .compare(let comparison, let value): .object([comparison.rawValue: value])
    case .in(let values): ["$in": .array(values)]
    case .nin(let values): ["$nin": .array(values)]
    case .exists(let flag): ["$exists": .bool(flag)]
    case .type(let type): ["$type": .string(type)]
    case .mod(let divisor, let remainder): ["$mod": [.int(divisor), .int(remainder)]]
    case .regex(let pattern): ["$regex": .string(pattern)]
    case .beginsWith(let prefix): ["$beginsWith": .string(prefix)]
    case .all(let values): ["$all": .array(values)]
    case .size(let count): ["$size": .int(Int64(count))]
    case .elemMatch(let inner): ["$elemMatch": inner.json]
    case .allMatch(let inner): ["$allMatch": inner.json]
    case .keyMapMatch(let inner): ["$keyMapMatch": inner.json]
    case .not(let inner): ["$not": inner.json]
    }
  }
}
