import Foundation
import Settee
import SetteeCore
import SetteeTestSupport
import Testing

/// Declarative views that state what CouchDB's map functions do, as data: several emits per
/// document, constant keys and values, objects and arrays made of fields and constants.
/// Each case is a map function from CouchDB's guide and peers' view tests, with its rows.
@Suite("Declarative views: several rules, constants, objects")
struct DeclaredRulesTests {
  let docs: DocumentCollection

  init() throws {
    docs = try Database(inMemoryWith: .init()).collection("posts")
    try docs.putAll([
      [
        "_id": "p1", "type": "post", "title": "Hello", "author": "ann", "tags": ["a", "b"],
        "date": [2024, 1, 5],
      ],
      [
        "_id": "p2", "type": "post", "title": "Again", "author": "bo", "tags": ["b"],
        "date": [2024, 2, 1],
      ],
      ["_id": "c1", "type": "comment", "post": "p1", "author": "bo"],
    ])
  }

  func rows(_ definition: JSON, _ query: ViewQuery = ViewQuery()) throws -> [JSON] {
    try docs.defineView(json: definition).query(query).rows.map(\.json)
  }

  // function(doc) { emit(doc._id, 1); emit(doc.author, 2) }
  @Test func severalEmitsPerDocument() throws {
    let result = try rows([
      "name": "two", "filter": ["type": "post"],
      "emit": [["key": "_id", "value": ["const": 1]], ["key": "author", "value": ["const": 2]]],
    ])
    #expect(
      result.map { [$0["key"]!, $0["value"]!] }
        == [["ann", 2], ["bo", 2], ["p1", 1], ["p2", 1]])
  }

  // function(doc) { if (doc.type == "post") emit([doc._id, 0], doc.title);
  //                 else emit([doc.post, 1], doc.author) }   (CouchDB's "view collation" join)
  @Test func theJoinOfPostsAndComments() throws {
    let result = try rows([
      "name": "join",
      "emit": [
        ["key": ["_id", ["const": 0]], "value": "title", "filter": ["type": "post"]],
        ["key": ["post", ["const": 1]], "value": "author", "filter": ["type": "comment"]],
      ],
    ])
    #expect(
      result.map(\.["key"]) == [["p1", 0], ["p1", 1], ["p2", 0]] as [JSON?])
    #expect(result.map(\.["value"]) == ["Hello", "bo", "Again"] as [JSON?])
  }

  // function(doc) { emit(null, {title: doc.title, n: 1}) }  (a constant key, an object value)
  @Test func constantKeysAndObjectValues() throws {
    let result = try rows([
      "name": "all", "key": ["const": nil], "filter": ["type": "post"],
      "value": ["object": ["title": "title", "n": ["const": 1]]],
    ])
    #expect(result.map(\.["key"]) == [.null, .null])
    #expect(
      result.map(\.["value"]) == [["title": "Hello", "n": 1], ["title": "Again", "n": 1]] as [JSON?]
    )
  }

  // function(doc) { doc.tags.forEach(function(t) { emit([t, doc.date], 1) }) } with _count
  @Test func eachWithConstantsAndAReduce() throws {
    let definition: JSON = [
      "name": "tags", "key": ["tags", "date"], "each": "tags", "value": ["const": 1],
      "reduce": "_sum",
    ]
    let grouped = try rows(definition, ViewQuery().grouped(level: 1))
    #expect(grouped.map { [$0["key"]!, $0["value"]!] } == [[["a"], 1], [["b"], 2]])
  }

  @Test func theOneRuleFormIsUnchanged() throws {
    let definition: JSON = ["name": "v", "key": "title", "value": "author"]
    let parsed = try ViewDefinition(json: definition)
    #expect(parsed.rules.count == 1 && parsed.keyFields.count == 1)
    #expect(try rows(definition).map(\.["value"]) == ["bo", "ann"] as [JSON?])
  }

  @Test(arguments: [
    #"{"name": "x", "emit": []}"#,
    #"{"name": "x", "emit": [{"value": 1}]}"#,
    #"{"name": "x", "emit": [{"key": "a", "bogus": 1}]}"#,
    #"{"name": "x", "emit": [{"key": "a"}], "key": "b"}"#,
    #"{"name": "x", "key": {"const": 1, "extra": 2}}"#,
    #"{"name": "x", "key": {"object": 3}}"#,
    #"{"name": "x", "key": [{"const": 1}], "each": true}"#,
  ])
  func badRulesAreNamed(_ text: String) throws {
    expectError(.invalidArgument) { _ = try ViewDefinition(json: JSONParser.parse(text)) }
  }
}
