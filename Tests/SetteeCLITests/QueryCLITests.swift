import Foundation
import SetteeCore
import SetteeTestSupport
import Testing

@Suite("settee index, find and explain")
struct QueryCLITests {
  let directory = TemporaryDirectory()
  var db: String { directory.path("query.db") }

  func settee(_ arguments: String...) throws -> SetteeBinary.Run {
    try SetteeBinary.run(["--db", db] + arguments)
  }

  /// `--dialect couchdb` answers as CouchDB's `_find` would, the default as Cloudant Sync.
  @Test func findsInEitherDialect() throws {
    for document in [
      #"{"_id": "a", "tags": ["blue", "red"], "n": null}"#, #"{"_id": "b", "tags": "blue", "n": 3}"#,
    ] {
      _ = try json(try settee("put", document))
    }
    func ids(_ arguments: String...) throws -> [JSON] {
      try json(try SetteeBinary.run(["--db", db, "find"] + arguments))["docs"]?.arrayValue ?? []
    }
    let selector = #"{"selector": {"tags": "blue"}}"#
    #expect(try ids(selector).map { $0["_id"] } == ["a", "b"])
    #expect(try ids("--dialect", "couchdb", selector).map { $0["_id"] } == ["b"])
    // Ranges across types, and fields without `_id` unless asked.
    #expect(
      try ids("--dialect", "couchdb", #"{"selector": {"n": {"$lt": 5}}, "fields": ["n"]}"#)
        == [["n": .null], ["n": 3]])
    #expect(try ids(#"{"selector": {"n": {"$lt": 5}}, "fields": ["n"]}"#).count == 1)
    // CouchDB's refusals, with its error names.
    let refused = try settee("find", "--dialect", "couchdb", #"{"selector": {"n": 3}, "sort": ["n"]}"#)
    #expect(refused.status == 1)
    #expect(try JSONParser.parse(refused.stderr)["error"] == "no_usable_index")
    let unknown = try settee("find", "--dialect", "couchdb", #"{"selector": {"n": {"$foo": 1}}}"#)
    #expect(try JSONParser.parse(unknown.stderr)["error"] == "invalid_operator")
  }

  @Test func indexesFindAndExplain() throws {
    let input = directory.path("people.ndjson")
    try SampleData.ndjson(500).write(toFile: input, atomically: false, encoding: .utf8)
    _ = try json(try settee("import", input))

    let created = try json(
      try settee(
        "index", "create", #"{"index":{"fields":["docNumber"]},"name":"num","type":"json"}"#))
    #expect(created == ["result": "created", "id": "_design/num", "name": "num"])
    #expect(
      try json(try settee("index", "create", #"{"index":{"fields":["docNumber"]},"name":"num"}"#))[
        "result"] == "exists")
    let clash = try settee("index", "create", #"{"index":{"fields":["age"]},"name":"num"}"#)
    #expect(clash.status == 1)
    #expect(try JSONParser.parse(clash.stderr)["error"] == "invalid_index")

    let listed = try json(try settee("index", "list"))
    #expect(listed["total_rows"] == 2)
    #expect(listed["indexes"]?[1]?["name"] == "num")

    let found = try json(
      try settee(
        "find",
        #"{"selector":{"docNumber":{"$gte":10,"$lt":13}},"fields":["docNumber"],"sort":[{"docNumber":"desc"}]}"#
      ))
    let docs = try #require(found["docs"]?.arrayValue)
    #expect(docs.map { $0["docNumber"] } == [12, 11, 10])
    #expect(docs[0]["_id"] == .string(SampleData.id(12)))
    #expect(docs[0]["name"] == nil)

    let plan = try json(try settee("explain", #"{"selector":{"docNumber":{"$gte":10,"$lt":13}}}"#))
    #expect(plan["index"] == "num")
    #expect(plan["sql"]?.stringValue?.contains("ix_") == true)
    let scan = try json(try settee("explain", #"{"selector":{"name":"mike"}}"#))
    #expect(scan["index"] == .null)
    #expect(scan["scan"] == "collection")

    #expect(
      try json(try settee("find", #"{"selector":{"nobody":true}}"#))
        == [
          "docs": [], "bookmark": "nil",
          "warning": "No matching index found, create an index to optimize query time.",
        ])
    #expect(try json(try settee("index", "delete", "num")) == ["ok": true])
    #expect(try settee("index", "delete", "num").status == 1)
  }

  @Test(arguments: [
    (#"{"selector":{"age":{"$bogus":1}}}"#, "invalid_query", "$bogus"),
    (#"{"selector":{"age":{"$size":-1}}}"#, "invalid_query", "$size"),
    (#"{"selector":{"age":{"$mod":[0,1]}}}"#, "invalid_query", "$mod"),
    (#"{"selector":{"a":{"$regex":"("}}}"#, "invalid_query", "$regex"),
    (#"{"selector":{}, "limit": -1}"#, "invalid_query", "limit"),
    (#"{"selector":{}, "use_index": "nope", "allow_fallback": false}"#, "no_usable_index", "nope"),
    (#"{"selector":{"$text":{"$search":"x"}}}"#, "no_usable_index", "TEXT"),
    (#"{"selector":[1]}"#, "invalid_query", "object"),
    (#"{"sort":["a"]}"#, "invalid_query", "selector"),
    (#"{"selector":{"a":1}"#, "bad_request", "JSON"),
  ])
  func badQueriesAreTypedErrorsNamingTheOperator(
    _ query: String, _ error: String, _ mentions: String
  ) throws {
    _ = try settee("put", #"{"_id":"x","age":1}"#)
    let run = try settee("find", query)
    #expect(run.status == 1)
    let body = try JSONParser.parse(run.stderr)
    #expect(body["error"] == .string(error), "\(run.stderr)")
    #expect(body["reason"]?.stringValue?.contains(mentions) == true, "\(run.stderr)")
  }
}

extension QueryCLITests {
  @Test func textIndexesAndSearch() throws {
    for (id, comment) in [
      ("a", "Goran retired from the navy"), ("b", "Rosa is a retiring teacher"),
    ] {
      _ = try json(try settee("put", #"{"_id":"\#(id)","comment":"\#(comment)"}"#))
    }
    let created = try json(
      try settee(
        "index", "create",
        #"{"index":{"fields":["comment"]},"name":"t","type":"text","settings":{"tokenize":"porter"}}"#
      ))
    #expect(created["result"] == "created")
    let listed = try json(try settee("index", "list"))
    #expect(listed["indexes"]?[1]?["type"] == "text")
    #expect(listed["indexes"]?[1]?["settings"] == ["tokenize": "porter"])
    let found = try json(
      try settee(
        "find",
        #"{"selector":{"$text":{"$search":"retire"}},"sort":[{"$relevance":"desc"}],"fields":["comment"]}"#
      ))
    #expect(
      Set(found["docs"]?.arrayValue?.compactMap { $0["_id"]?.stringValue } ?? []) == ["a", "b"])
    let plan = try json(try settee("explain", #"{"selector":{"$text":{"$search":"navy"}}}"#))
    #expect(plan["index"] == "t")
  }
}
