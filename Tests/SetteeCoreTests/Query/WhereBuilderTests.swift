import SetteeCore
import SetteeTestSupport
import Testing

/// The Swift query builder gives the same selectors as the JSON it stands for.
@Suite("Query builder")
struct WhereBuilderTests {
  /// Writes a Mango selector with the builder, operator by operator, as a user would.
  static func build(_ json: JSON, prefix: String? = nil) -> Where {
    guard case .object(let object) = json else { return Field("$invalid") == json }
    var parts: [Where] = []
    for member in object {
      parts.append(build(member.key, member.value, prefix: prefix))
    }
    return parts.count == 1 ? parts[0] : .and(parts)
  }

  static func field(_ prefix: String?) -> Field { prefix.map { Field($0) } ?? .element }

  static func build(_ key: String, _ value: JSON, prefix: String?) -> Where {
    let field = field(prefix)
    let list = value.arrayValue ?? []
    switch key {
    case "$and": return .and(list.map { build($0, prefix: prefix) })
    case "$or": return .or(list.map { build($0, prefix: prefix) })
    case "$nor": return !.or(list.map { build($0, prefix: prefix) })
    case "$not": return !build(value, prefix: prefix)
    case "$text": return .text(value["$search"]?.stringValue ?? "")
    case "$eq": return field == value
    case "$ne": return field != value
    case "$lt": return field < value
    case "$lte": return field <= value
    case "$gt": return field > value
    case "$gte": return field >= value
    case "$in": return field.in(list)
    case "$nin": return field.notIn(list)
    case "$exists": return value == true ? field.exists : field.isMissing
    case "$type": return field.isType(JSONType(rawValue: value.stringValue ?? "") ?? .null)
    case "$size": return field.hasCount(value.intValue ?? -1)
    case "$all": return field.containsAll(list)
    case "$regex": return field.matches(value.stringValue ?? "")
    case "$beginsWith": return field.beginsWith(value.stringValue ?? "")
    case "$mod":
      // $mod truncates toward zero (SPEC section 2); the builder takes the integers.
      func truncated(_ value: JSON?) -> Int {
        value?.doubleValue.flatMap { Int(exactly: $0.rounded(.towardZero)) } ?? 0
      }
      return field.mod(truncated(list.first), remainder: truncated(list.last))
    case "$elemMatch": return field.elementMatch(build(value))
    case "$allMatch": return field.allMatch(build(value))
    case "$keyMapMatch": return field.keyMapMatch(build(value))
    default:
      // A field: nested objects without operators are paths, as CouchDB reads them.
      let path = prefix.map { $0 + "." + key } ?? key
      if case .object(let inner) = value, !inner.isEmpty {
        return build(value, prefix: path)
      }
      return Field(path) == value
    }
  }

  @Test(arguments: 1...4)
  func randomSelectorsBuildTheSameSelector(_ seed: Int) throws {
    var random = RandomQueries(seed: UInt64(seed))
    var compared = 0
    for _ in 0..<400 {
      let json = random.selector()
      guard let parsed = try? SelectorParser.parse(json) else { continue }
      let built = Self.build(json)
      #expect(try built.selector() == parsed, "\(JSONWriter.string(json))")
      compared += 1
    }
    #expect(compared > 200)
  }

  @Test func theReadmeQueryReadsLikeItsJSON() throws {
    let built = try FindQuery(
      matching: Field("age") > 12 && Field("pet.species").in(["cat", "dog"]),
      sort: [.descending("age")], fields: ["name", "age"], limit: 10)
    let parsed = try FindQuery(
      json: JSONParser.parse(
        #"{"selector": {"age": {"$gt": 12}, "pet.species": {"$in": ["cat", "dog"]}}, "sort": [{"age": "desc"}], "fields": ["name", "age"], "limit": 10}"#
      ))
    #expect(built == parsed)
  }

  @Test func swiftValuesAndNegationsWork() throws {
    let minimum = 12
    let names: [String] = ["mike", "fred"]
    let optional: String? = nil
    let selector = try
      (Field("age") >= minimum && !Field("name").in(names)
      || Field("nick") == optional).selector()
    let expected = try SelectorParser.parse(
      JSONParser.parse(
        #"{"$or": [{"$and": [{"age": {"$gte": 12}}, {"$nor": [{"name": {"$in": ["mike", "fred"]}}]}]}, {"nick": null}]}"#
      ))
    #expect(selector == expected)
    #expect(try Where.all.selector() == .all)
    #expect(
      try Field("tags").elementMatch(Field.element == "a").selector()
        == SelectorParser.parse(JSONParser.parse(#"{"tags": {"$elemMatch": {"$eq": "a"}}}"#)))
  }

  struct Pet: Codable {
    var species: String
    var dotted: String
    enum CodingKeys: String, CodingKey {
      case species
      case dotted = "a.b"
    }
  }
  struct Person: Codable {
    var pet: Pet
    enum CodingKeys: String, CodingKey { case pet = "animal" }
  }

  /// Coding keys name fields by their encoded names, nested level by level; a key holding
  /// a dot names one member.
  @Test func codingKeysNameFieldsAsTheyAreEncoded() throws {
    let species = Field(Person.CodingKeys.pet, Pet.CodingKeys.species)
    #expect(species.path == "animal.species")
    #expect(
      try (species == "cat").selector()
        == SelectorParser.parse(JSONParser.parse(#"{"animal": {"species": "cat"}}"#)))
    let dotted = Field(Person.CodingKeys.pet, Pet.CodingKeys.dotted)
    #expect(
      try (dotted == 1).selector()
        == .condition(FieldPath(components: ["animal", "a.b"]), .equal(1)))
  }

  /// Bad paths and arguments are thrown errors naming them, never traps.
  @Test(arguments: ["a..b", "", "$x", "a.$b"])
  func badPathsAreThrownErrors(_ path: String) throws {
    #expect(throws: SetteeError.self) { try (Field(path) == 1).selector() }
    #expect(throws: SetteeError.self) {
      try FindQuery(matching: .all, sort: [.ascending(Field(path))])
    }
    #expect(throws: SetteeError.self) { try FindQuery(matching: .all, fields: [Field(path)]) }
  }

  @Test func badArgumentsAreThrownErrors() throws {
    #expect(throws: SetteeError.self) { try Field("n").mod(0, remainder: 1).selector() }
    #expect(throws: SetteeError.self) { try Field("n").hasCount(-1).selector() }
    #expect(throws: SetteeError.self) { try Field("s").matches("(").selector() }
    #expect(throws: SetteeError.self) { try FindQuery(matching: .all, limit: -1) }
  }
}
