import Foundation
import Settee
import SetteeCore
import SetteeTestSupport
import Testing

/// Members whose names start with `$` are written `\$` in paths (as `.` is written `\.`),
/// and work in selectors, `fields`, `sort`, JSON indexes and `where` strings; CouchDB's
/// `test_peso_key` asks for them in `fields` unescaped, which works too.
@Suite("Member names starting with $")
struct DollarNameTests {
  let docs: DocumentCollection

  init() throws {
    docs = try Database(inMemoryWith: .init()).collection()
    try docs.putAll([
      ["_id": "d1", "$weird": 1, "deep": ["$key": "deep peso"], "type": "complex_key"],
      ["_id": "d2", "$weird": 2, "deep": ["$key": "other"], "type": "complex_key"],
      ["_id": "d3", "weird": 1],
    ])
  }

  func ids(_ request: String) throws -> [String] {
    try docs.find(FindQuery(json: JSONParser.parse(request))).map(\.id)
  }

  @Test(arguments: [
    (#"{"selector": {"\\$weird": 1}}"#, ["d1"]),
    (#"{"selector": {"\\$weird": {"$gt": 1}}}"#, ["d2"]),
    (#"{"selector": {"deep.\\$key": "deep peso"}}"#, ["d1"]),
    (#"{"selector": {"deep": {"\\$key": "other"}}}"#, ["d2"]),
    (#"{"selector": {"$or": [{"\\$weird": 2}, {"weird": 1}]}}"#, ["d2", "d3"]),
    (#"{"selector": {"\\$weird": {"$exists": false}}}"#, ["d3"]),
    (#"{"selector": {"type": "complex_key"}, "sort": [{"\\$weird": "desc"}]}"#, ["d2", "d1"]),
    (#"{"selector": {"type": "complex_key"}, "sort": [{"$weird": "desc"}]}"#, ["d2", "d1"]),
  ])
  func selectorsAndSortsFindThem(_ request: String, _ expected: [String]) throws {
    #expect(try ids(request) == expected)
    try docs.ensureIndexed(["\\$weird"], name: "weird")
    #expect(try ids(request) == expected, "with an index")
    try docs.deleteIndex(named: "weird")
  }

  @Test func anIndexOnSuchAFieldIsUsedAndListedEscaped() throws {
    try docs.ensureIndexed(["\\$weird", "deep.\\$key"], name: "weird")
    let query = try FindQuery(json: JSONParser.parse(#"{"selector": {"\\$weird": {"$gte": 1}}}"#))
    #expect(try docs.explain(query).indexes == ["weird"])
    #expect(try docs.find(query).map(\.id) == ["d1", "d2"])
    let listed = try docs.indexes().first { $0.name == "weird" }
    #expect(listed?.fields.map(\.description) == ["\\$weird", "deep.\\$key"])
    #expect(try docs.database.check().problems.isEmpty)
  }

  @Test func fieldsTakeBothSpellings() throws {
    for fields in [#"["$weird", "deep.$key"]"#, #"["\\$weird", "deep.\\$key"]"#] {
      let found = try docs.find(
        FindQuery(json: JSONParser.parse(#"{"selector": {"_id": "d1"}, "fields": \#(fields)}"#)))
      #expect(
        found.first?.json == [
          "_id": "d1", "_rev": found.first?.json["_rev"] ?? .null, "$weird": 1,
          "deep": ["$key": "deep peso"],
        ])
    }
  }

  @Test func whereStringsTakeBothSpellings() throws {
    #expect(try docs.find(where: "[$weird] = 1").map(\.id) == ["d1"])
    #expect(try docs.find(where: "[\\$weird] = 2").map(\.id) == ["d2"])
    #expect(try docs.find(where: "[deep.$key] = ?", args: ["other"]).map(\.id) == ["d2"])
  }

  @Test func viewsAndValueIndexesTakeThem() throws {
    _ = try docs.defineView(json: ["name": "v", "key": "$weird", "filter": ["\\$weird": 2]])
    #expect(try docs.view(named: "v").query().rows.map(\.id) == ["d2"])
    try docs.valueIndexes.define("w", field: "deep.$key")
    #expect(try docs.valueIndexes.uniqueValues(of: "w") == ["deep peso", "other"])
  }

  @Test(arguments: [#"{"$weird": 1}"#, #"{"deep.$key": 1}"#])
  func anUnescapedDollarInASelectorIsAnErrorThatShowsTheEscape(_ selector: String) throws {
    let error = expectError(.invalidQuery) { _ = try ids(#"{"selector": \#(selector)}"#) }
    #expect(error?.message.contains(#"\\$"#) == true, "\(error?.message ?? "")")
  }

  @Test func escapedPathsPrintAndParseBack() throws {
    for name in ["$weird", "$", "a$", "\\$x", "$a.b", "$$"] {
      let path = FieldPath(components: [name, "x"])
      #expect(try FieldPath(parsing: path.description) == path, "\(path.description)")
    }
  }
}
