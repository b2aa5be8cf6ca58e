/// A field of a document in a Swift query: a dotted path (`"pet.species"`, `"tags.0"`,
/// `#"a\.b"#` for a member named `a.b`).
///
/// ```swift
/// let kids = Field("age") < 13 && Field("pet.species").in(["cat", "dog"])
/// let people = try collection.find(matching: kids, sort: [.descending("age")], limit: 10)
/// ```
///
/// The path is checked when the query runs: a bad one (`"a..b"`, `"$x"`) is a thrown
/// `invalidQuery` error, never a trap.
public struct Field: Sendable, Hashable, ExpressibleByStringLiteral, CustomStringConvertible {
  /// The path as written.
  public var path: String

  /// A field by its dotted path (checked when the query runs).
  public init(_ path: String) {
    self.path = path
    relative = path
  }

  /// A field named by a `Codable` type's coding keys, one key per level of nesting, so that
  /// the compiler checks the names and a renamed key renames the query:
  ///
  /// ```swift
  /// struct Person: Codable {
  ///   var name: String
  ///   var pet: Pet
  ///   enum CodingKeys: String, CodingKey { case name, pet }
  /// }
  /// let cats = Field(Person.CodingKeys.pet, Pet.CodingKeys.species) == "cat"
  /// ```
  ///
  /// A key holding `.` or `\`, or starting with `$`, names that member (it is escaped), not
  /// a path or an operator.
  public init(_ key: any CodingKey, _ nested: any CodingKey...) {
    self.init(([key] + nested).map { FieldPath.escape($0.stringValue) }.joined(separator: "."))
  }

  /// A field written as a string literal.
  public init(stringLiteral path: String) { self.init(path) }

  /// The value itself, inside ``elementMatch(_:)``, ``allMatch(_:)`` and
  /// ``keyMapMatch(_:)``: the array element or member name being tested.
  public static let element = Field(path: nil)

  /// `nil` for ``element``.
  let relative: String?

  private init(path: String?) {
    self.path = path ?? ""
    relative = path
  }

  public var description: String { relative ?? "(element)" }

  func condition(_ operation: String, _ argument: JSON) -> Where {
    Where(.condition(self, operation, argument))
  }

  // MARK: - Comparisons (operators below)

  /// `$in`: the value (or an element of it) equals one of `values`.
  public func `in`<V: JSONRepresentable>(_ values: [V]) -> Where {
    condition("$in", .array(values.map(\.jsonValue)))
  }

  /// `$nin`: no value equals one of `values` (documents without the field included).
  public func notIn<V: JSONRepresentable>(_ values: [V]) -> Where {
    condition("$nin", .array(values.map(\.jsonValue)))
  }

  /// `$exists: true`: the field is present (`null` included).
  public var exists: Where { condition("$exists", true) }

  /// `$exists: false`.
  public var isMissing: Where { condition("$exists", false) }

  /// `$type`: the value is of a JSON type.
  public func isType(_ type: JSONType) -> Where { condition("$type", .string(type.rawValue)) }

  /// `$size`: an array with `count` elements.
  public func hasCount(_ count: Int) -> Where { condition("$size", .int(Int64(count))) }

  /// `$all`: an array holding every one of `values`.
  public func containsAll<V: JSONRepresentable>(_ values: [V]) -> Where {
    condition("$all", .array(values.map(\.jsonValue)))
  }

  /// `$regex`: a string in which `pattern` (ICU syntax, unanchored) finds a match.
  public func matches(_ pattern: String) -> Where { condition("$regex", .string(pattern)) }

  /// `$beginsWith`: a string with this prefix.
  public func beginsWith(_ prefix: String) -> Where {
    condition("$beginsWith", .string(prefix))
  }

  /// `$mod`: an integer that leaves `remainder` when divided by `divisor`.
  public func mod(_ divisor: Int, remainder: Int) -> Where {
    condition("$mod", [.int(Int64(divisor)), .int(Int64(remainder))])
  }

  /// `$elemMatch`: an array with an element for which `predicate` holds (its fields are
  /// relative to the element; ``element`` is the element itself).
  public func elementMatch(_ predicate: Where) -> Where {
    Where(.nested(self, "$elemMatch", predicate.node))
  }

  /// `$allMatch`: a non-empty array whose elements all satisfy `predicate`.
  public func allMatch(_ predicate: Where) -> Where {
    Where(.nested(self, "$allMatch", predicate.node))
  }

  /// `$keyMapMatch`: an object with a member name for which `predicate` holds (on
  /// ``element``, the name).
  public func keyMapMatch(_ predicate: Where) -> Where {
    Where(.nested(self, "$keyMapMatch", predicate.node))
  }
}

extension Field {
  /// `$eq`.
  public static func == (field: Field, value: some JSONRepresentable) -> Where {
    field.condition("$eq", value.jsonValue)
  }

  /// `$ne`: documents without the field included (SPEC section 2's negation).
  public static func != (field: Field, value: some JSONRepresentable) -> Where {
    field.condition("$ne", value.jsonValue)
  }

  /// `$lt`, in the collation order of JSON values.
  public static func < (field: Field, value: some JSONRepresentable) -> Where {
    field.condition("$lt", value.jsonValue)
  }

  /// `$lte`.
  public static func <= (field: Field, value: some JSONRepresentable) -> Where {
    field.condition("$lte", value.jsonValue)
  }

  /// `$gt`.
  public static func > (field: Field, value: some JSONRepresentable) -> Where {
    field.condition("$gt", value.jsonValue)
  }

  /// `$gte`.
  public static func >= (field: Field, value: some JSONRepresentable) -> Where {
    field.condition("$gte", value.jsonValue)
  }
}
