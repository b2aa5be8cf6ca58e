import Foundation
import Settee
import SetteeCore
import SetteeTestSupport
import Testing

/// CouchDB's `_index` bodies: optional names, design documents, strict `index` members,
/// and partial indexes that hold only the documents their filter matches (issue 15).
@Suite("CouchDB's _index")
struct CouchDBIndexTests {
  let people: DocumentCollection

  init() throws {
    people = try Database(inMemoryWith: .init()).collection("people")
    try people.putAll(
      (0..<40).map { number in
        [
          "_id": .string(String(format: "p%02d", number)), "age": .int(Int64(number)),
          "type": number % 4 == 0 ? "admin" : "user",
        ]
      })
  }

  func definition(_ body: String) throws -> IndexDefinition {
    try IndexDefinition(json: JSONParser.parse(body))
  }

  func find(_ body: String) throws -> FindResult {
    try people.findPage(FindQuery(json: JSONParser.parse(body)))
  }

  @Test func namesAndDesignDocuments() throws {
    let unnamed = try definition(#"{"index": {"fields": ["age"]}}"#)
    #expect(unnamed.name.utf8.count == 32)
    #expect(try definition(#"{"index": {"fields": ["age"]}, "type": "json"}"#).name == unnamed.name)
    #expect(try definition(#"{"index": {"fields": [{"age": "asc"}]}}"#).name == unnamed.name)
    #expect(try definition(#"{"index": {"fields": ["type"]}}"#).name != unnamed.name)
    #expect(unnamed.designDocumentID == "_design/\(unnamed.name)")
    let named = try definition(
      #"{"index": {"fields": ["age"]}, "ddoc": "people", "name": "by-age"}"#)
    #expect(named.designDocumentID == "_design/people")
    try people.ensureIndexed(named)
    #expect(try people.indexes().first?.designDocumentID == "_design/people")
    // use_index by design document, with or without the prefix, and as [ddoc, name].
    for useIndex in [#""_design/people""#, #""people""#, #"["_design/people", "by-age"]"#] {
      let page = try find(#"{"selector": {"age": {"$gt": 30}}, "use_index": \#(useIndex)}"#)
      #expect(page.warning == nil && page.documents.count == 9, "\(useIndex)")
    }
    for body in [
      #"{"index": {"fields": ["age"]}, "ddoc": 3}"#, #"{"index": {"fields": ["age"]}, "ddoc": ""}"#,
      #"{"index": {"fields": ["age"]}, "name": 3}"#,
      #"{"index": {"fields": ["age"], "selector": {"age": 1}}}"#,
      #"{"index": {"fields": ["age"], "bogus": 1}}"#,
      #"{"index": {"fields": ["age"], "partial_filter_selector": []}}"#,
      #"{"index": {"fields": ["age"], "partial_filter_selector": {"age": {"$bogus": 1}}}}"#,
    ] {
      expectError(.invalidIndex) { _ = try definition(body) }
    }
  }

  @Test func aPartialIndexHoldsOnlyItsDocumentsAndAnswersOnlyWhatItCan() throws {
    let partial = try definition(
      #"{"index": {"fields": ["age"], "partial_filter_selector": {"type": "user"}}, "name": "users"}"#
    )
    try people.ensureIndexed(partial)
    #expect(try people.indexes().first?.partialFilter != nil)
    // A query that includes the filter reads the index, which holds only users.
    let users = try find(
      #"{"selector": {"type": "user", "age": {"$gte": 0}}, "execution_stats": true}"#)
    #expect(users.documents.count == 30)
    #expect(users.executionStats?.totalKeysExamined == 30)
    #expect(
      try people.explain(
        FindQuery(json: JSONParser.parse(#"{"selector": {"type": "user", "age": 3}}"#))
      )
      .indexes == ["users"])
    // One that does not is answered without it, whole.
    let everyone = try find(#"{"selector": {"age": {"$gte": 0}}}"#)
    #expect(everyone.documents.count == 40)
    // Naming it for such a query falls back with a warning, or fails without fallback.
    let forced = try find(#"{"selector": {"age": {"$gte": 0}}, "use_index": "users"}"#)
    #expect(forced.documents.count == 40)
    #expect(forced.warning?.contains("_design/users was not used") == true)
    expectError(.noUsableIndex) {
      _ = try find(
        #"{"selector": {"age": {"$gte": 0}}, "use_index": "users", "allow_fallback": false}"#)
    }
    // Writes move documents in and out of it.
    try people.put(["_id": "q1", "age": 100, "type": "user"])
    var admin = try #require(try people.get("p01")).json
    admin["type"] = "admin"
    try people.put(admin)
    let after = try find(
      #"{"selector": {"type": "user", "age": {"$gte": 0}}, "execution_stats": true}"#)
    #expect(after.documents.count == 30 && after.executionStats?.totalKeysExamined == 30)
    #expect(try people.database.check().isHealthy)
  }

  @Test func partialIndexesFromSwift() async throws {
    try await people.ensureIndexed(["age"], name: "admins", partialFilter: Field("type") == "admin")
    let query = try FindQuery(matching: Field("type") == "admin" && Field("age") > 20)
    #expect(try await people.explain(query).indexes == ["admins"])
    #expect(try await people.find(query).map(\.id) == ["p24", "p28", "p32", "p36"])
    #expect(try await people.explain(FindQuery(matching: Field("age") > 20)).indexes.isEmpty)
  }

  @Test func theListIsCouchDBsShape() throws {
    try people.ensureIndexed(
      try definition(
        #"{"index": {"fields": ["age"], "partial_filter_selector": {"type": "user"}}, "name": "users", "ddoc": "d"}"#
      ))
    let listed = [IndexDefinition.allDocsListing] + (try people.indexes()).map(\.couchDBListing)
    #expect(
      listed[0] == [
        "ddoc": nil, "name": "_all_docs", "type": "special", "def": ["fields": [["_id": "asc"]]],
      ])
    #expect(
      listed[1]
        == [
          "ddoc": "_design/d", "name": "users", "type": "json",
          "def": [
            "fields": [["age": "asc"]], "partial_filter_selector": ["type": ["$eq": "user"]],
          ],
        ])
  }
}
