/// A JSON value that round-trips exactly.
///
/// Objects keep their members in order, integers that fit in 64 bits stay integers, larger
/// integers keep their digits (CouchDB keeps them exactly too), other numbers are
/// `Double`s, and strings keep every Unicode scalar.
///
/// Equality is structural: `.int(1) != .double(1)` and member order matters. Query
/// semantics (where `1 == 1.0`) compare values in the query order instead (docs/query-language.md).
public enum JSON: Sendable, Hashable {
  /// `null`.
  case null
  /// `true` or `false`.
  case bool(Bool)
  /// A number written without fraction or exponent that fits in 64 bits.
  case int(Int64)
  /// An integer, written without fraction or exponent, too large for 64 bits
  /// (`18446744073709551616`): its decimal digits, with a `-` first when negative, so that
  /// it is written back exactly. It matches, sorts and is indexed as the nearest `Double`
  /// (``doubleValue``), as JavaScript sees it.
  case largeInteger(String)
  /// Any other number.
  case double(Double)
  /// A string.
  case string(String)
  /// An array.
  case array([JSON])
  /// An object, its members in written order.
  case object(JSONObject)
}

extension JSON {
  /// The members if this is an object.
  public var objectValue: JSONObject? {
    if case .object(let object) = self { object } else { nil }
  }

  /// The elements if this is an array.
  public var arrayValue: [JSON]? {
    if case .array(let array) = self { array } else { nil }
  }

  /// The string if this is a string.
  public var stringValue: String? {
    if case .string(let string) = self { string } else { nil }
  }

  /// The value as a `Double` if this is a number.
  public var doubleValue: Double? {
    switch self {
    case .int(let value): Double(value)
    case .double(let value): value
    case .largeInteger(let digits): Double(digits)
    default: nil
    }
  }

  /// The number as an `Int` if it is a whole number that fits (`12` and `12.0`, not `12.5`).
  public var intValue: Int? {
    switch self {
    case .int(let value): Int(exactly: value)
    case .double(let value): Int(exactly: value)
    default: nil
    }
  }

  /// The number as an `Int64` if it is a whole number that fits.
  public var int64Value: Int64? {
    switch self {
    case .int(let value): value
    case .double(let value): Int64(exactly: value)
    default: nil
    }
  }

  /// The value at a dotted path (`"pet.species"`, `"tags.0"`; `\.` is a literal dot),
  /// through object members and array indexes; `nil` when the path leads nowhere.
  ///
  /// Unlike a selector, it does not fan out over arrays of objects: it names one value.
  public subscript(path path: String) -> JSON? {
    guard let parsed = try? FieldPath(parsing: path, allowingDollar: true) else { return nil }
    return value(at: parsed)
  }

  /// The value at a parsed path (object members by name, array elements by index);
  /// `nil` when the path leads nowhere.
  public func value(at path: FieldPath) -> JSON? {
    var value = self
    for component in path.components {
      switch value {
      case .object(let object):
        guard let member = object[component] else { return nil }
        value = member
      case .array(let elements):
        guard let index = FieldPath.arrayIndexOf(component), index < elements.count else {
          return nil
        }
        value = elements[index]
      default: return nil
      }
    }
    return value
  }

  /// The boolean if this is `true` or `false`.
  public var boolValue: Bool? {
    if case .bool(let value) = self { value } else { nil }
  }

  /// Whether this is `null`.
  public var isNull: Bool { self == .null }

  /// The JSON type name: `null`, `boolean`, `number`, `string`, `array` or `object`.
  package var typeName: String {
    switch self {
    case .null: "null"
    case .bool: "boolean"
    case .int, .double, .largeInteger: "number"
    case .string: "string"
    case .array: "array"
    case .object: "object"
    }
  }

  /// Member access for objects; `nil` for other values and missing members.
  public subscript(key: String) -> JSON? {
    objectValue?[key]
  }

  /// Element access for arrays; `nil` when out of range or not an array.
  public subscript(index: Int) -> JSON? {
    guard case .array(let array) = self, array.indices.contains(index) else { return nil }
    return array[index]
  }

  /// How deeply arrays and objects nest: 0 for a scalar, 1 for `[]` or `{}`.
  package var depth: Int {
    switch self {
    case .array(let elements): 1 + (elements.lazy.map(\.depth).max() ?? 0)
    case .object(let object): 1 + (object.lazy.map(\.value.depth).max() ?? 0)
    default: 0
    }
  }
}

extension JSON: CustomStringConvertible {
  /// The compact JSON text of this value.
  public var description: String { JSONWriter.string(self) }
}

extension JSON: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
  ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral,
  ExpressibleByDictionaryLiteral
{
  public init(nilLiteral: ()) { self = .null }
  public init(booleanLiteral value: Bool) { self = .bool(value) }
  public init(integerLiteral value: Int64) { self = .int(value) }
  public init(floatLiteral value: Double) { self = .double(value) }
  public init(stringLiteral value: String) { self = .string(value) }
  /// An array; `nil` elements (a missing member, `doc["store"]`) are `null`, so that
  /// `emit([doc["store"], doc["item"]], nil)` reads as in the seeds.
  public init(arrayLiteral elements: JSON?...) { self = .array(elements.map { $0 ?? .null }) }
  /// An object; `nil` values are `null`.
  public init(dictionaryLiteral elements: (String, JSON?)...) {
    self = .object(JSONObject(elements.map { ($0.0, $0.1 ?? .null) }))
  }
}

extension JSON {
  /// Structural equality, with strings equal only when their Unicode scalars are (Swift's
  /// `String ==` would also equate canonically equivalent spellings, `"é"` and
  /// `"e\u{301}"`, which Settee keeps apart; see docs/query-language.md).
  public static func == (lhs: JSON, rhs: JSON) -> Bool {
    switch (lhs, rhs) {
    case (.null, .null): true
    case (.bool(let a), .bool(let b)): a == b
    case (.int(let a), .int(let b)): a == b
    case (.double(let a), .double(let b)): a == b
    case (.largeInteger(let a), .largeInteger(let b)): a == b
    case (.string(let a), .string(let b)): a.hasSameBytes(as: b)
    case (.array(let a), .array(let b)): a == b
    case (.object(let a), .object(let b)): a == b
    default: false
    }
  }
}
