/// A parsed, normalized query selector (Cloudant Query / Mango, SPEC section 2).
///
/// Parsing turns the user's JSON into this tree: implicit `$and` and `$eq` made explicit,
/// nested objects turned into dotted paths, and every negation (`$ne`, `$nin`, `$nor`,
/// `$exists: false`) written as `.not` of its positive form, so that negation always means
/// the complement of the positive set.
package indirect enum Selector: Sendable, Hashable {
  /// `{}`: every document.
  case all
  /// `$and`: every selector matches.
  case and([Selector])
  /// `$or`: at least one selector matches.
  case or([Selector])
  /// `$not`: the selector does not match (the complement of its set).
  case not(Selector)
  /// A condition on the values at a path. Inside `$elemMatch`/`$allMatch`/`$keyMapMatch`
  /// the path may be ``FieldPath/root``: the element (or key) itself.
  case condition(FieldPath, Condition)
  /// `$text: {$search: …}`: a full-text search (needs a TEXT index).
  case text(String)
}

/// One positive condition on a field's value.
package indirect enum Condition: Sendable, Hashable {
  /// `$eq`: equal to the value (an array field also matches an equal element).
  case equal(JSON)
  /// `$lt`: before the value in its type's order (SPEC section 2).
  case lessThan(JSON)
  /// `$lte`: before or equal to the value.
  case lessThanOrEqual(JSON)
  /// `$gt`: after the value in its type's order.
  case greaterThan(JSON)
  /// `$gte`: after or equal to the value.
  case greaterThanOrEqual(JSON)
  /// `$exists: true`: the path leads to a value (`null` included).
  case exists
  /// `$type`: a value of this JSON type.
  case type(JSONType)
  /// `$in`: equal to one of the values.
  case `in`([JSON])
  /// `$all`: an array holding every one of the values.
  case all([JSON])
  /// `$size`: an array with this many elements.
  case size(Int)
  /// `$mod`: an integer (after truncation) with this remainder.
  case mod(divisor: Int64, remainder: Int64)
  /// `$regex`: a string in which the pattern (ICU syntax) finds a match.
  case regex(String)
  /// `$beginsWith`: a string with this prefix.
  case beginsWith(String)
  /// `$elemMatch`: an array with at least one element that matches.
  case elementMatch(Selector)
  /// `$allMatch`: a non-empty array whose elements all match.
  case allMatch(Selector)
  /// `$keyMapMatch`: an object with at least one member name that matches.
  case keyMapMatch(Selector)

  /// The operator as users write it, for messages.
  package var operatorName: String {
    switch self {
    case .equal: "$eq"
    case .lessThan: "$lt"
    case .lessThanOrEqual: "$lte"
    case .greaterThan: "$gt"
    case .greaterThanOrEqual: "$gte"
    case .exists: "$exists"
    case .type: "$type"
    case .in: "$in"
    case .all: "$all"
    case .size: "$size"
    case .mod: "$mod"
    case .regex: "$regex"
    case .beginsWith: "$beginsWith"
    case .elementMatch: "$elemMatch"
    case .allMatch: "$allMatch"
    case .keyMapMatch: "$keyMapMatch"
    }
  }
}

/// The JSON types `$type` knows.
public enum JSONType: String, Sendable, Hashable, CaseIterable {
  /// `null`.
  case null
  /// `true` or `false`.
  case boolean
  /// Any number, integer or not.
  case number
  /// A string.
  case string
  /// An array.
  case array
  /// An object.
  case object

  /// The type of a JSON value.
  public init(of value: JSON) {
    switch value {
    case .null: self = .null
    case .bool: self = .boolean
    case .int, .double, .largeInteger: self = .number
    case .string: self = .string
    case .array: self = .array
    case .object: self = .object
    }
  }
}

extension Selector {
  /// `$and` of the selectors, flattened; one selector stays itself, none is ``all``.
  package static func conjunction(_ parts: [Selector]) -> Selector {
    var flat: [Selector] = []
    for part in parts {
      switch part {
      case .and(let inner): flat.append(contentsOf: inner)
      case .all: continue
      default: flat.append(part)
      }
    }
    switch flat.count {
    case 0: return .all
    case 1: return flat[0]
    default: return .and(flat)
    }
  }

  /// `$or` of the selectors, flattened.
  package static func disjunction(_ parts: [Selector]) -> Selector {
    var flat: [Selector] = []
    for part in parts {
      if case .or(let inner) = part { flat.append(contentsOf: inner) } else { flat.append(part) }
    }
    return flat.count == 1 ? flat[0] : .or(flat)
  }

  /// How many `$text` clauses the selector holds.
  package var textClauseCount: Int {
    switch self {
    case .all, .condition: 0
    case .text: 1
    case .not(let inner): inner.textClauseCount
    case .and(let parts), .or(let parts): parts.reduce(0) { $0 + $1.textClauseCount }
    }
  }
}
