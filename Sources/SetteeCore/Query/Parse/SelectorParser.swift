import Foundation

/// Turns selector JSON into a normalized ``Selector``, checking every operator's argument.
///
/// Every error is a ``SetteeError`` with code `invalidQuery` whose message names the
/// operator as the user wrote it and the field path it applies to.
package enum SelectorParser {
  /// Parses a selector object such as `{"age": {"$gt": 12}, "pet.species": "cat"}`.
  package static func parse(_ json: JSON) throws -> Selector {
    guard case .object(let object) = json else {
      throw SetteeError(.invalidQuery, "a selector must be a JSON object, not \(json.typeName)")
    }
    return try parseObject(object, context: .document)
  }

  /// Parses selector JSON text.
  package static func parse(_ text: String) throws -> Selector {
    try parse(JSONParser.parse(text))
  }

  /// Where a selector object sits, which decides what its keys may be.
  enum Context: Equatable {
    /// The top of a query: keys are fields or combinators.
    case document
    /// The value of a field (`{"age": {…}}`): operators apply to `path`; other keys are
    /// sub-fields.
    case field(FieldPath, within: String?)
    /// The argument of `$elemMatch`, `$allMatch` or `$keyMapMatch` (described as
    /// `inside $elemMatch on "pet"`, for errors): operators apply to the element itself;
    /// other keys are fields of the element.
    case element(String)

    var path: FieldPath? {
      switch self {
      case .document: nil
      case .field(let path, _): path
      case .element: .root
      }
    }

    func child(_ path: FieldPath) -> FieldPath { (self.path ?? .root).appending(path) }

    var location: String {
      switch self {
      case .document: "at the top of the selector"
      case .field(let path, let within):
        "on \(quoted(path.description))" + (within.map { " \($0)" } ?? "")
      case .element(let description): description
      }
    }

    /// What fields below this context are inside, for errors (an `$elemMatch`).
    var within: String? {
      switch self {
      case .document: nil
      case .field(_, let within): within
      case .element(let description): description
      }
    }
  }

  static func parseObject(_ object: JSONObject, context: Context) throws -> Selector {
    var parts: [Selector] = []
    for member in object {
      if member.key.hasPrefix("$") {
        parts.append(try parseOperator(member.key, member.value, context: context))
      } else {
        let path = context.child(try FieldPath(parsing: member.key))
        parts.append(try parseFieldValue(member.value, path: path, within: context.within))
      }
    }
    return Selector.conjunction(parts)
  }

  static func parseFieldValue(_ value: JSON, path: FieldPath, within: String? = nil) throws
    -> Selector
  {
    if case .object(let object) = value, !object.isEmpty {
      return try parseObject(object, context: .field(path, within: within))
    }
    return .condition(path, .equal(value))
  }

  static func parseOperator(_ name: String, _ argument: JSON, context: Context) throws -> Selector {
    func fail(_ message: String) -> SetteeError {
      SetteeError(.invalidQuery, "\(quoted(name)) \(context.location) \(message)")
    }
    func selectors() throws -> [Selector] {
      guard case .array(let elements) = argument, !elements.isEmpty else {
        throw fail("needs a non-empty array of selectors, not \(describe(argument))")
      }
      return try elements.map { element in
        guard case .object(let object) = element else {
          throw fail("needs selector objects, not \(describe(element))")
        }
        return try parseObject(object, context: context)
      }
    }

    switch name {
    case "$and": return Selector.conjunction(try selectors())
    case "$or": return Selector.disjunction(try selectors())
    case "$nor": return .not(Selector.disjunction(try selectors()))
    case "$not":
      guard case .object(let object) = argument, !object.isEmpty else {
        throw fail("needs a non-empty selector object, not \(describe(argument))")
      }
      return .not(try parseObject(object, context: context))
    case "$text":
      guard context == .document else { throw fail("may only appear at the top of a selector") }
      guard case .object(let object) = argument, object.count == 1,
        case .string(let search)? = object["$search"]
      else {
        throw fail(#"needs {"$search": "<query>"} with a string query, not \#(describe(argument))"#)
      }
      return .text(search)
    default:
      guard let path = context.path else {
        if isConditionOperator(name) {
          throw fail("must be applied to a field, as in {\"field\": {\"\(name)\": …}}")
        }
        throw fail(
          "is not a known operator (a field whose name starts with '$' is written \(quoted("\\" + name)))"
        )
      }
      return try parseCondition(name, argument, path: path, location: context.location, fail: fail)
    }
  }

  static func isConditionOperator(_ name: String) -> Bool {
    [
      "$eq", "$ne", "$lt", "$lte", "$gt", "$gte", "$exists", "$type", "$in", "$nin", "$all",
      "$size", "$mod", "$regex", "$beginsWith", "$elemMatch", "$allMatch", "$keyMapMatch",
    ].contains(name)
  }

  static func parseCondition(
    _ name: String, _ argument: JSON, path: FieldPath, location: String,
    fail: (String) -> SetteeError
  ) throws -> Selector {
    func condition(_ condition: Condition) -> Selector { .condition(path, condition) }
    func array() throws -> [JSON] {
      guard case .array(let elements) = argument else {
        throw fail("needs an array, not \(describe(argument))")
      }
      return elements
    }
    func string() throws -> String {
      guard case .string(let text) = argument else {
        throw fail("needs a string, not \(describe(argument))")
      }
      return text
    }
    func subselector() throws -> Selector {
      guard case .object(let object) = argument, !object.isEmpty else {
        throw fail("needs a non-empty selector object, not \(describe(argument))")
      }
      return try parseObject(object, context: .element("inside \(name) \(location)"))
    }

    switch name {
    case "$eq": return condition(.equal(argument))
    case "$ne": return .not(condition(.equal(argument)))
    case "$lt": return condition(.lessThan(argument))
    case "$lte": return condition(.lessThanOrEqual(argument))
    case "$gt": return condition(.greaterThan(argument))
    case "$gte": return condition(.greaterThanOrEqual(argument))
    case "$exists":
      guard case .bool(let flag) = argument else {
        throw fail("needs true or false, not \(describe(argument))")
      }
      return flag ? condition(.exists) : .not(condition(.exists))
    case "$type":
      let name = try string()
      guard let type = JSONType(rawValue: name) else {
        throw fail(
          "needs one of \(JSONType.allCases.map(\.rawValue).joined(separator: ", ")), not \(quoted(name))"
        )
      }
      return condition(.type(type))
    case "$in": return condition(.in(try array()))
    case "$nin": return .not(condition(.in(try array())))
    case "$all": return condition(.all(try array()))
    case "$size":
      guard let count = integer(argument), count >= 0, count <= Int64(Int32.max) else {
        throw fail("needs a non-negative integer, not \(describe(argument))")
      }
      return condition(.size(Int(count)))
    case "$mod":
      let elements = try array()
      guard elements.count == 2, let divisor = truncated(elements[0]),
        let remainder = truncated(elements[1])
      else {
        throw fail("needs [divisor, remainder], two numbers, not \(describe(argument))")
      }
      guard divisor != 0 else {
        throw fail(
          "cannot divide by zero (the divisor \(describe(elements[0])) truncates to 0: $mod truncates both numbers toward zero first)"
        )
      }
      return condition(.mod(divisor: divisor, remainder: remainder))
    case "$regex":
      let pattern = try string()
      guard RegexCache.isValid(pattern) else {
        throw fail("has an invalid regular expression \(quoted(pattern))")
      }
      return condition(.regex(pattern))
    case "$beginsWith": return condition(.beginsWith(try string()))
    case "$elemMatch": return condition(.elementMatch(try subselector()))
    case "$allMatch": return condition(.allMatch(try subselector()))
    case "$keyMapMatch": return condition(.keyMapMatch(try subselector()))
    default:
      throw fail(
        "is not a known operator (a field whose name starts with '$' is written \(quoted("\\" + name)))"
      )
    }
  }

  /// An integral JSON number as an integer.
  static func integer(_ value: JSON) -> Int64? {
    switch value {
    case .int(let number): number
    case .double(let number) where number.rounded(.towardZero) == number: Int64(exactly: number)
    default: nil
    }
  }

  /// A JSON number truncated toward zero (`$mod`'s rule); `nil` if not a number or too big.
  static func truncated(_ value: JSON) -> Int64? {
    switch value {
    case .int(let number): number
    case .double(let number): Int64(exactly: number.rounded(.towardZero))
    default: nil
    }
  }

  static func describe(_ value: JSON) -> String {
    let text = JSONWriter.string(value)
    return text.count > 60 ? String(text.prefix(57)) + "…" : text
  }
}
