import Foundation
import Settee
import SetteeCore
import SetteeTestSupport
import Testing

/// `_find` answers as CouchDB's does where CouchDB's clients notice (issue 15).
@Suite("CouchDB's _find: results")
struct CouchDBFindTests {
  let people: DocumentCollection

  init() throws {
    people = try Database(inMemoryWith: .init()).collection("people")
    try people.putAll([
      [
        "_id": "a", "name": "ann", "age": 30, "tags": ["pilot", "engineer"], "meta": [:],
        "address": ["city": "Oslo"], "pets": [["name": "rex", "kind": "dog"], ["kind": "cat"]],
      ],
      ["_id": "b", "name": "bo", "age": 12, "meta": ["color": "red"], "address": [:]],
      ["_id": "_design/app", "name": "ann", "age": 30, "views": [:]],
    ])
  }

  func find(_ body: String) throws -> [Document] {
    try people.find(FindQuery(json: JSONParser.parse(body)))
  }

  @Test func anEmptyFieldsListReturnsWholeDocuments() throws {
    let found = try find(#"{"selector": {"_id": "b"}, "fields": []}"#)
    #expect(found.first?.body["meta"] == ["color": "red"] && found.first?.body.count == 4)
    #expect(try people.find(["_id": "b"], fields: []).first?.body.count == 4)
  }

  @Test func projectionsLeaveOutWhatIsMissing() throws {
    let found = try find(
      #"{"selector": {"age": {"$gt": 0}}, "fields": ["meta.color", "address.city", "nope"]}"#)
    #expect(found.map(\.id) == ["a", "b"])
    #expect(found[0].body == ["address": ["city": "Oslo"]])  // no "meta": {}
    #expect(found[1].body == ["meta": ["color": "red"]])  // no "address": {}
    // A whole empty object asked for by name is returned as it is.
    #expect(try find(#"{"selector": {"_id": "a"}, "fields": ["meta"]}"#)[0].body == ["meta": [:]])
  }

  /// CouchDB sets each field it finds, in the order of `fields`: a member comes where the
  /// first path under it that finds something comes, not where a path that finds nothing
  /// named it.
  @Test(arguments: [
    (#"["meta.color", "name", "meta"]"#, ["name", "meta"]),
    (#"["address.zip", "tags.0", "address.city"]"#, ["tags", "address"]),
    (#"["tags.7", "age", "tags.1", "tags.0"]"#, ["age", "tags"]),
    (#"["name", "meta.color", "meta"]"#, ["name", "meta"]),
  ])
  func membersComeInTheOrderTheyAreFound(_ fields: String, _ order: [String]) throws {
    let found = try find(#"{"selector": {"_id": "a"}, "fields": "# + fields + "}")[0]
    #expect(found.body.map(\.key) == order, "fields \(fields)")
  }

  @Test func projectionsReadArraysAsSelectorsDo() throws {
    // tags.0 in a selector is the first element; in a projection too, kept under its index
    // as CouchDB's projection keeps it.
    #expect(try find(#"{"selector": {"tags.0": "pilot"}}"#).map(\.id) == ["a"])
    let first = try find(#"{"selector": {"_id": "a"}, "fields": ["tags.0"]}"#)[0]
    #expect(first.body == ["tags": ["0": "pilot"]])
    #expect(
      try find(#"{"selector": {"_id": "a"}, "fields": ["tags.1", "tags.0", "tags.7"]}"#)[0].body
        == ["tags": ["1": "engineer", "0": "pilot"]])
    // Another name reaches into each object of the array, as a selector's implicit element
    // match does; elements without the field are left out.
    #expect(
      try find(#"{"selector": {"_id": "a"}, "fields": ["pets.name"]}"#)[0].body
        == ["pets": [["name": "rex"]]])
    #expect(try find(#"{"selector": {"_id": "a"}, "fields": ["pets.color"]}"#)[0].body == [:])
  }

  @Test(arguments: [nil, "name", "name-age"] as [String?])
  func designDocumentsAreNeverFound(index: String?) throws {
    switch index {
    case "name": try people.ensureIndexed(["name"], name: "name")
    case "name-age": try people.ensureIndexed(["name", "age"], name: "name-age")
    default: break
    }
    for body in [
      #"{"selector": {"name": "ann"}}"#, #"{"selector": {"name": "ann"}, "fields": ["name"]}"#,
      #"{"selector": {"name": "ann", "age": 30}, "fields": ["name", "age"]}"#,
      #"{"selector": {"_id": {"$gt": null}}}"#, #"{"selector": {"_id": "_design/app"}}"#,
      #"{"selector": {"name": {"$regex": "^a"}}, "sort": ["name"]}"#,
    ] {
      let query = try FindQuery(json: JSONParser.parse(body))
      #expect(try !people.find(query).contains { $0.id.hasPrefix("_design/") }, "\(body)")
      #expect(try people.count(query) == people.find(query).count, "\(body)")
    }
    // all-docs and the changes feed still list it.
    #expect(try people.changes().contains { $0.id == "_design/app" })
    #expect(try people.get("_design/app") != nil)
  }

  /// Every face decides what a design document is by the same bytes: `_find` (SQL and
  /// matcher), Swift and declared views, value indexes. A combining mark right after the
  /// slash still leaves the id starting with the bytes `_design/` (a grapheme-based
  /// `hasPrefix` said no); an accent before it does not.
  @Test func everyFaceAgreesOnWhatADesignDocumentIs() throws {
    let collection = try Database(inMemoryWith: .init()).collection()
    let ids = ["_design/a", "_design/\u{301}b", "a", "b\u{301}"]
    try collection.putAll(ids.map { ["_id": .string($0), "k": "x"] })
    // "_design/" alone names no design document: refused, as CouchDB refuses it.
    expectError(.invalidID) { try collection.put(["_id": "_design/", "k": "x"]) }
    let results = ["a", "b\u{301}"]
    #expect(try collection.find(FindQuery()).map(\.id) == results)
    let scanned = FindQuery(selector: .condition("k", .regex("x")))
    #expect(try collection.find(scanned).map(\.id) == results)
    #expect(
      try Matcher.find(
        FindQuery(),
        in: collection.allDocuments(ViewQuery(includeDocs: true)).rows
          .compactMap { $0.document }
      ).map(\.id) == results)
    let swiftView = try collection.view("byK", version: "1") { doc, emit in
      emit(doc["k"] ?? nil, nil)
    }
    #expect(try swiftView.query().rows.compactMap(\.id) == results)
    let declared = try collection.defineView(
      json: JSONParser.parse(#"{"name": "declared", "key": "k"}"#))
    #expect(try declared.query().rows.compactMap(\.id) == results)
    try collection.valueIndexes.define("k", field: "k")
    #expect(try collection.valueIndexes.documents(matching: ["k": "x"]).map(\.id) == results)
    #expect(try collection.allDocuments().rows.count == ids.count)
  }

  @Test func errorsInsideElementMatchesNameTheField() throws {
    for (body, expected) in [
      (
        #"{"selector": {"pet": {"$elemMatch": {"$in": 3}}}}"#,
        #""$in" inside $elemMatch on "pet" needs an array"#
      ),
      (
        #"{"selector": {"pets": {"$allMatch": {"kind": {"$size": "x"}}}}}"#,
        #""$size" on "kind" inside $allMatch on "pets""#
      ),
      (
        #"{"selector": {"a": {"$elemMatch": {"b": {"$elemMatch": {"$regex": 1}}}}}}"#,
        #""$regex" inside $elemMatch on "b" inside $elemMatch on "a""#
      ),
    ] {
      let error = expectError(.invalidQuery) { _ = try find(body) }
      #expect(error?.message.contains(expected) == true, "\(error?.message ?? "")")
    }
  }
}

/// CouchDB's index of no fields (`POST _index {"index": {"fields": []}}`): kept in the
/// catalog without entries, read only by CouchDB's dialect (every document in id order),
/// and harmless to writes, checks, rebuilds, Settee's own planner and deletion.
@Suite("CouchDB's index of no fields")
struct EmptyIndexTests {
  @Test func onlyCouchDBsDialectReadsIt() throws {
    let database = try Database(inMemoryWith: .init())
    let items = database.collection("items")
    try items.putAll([["_id": "b", "n": 2], ["_id": "a", "n": 1], ["_id": "_design/d"]])
    try items.ensureIndexed([], name: "everything")
    try items.putAll([["_id": "c", "n": 3]])
    try items.remove("b")
    let couch = try FindQuery(
      json: JSONParser.parse(#"{"selector": {"n": {"$gt": 0}}}"#), dialect: .couchDB)
    #expect(try items.find(couch).map(\.id) == ["a", "c"])
    // The seed's planner plans as if it were not there, use_index naming it included.
    let seed = try FindQuery(json: JSONParser.parse(#"{"selector": {"n": {"$gt": 0}}}"#))
    #expect(try items.find(seed).map(\.id) == ["a", "c"])
    var named = seed
    named.useIndex = "everything"
    #expect(try items.find(named).map(\.id) == ["a", "c"])
    try items.rebuildIndexes()
    let report = try database.check()
    #expect(report.isHealthy, "\(report.problems)")
    #expect(try items.indexes().map(\.name).contains("everything"))
    try items.deleteIndex(named: "everything")
    #expect(try !items.indexes().map(\.name).contains("everything"))
  }

  @Test func textIndexesStillNeedAField() {
    #expect(throws: SetteeError.self) { try IndexDefinition(name: "t", fields: [], kind: .text) }
  }
}
