/// The reference implementation of CouchDB 3.5's Mango matching (`mango_selector:match`),
/// the semantics of ``QueryDialect/couchDB``: simple, and the judge the query path is
/// checked against.
///
/// How it differs from ``Matcher`` (Cloudant Sync's, the default dialect):
/// - a path reads one value: a member of an object, or an element of an array by its
///   number; any other step (a name on an array, anything on a scalar) reads nothing, so
///   `pets.species` does not reach into an array of pets, and `{"tags": "blue"}` does not
///   match `["blue", "red"]` (`$in`, `$nin`, `$all`, `$elemMatch` look at elements);
/// - a condition on a path that reads nothing fails, `$exists: false` aside (and that only
///   where an object lacks the member);
/// - comparisons cross types in CouchDB's collation (`null < false < true < numbers <
///   strings < arrays < objects`, strings by ICU's root collation), so `{"$lt": 5}`
///   matches `null` and `{"$gt": "b"}` matches arrays; `_id` compares in Erlang's term order
///   (strings byte by byte), as CouchDB's `cmp_raw`.
package enum MangoMatcher {
  /// What a path reads in a document (`mango_doc:get_field`).
  package enum Lookup: Equatable {
    case found(JSON)
    /// An object on the way lacks the member.
    case notFound
    /// A step cannot be taken: a name on an array, a number past its end, anything on a
    /// scalar.
    case badPath
  }

  /// Whether a document (with `_id` and `_rev`) matches.
  ///
  /// - Throws: ``SetteeError`` with code `limitExceeded` when a `$regex` runs too long, or
  ///   `storage` when ICU's collator cannot be opened.
  package static func matches(_ selector: MangoSelector, _ document: JSON) throws -> Bool {
    try matches(selector, document, raw: false)
  }

  static func matches(_ selector: MangoSelector, _ value: JSON, raw: Bool) throws -> Bool {
    switch selector {
    case .everything, .text: return true
    case .and(let parts): return try parts.allSatisfy { try matches($0, value, raw: raw) }
    case .or(let parts):
      return try parts.isEmpty || parts.contains { try matches($0, value, raw: raw) }
    case .not(let inner): return try !matches(inner, value, raw: raw)
    case .field(let path, let condition):
      if path.isEmpty { return try holds(condition, value, raw: raw) }
      switch lookup(value, path) {
      case .notFound: return condition == .exists(false)
      case .badPath: return false
      case .found(let found):
        return try holds(condition, found, raw: raw || path == ["_id"])
      }
    }
  }

  /// The value at `path` (`mango_doc:get_field`).
  package static func lookup(_ value: JSON, _ path: [String]) -> Lookup {
    var current = value
    for component in path {
      switch current {
      case .object(let object):
        guard let member = object[component] else { return .notFound }
        current = member
      case .array(let elements):
        // Erlang's list_to_integer: an optional sign, then digits.
        guard let index = Int(component), index >= 0, index < elements.count else {
          return .badPath
        }
        current = elements[index]
      default:
        return .badPath
      }
    }
    return .found(current)
  }

  static func holds(_ condition: MangoCondition, _ value: JSON, raw: Bool) throws -> Bool {
    switch condition {
    case .compare(let comparison, let argument):
      let order = try compare(value, argument, raw: raw)
      switch comparison {
      case .lt: return order < 0
      case .lte: return order <= 0
      case .eq: return order == 0
      case .ne: return order != 0
      case .gte: return order >= 0
      case .gt: return order > 0
      }
    case .in(let arguments):
      let values = value.arrayValue ?? [value]
      for argument in arguments {
        for element in values where try compare(element, argument, raw: raw) == 0 { return true }
      }
      return false
    case .nin(let arguments):
      let values = value.arrayValue ?? [value]
      for argument in arguments {
        for element in values where try compare(element, argument, raw: raw) == 0 { return false }
      }
      return true
    case .exists(let flag): return flag
    case .type(let type): return value.typeName == type
    case .mod(let divisor, let remainder):
      guard case .int(let number) = value else {
        // An integer past 64 bits: Erlang's `rem` on its digits.
        if case .largeInteger(let digits) = value {
          return largeRemainder(digits, divisor) == remainder
        }
        return false
      }
      return number.remainderReportingOverflow(dividingBy: divisor).partialValue == remainder
    // On a string the same as the default dialect's (on anything else, false).
    case .regex(let pattern): return try Matcher.holdsForValue(.regex(pattern), value)
    case .beginsWith(let prefix): return try Matcher.holdsForValue(.beginsWith(prefix), value)
    case .all(let arguments):
      if arguments.isEmpty { return false }
      if arguments.count == 1, case .array = arguments[0], equalTerms(arguments[0], value) {
        return true
      }
      guard case .array(let elements) = value else { return false }
      return arguments.allSatisfy { argument in elements.contains { identical($0, argument) } }
    case .size(let count):
      guard case .array(let elements) = value else { return false }
      return elements.count == count
    case .elemMatch(let inner):
      guard case .array(let elements) = value else { return false }
      return try elements.contains { try matches(inner, $0, raw: raw) }
    case .allMatch(let inner):
      guard case .array(let elements) = value, !elements.isEmpty else { return false }
      return try elements.allSatisfy { try matches(inner, $0, raw: raw) }
    case .keyMapMatch(let inner):
      guard case .object(let object) = value else { return false }
      return try object.contains { try matches(inner, .string($0.key), raw: raw) }
    case .not(let inner): return try !holds(inner, value, raw: raw)
    }
  }

  /// CouchDB's order of two values: its view collation (`mango_json:cmp`), or Erlang's
  /// term order for `_id` (`cmp_raw`).
  package static func compare(_ lhs: JSON, _ rhs: JSON, raw: Bool = false) throws -> Int {
    if raw {
      // `_id` is a string: against a string, byte by byte, with no keys to build.
      if case .string(let left) = lhs, case .string(let right) = rhs {
        if left.utf8.elementsEqual(right.utf8) { return 0 }
        return left.utf8.lexicographicallyPrecedes(right.utf8) ? -1 : 1
      }
      return try ViewCollation.raw.compare(lhs, rhs)
    }
    // Values of two types, or two numbers, booleans or nulls: CouchDB's order of types and
    // of numbers is the default dialect's, and asks nothing of ICU.
    let (left, right) = (JSONCollation.rank(lhs), JSONCollation.rank(rhs))
    if left != right || left < JSONCollation.rank(.string("")) {
      return JSONCollation.compare(lhs, rhs)
    }
    return try ViewCollation.unicode.compare(lhs, rhs)
  }

  /// Erlang's `=:=` on two JSON terms: the same type (an integer is not a float), the same
  /// value, object members in the same order.
  static func identical(_ lhs: JSON, _ rhs: JSON) -> Bool {
    switch (lhs, rhs) {
    case (.array(let a), .array(let b)):
      return a.count == b.count && zip(a, b).allSatisfy { identical($0, $1) }
    case (.object(let a), .object(let b)):
      return a.count == b.count
        && zip(a, b).allSatisfy {
          $0.key.utf8.elementsEqual($1.key.utf8) && identical($0.value, $1.value)
        }
    case (.string(let a), .string(let b)): return a.utf8.elementsEqual(b.utf8)
    case (.double(let a), .double(let b)): return a == b
    default: return lhs == rhs
    }
  }

  /// Erlang's `==`: as ``identical(_:_:)`` but numbers compare by value (`1 == 1.0`).
  static func equalTerms(_ lhs: JSON, _ rhs: JSON) -> Bool {
    switch (lhs, rhs) {
    case (.array(let a), .array(let b)):
      return a.count == b.count && zip(a, b).allSatisfy { equalTerms($0, $1) }
    case (.object(let a), .object(let b)):
      return a.count == b.count
        && zip(a, b).allSatisfy {
          $0.key.utf8.elementsEqual($1.key.utf8) && equalTerms($0.value, $1.value)
        }
    case (.int, .double), (.double, .int), (.double, .double), (.int, .int):
      return JSONCollation.compare(lhs, rhs) == 0
    default: return identical(lhs, rhs)
    }
  }

  /// The remainder of a decimal integer's digits by `divisor`, with Erlang's sign (the
  /// dividend's).
  static func largeRemainder(_ digits: String, _ divisor: Int64) -> Int64 {
    let magnitude = divisor.magnitude
    var remainder: UInt64 = 0
    var negative = false
    for byte in digits.utf8 {
      if byte == UInt8(ascii: "-") {
        negative = true
        continue
      }
      guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { continue }
      let product = remainder.multipliedFullWidth(by: 10)
      let (low, carry) = product.low.addingReportingOverflow(UInt64(byte - UInt8(ascii: "0")))
      remainder = magnitude.dividingFullWidth((product.high + (carry ? 1 : 0), low)).remainder
    }
    let signed = Int64(remainder)
    return negative ? -signed : signed
  }
}

extension MangoMatcher {
  /// A document with only `fields`, as CouchDB's `mango_fields:extract` makes it: each
  /// field that reads a value (``lookup(_:_:)``) is set in a new object, in the order of
  /// `fields`, through objects made on the way (`tags.0` gives `{"tags": {"0": …}}`); a
  /// field already set is replaced where it stands. `_id` and `_rev` come back only when
  /// named.
  package static func extract(_ document: JSON, fields: [[String]]) -> JSONObject {
    var result = JSON.object([:])
    for path in fields {
      guard case .found(let value) = lookup(document, path) else { continue }
      result = set(result, path[...], value)
    }
    return result.objectValue ?? [:]
  }

  /// `mango_doc:set_field`.
  static func set(_ target: JSON, _ path: ArraySlice<String>, _ value: JSON) -> JSON {
    guard let name = path.first else { return value }
    let rest = path.dropFirst()
    switch target {
    case .object(var object):
      if let existing = object[name] {
        object[name] = set(existing, rest, value)
      } else {
        object[name] = nested(rest, value)
      }
      return .object(object)
    case .array(var elements):
      guard let index = Int(name), index >= 0, index < elements.count else { return target }
      elements[index] = set(elements[index], rest, value)
      return .array(elements)
    default:
      return target
    }
  }

  /// `{"a": {"b": value}}` for the path `a.b`.
  static func nested(_ path: ArraySlice<String>, _ value: JSON) -> JSON {
    guard let name = path.first else { return value }
    return .object([name: nested(path.dropFirst(), value)])
  }
}
