import Foundation
import Settee
import SetteeCore
import SetteeTestSupport
import Testing

/// Cases from CouchDB's and Couchbase Lite's own view tests that Settee answered
/// differently: declarative views reading `_id`/`_rev`, `keys` with document id ranges
/// and `descending`, and linked documents.
@Suite("Views against their peers' tests")
struct PeerViewTests {
  let docs: DocumentCollection

  init() throws {
    docs = try Database(inMemoryWith: .init()).collection()
  }

  @Test func aDeclarativeViewReadsIDAndRev() throws {
    let foo = try docs.put(["_id": "foo", "bar": "baz"])
    // Mapped in SQL (no filter) and in Swift (a filter): the same rows.
    for filter: JSON? in [nil, ["bar": ["$exists": true]]] {
      var definition: JSONObject = ["name": "v", "key": "_id", "value": "bar"]
      if let filter { definition["filter"] = filter }
      let byID = try docs.defineView(json: .object(definition))
      #expect(try byID.query().rows == [ViewRow(key: "foo", value: "baz", id: "foo")])
      definition = ["name": "r", "key": ["_id", "bar"], "value": "_rev"]
      if let filter { definition["filter"] = filter }
      let compound = try docs.defineView(json: .object(definition))
      #expect(
        try compound.query().rows
          == [ViewRow(key: ["foo", "baz"], value: .string(foo.rev.description), id: "foo")])
    }
  }

  func byK() throws -> View {
    try docs.putAll([
      ["_id": "a", "k": 1], ["_id": "b", "k": 1], ["_id": "c", "k": 1], ["_id": "d", "k": 2],
    ])
    return try docs.defineView(json: ["name": "k", "key": "k"])
  }

  @Test(arguments: [
    (#"{"keys": [1], "startkey_docid": "b"}"#, ["b", "c"]),
    (#"{"keys": [1], "endkey_docid": "b"}"#, ["a", "b"]),
    (#"{"keys": [1], "endkey_docid": "b", "inclusive_end": false}"#, ["a"]),
    (#"{"keys": [1, 2], "startkey_docid": "b", "endkey_docid": "c"}"#, ["b", "c"]),
    (#"{"keys": [1], "startkey_docid": "b", "descending": true}"#, ["b", "a"]),
    (#"{"keys": [1, 2], "descending": true}"#, ["d", "c", "b", "a"]),
    (#"{"keys": [2, 1]}"#, ["d", "a", "b", "c"]),
    (#"{"keys": [2, 1], "descending": true}"#, ["c", "b", "a", "d"]),
    (#"{"key": 1, "startkey_docid": "b"}"#, ["b", "c"]),
  ])
  func keysWithDocumentIDsAndDescending(_ options: String, _ ids: [String]) throws {
    let view = try byK()
    let query = try ViewQuery(json: JSONParser.parse(options))
    #expect(try view.query(query).rows.map(\.id) == ids)
  }

  @Test func allDocsAndViewsWalkKeysBackwardsAlike() throws {
    _ = try byK()
    let all = try docs.allDocuments(ViewQuery(keys: ["a", "d", "x"], descending: true))
    #expect(all.rows.map(\.key) == ["x", "d", "a"])
  }

  @Test func reducedKeysWalkBackwardsToo() throws {
    try docs.putAll([["_id": "a", "k": 1], ["_id": "b", "k": 2]])
    let view = try docs.defineView(json: ["name": "c", "key": "k", "reduce": "_count"])
    let rows = try view.query(ViewQuery(keys: [1, 2], descending: true, group: true)).rows
    #expect(rows.map(\.key) == [2, 1])
  }

  @Test func linkedDocumentsComeWithIncludeDocs() throws {
    let target = try docs.put(["_id": "target", "name": "linked"])
    try docs.putAll([
      ["_id": "l1", "link": ["_id": "target"]],
      ["_id": "l2", "link": ["_id": "target", "_rev": .string(target.rev.description)]],
      ["_id": "l3", "link": ["_id": "target", "_rev": "1-00000000000000000000000000000000"]],
      ["_id": "l4", "link": ["_id": "nowhere"]],
      ["_id": "l5", "link": "not an object"],
    ])
    let view = try docs.view("links", version: "1") { document, emit in
      if let link = document["link"] { emit(.string(document.id), link) }
    }
    let rows = try view.query(ViewQuery(includeDocs: true)).rows
    #expect(rows.map(\.id) == ["l1", "l2", "l3", "l4", "l5"])
    #expect(rows.map { $0.document?.id } == ["target", "target", "target", "nowhere", "l5"])
    #expect(rows.map { $0.json["doc"]?["name"] } == ["linked", "linked", nil, nil, nil])
    #expect(rows.map { $0.json["doc"] == .null } == [false, false, true, true, false])

    // A replaced revision is opened until compaction, even once the document is deleted
    // (CouchDB's load_doc opens the revision named); the unnamed link follows the winner.
    let edited = try docs.put([
      "_id": "target", "_rev": .string(target.rev.description), "name": "new",
    ])
    try docs.delete("target", rev: edited.rev)
    let after = try view.query(ViewQuery(includeDocs: true)).rows
    #expect(after.prefix(3).map { $0.json["doc"]?["name"] } == [nil, "linked", nil])
    try docs.compact()
    #expect(try view.query(ViewQuery(includeDocs: true)).rows[1].json["doc"] == .null)
  }

  /// Names are values: what Cloudant Sync refused as a table name is just a name here.
  @Test func valueIndexNamesAreBoundNotSpliced() throws {
    try docs.put(["_id": "c1", "name": "ann"])
    let name = "abc123^&*…; drop table customer;"
    try docs.valueIndexes.define(name, field: "name")
    #expect(try docs.valueIndexes.uniqueValues(of: name) == ["ann"])
    #expect(try docs.valueIndexes.names().contains(name))
    expectError(.invalidArgument) { try docs.valueIndexes.define("_reserved", field: "name") }
    expectError(.invalidArgument) { try docs.valueIndexes.define("", field: "name") }
  }

  /// Options compose one call at a time, and no key can be mistaken for "no key":
  /// `.key(nil)` is the JSON null key, and the initializer refuses the `nil` literal.
  @Test func chainedOptionsAndTheNullKey() throws {
    try docs.putAll([
      ["_id": "n", "k": nil], ["_id": "a", "k": 1], ["_id": "b", "k": 2], ["_id": "c", "k": 3],
    ])
    let view = try docs.defineView(json: ["name": "k", "key": "k", "reduce": "_count"])
    #expect(try view.query(ViewQuery().key(nil).reducing(false)).rows.map(\.id) == ["n"])
    // In the initializer the null key is .null; `ViewQuery(key: nil)` does not compile.
    #expect(try view.query(ViewQuery(key: .null, reduce: false)).rows.map(\.id) == ["n"])
    #expect(try view.query(ViewQuery(reduce: false)).rows.count == 4)  // a key left out: all
    #expect(
      ViewQuery().startingAt(1).endingAt(3, inclusive: false).descending().skipping(1)
        .limited(to: 2).reducing(false).includingDocuments().matchingPrefix(level: 1)
        .staleness(.ok).countingOffset()
        == ViewQuery(
          startKey: 1, endKey: 3, inclusiveEnd: false, descending: true, skip: 1, limit: 2,
          prefixMatchLevel: 1, reduce: false, includeDocs: true, stale: .ok, includeOffset: true))
    #expect(ViewQuery().grouped(level: 1) == ViewQuery(groupLevel: 1))
    #expect(ViewQuery().grouped() == ViewQuery(group: true))
    #expect(ViewQuery().keys([2, 1]).reducing(false) == ViewQuery(keys: [2, 1], reduce: false))
    #expect(
      try view.query(ViewQuery().startingAt(1).endingAt(2).reducing(false)).rows.map(\.id)
        == ["a", "b"])
  }
}
