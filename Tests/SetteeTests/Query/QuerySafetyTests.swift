import Settee
import SetteeCore
import SetteeTestSupport
import Testing

@Suite("Query safety")
struct QuerySafetyTests {
  /// Random and mangled selectors never crash, in either dialect: they give results or a
  /// typed error.
  @Test(arguments: QueryDialect.allCases)
  func fuzzedSelectorsGiveResultsOrTypedErrors(dialect: QueryDialect) throws {
    let collection = try Database(inMemoryWith: .init()).collection()
    var generator = RandomQueries(seed: 99)
    try collection.putAll((0..<50).map { generator.document($0) })
    let operators = [
      "$and", "$or", "$nor", "$not", "$eq", "$ne", "$lt", "$gt", "$exists", "$type", "$in", "$nin",
      "$all", "$size", "$mod", "$regex", "$beginsWith", "$elemMatch", "$allMatch", "$keyMapMatch",
      "$text", "$search", "$bogus", "", "a", "a.", ".a", "a..b", "$", "\\", "tags.0",
    ]
    var outcomes = (results: 0, errors: 0)
    for round in 0..<3_000 {
      var text = JSONWriter.string(generator.selector())
      // Mangle: swap in random operators and arguments, cut, or insert garbage.
      switch round % 5 {
      case 0:
        let target = ["$eq", "$in", "$gt", "$or", "$size"][(round / 5) % 5]
        text = text.replacingOccurrences(
          of: "\"\(target)\"", with: "\"\(generator.pick(operators))\"")
      case 1:
        let json: JSON = [generator.pick(operators): generator.value()]
        text = JSONWriter.string(.object(["f": json]))
      case 2:
        let json: JSON = [
          generator.pick(operators): .array([generator.value(), generator.value()])
        ]
        text = JSONWriter.string(json)
      case 3:
        text = String(text.prefix(Int(generator.random.next() % UInt64(text.count + 1))))
      default:
        var bytes = Array(text.utf8)
        if !bytes.isEmpty {
          bytes[Int(generator.random.next() % UInt64(bytes.count))] = generator.pick(
            Array("{}[]:,\"$.\\0x".utf8))
        }
        text = String(decoding: bytes, as: UTF8.self)
      }
      do {
        let query =
          dialect == .cloudantSync
          ? FindQuery(selector: try SelectorParser.parse(text))
          : try FindQuery(
            json: .object(["selector": try JSONParser.parse(text)]), dialect: .couchDB)
        _ = try collection.find(query)
        _ = try collection.count(query)
        outcomes.results += 1
      } catch let error as SetteeError {
        #expect(
          [.invalidJSON, .invalidQuery, .noUsableIndex, .nestingTooDeep].contains(error.code),
          "\(text): \(error)")
        outcomes.errors += 1
      }
    }
    #expect(outcomes.results > 500 && outcomes.errors > 500)
  }

  static let hostile = [
    "'; DROP TABLE documents; --", "\"); DELETE FROM documents; --", "a\"b", "a'b", "[0]", "a]b",
    "$.x", "a\\.b", "日本語", "SELECT", "NULL", "?", "?1", ":name", "x' OR '1'='1",
  ]

  /// Field names and values full of SQL and JSON-path syntax are data, never SQL.
  @Test(arguments: hostile)
  func hostileNamesAndValuesStayData(_ text: String) throws {
    let db = try Database(inMemoryWith: .init())
    let collection = db.collection()
    let field = "f " + text  // top-level names may not start with "_"
    try collection.put([
      "_id": .string(text.isEmpty ? "x" : "id-" + text), .init(field): .string(text), "other": 1,
    ])
    try collection.put(["_id": "decoy", "other": 2])

    let escapedField = FieldPath.escape(field)
    let selector: JSON = [escapedField: .string(text)]
    let query = FindQuery(selector: try SelectorParser.parse(selector))
    #expect(try collection.find(query).map(\.id) == ["id-" + text])
    #expect(
      try collection.find(
        FindQuery(selector: try SelectorParser.parse([escapedField: ["$ne": .string(text)]]))
      ).map(\.id) == ["decoy"])
    #expect(
      try collection.find(
        FindQuery(selector: try SelectorParser.parse(["_id": .string("id-" + text)]))
      ).count == 1)

    let plan = try collection.explain(query)
    #expect(!plan.sql.contains(text) || text.count < 2 || ["SELECT", "NULL", "?"].contains(text))
    #expect(try collection.count() == 2)
  }

  /// String equality first looks for the string's JSON text in the body: strings that need
  /// escaping, member names spelled like the value, and values nested in arrays must give
  /// what the reference (`ReferenceQuery`) gives.
  @Test(arguments: [
    "mike", "a\"b", "back\\slash", "é", "e\u{301}", "tab\t", "nul\u{0}", "", "name", "[1]",
  ])
  func stringEqualityScansAgreeWithTheReference(value: String) throws {
    let collection = try Database(inMemoryWith: .init()).collection()
    // A member name may not hold U+0000 (see NameRulesTests); a value may.
    let key: JSONObject = ["_id": "key", .init(stringLiteral: value): "other", "name": "x"]
    let documents: [JSONObject] = [
      ["_id": "plain", "name": .string(value)],
      ["_id": "nested", "name": ["first": .string(value)], "tags": [.string(value), "y"]],
      ["_id": "inArray", "name": [.string(value), "z"]],
      ["_id": "objects", "pets": [["name": .string(value)], ["name": "rex"]]],
      ["_id": "prefix", "name": .string(value + "s")],
      ["_id": "number", "name": 1],
    ]
    try collection.putAll(documents)
    if value.utf8.contains(0) {
      expectError(.invalidDocument) { try collection.put(key) }
    } else {
      try collection.put(key)
    }
    let all = try collection.find(FindQuery())
    for selector: JSON in [
      ["name": .string(value)], ["tags": .string(value)], ["pets.name": .string(value)],
      ["name": ["$in": [.string(value), "nothing"]]], ["name": ["$ne": .string(value)]],
      ["$nor": [["name": .string(value)]]], ["name.first": .string(value)],
    ] {
      let query = FindQuery(selector: try SelectorParser.parse(selector))
      let found = try collection.find(query).map(\.id)
      let expected = ReferenceQuery.find(all, selector: selector)
      #expect(
        found == expected,
        "\(JSONWriter.string(selector)) \(value.unicodeScalars.map(\.value)) \(found) \(expected)")
    }
  }
}
