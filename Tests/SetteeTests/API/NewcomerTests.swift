import Foundation
import Settee
import SetteeCore
import SetteeTestSupport
import Testing

/// What a newcomer met: messages that pointed at options that do not exist there, and a
/// document that printed as a struct dump.
@Suite("As a newcomer meets it")
struct NewcomerTests {
  let directory = TemporaryDirectory()

  @Test func aTakenIDInInsertSaysItExists() throws {
    let users = try Database(inMemoryWith: .init()).collection("users")
    try users.insert(["_id": "u1", "name": "ann"])
    for attempt in [
      { _ = try users.insert(["_id": "u1", "name": "bo"]) },
      { _ = try users.insertBatch([["_id": "u2"], ["_id": "u1"]]) },
    ] as [() throws -> Void] {
      let error = expectError(.conflict, attempt)
      #expect(error?.message.contains("exists already") == true, "\(String(describing: error))")
      #expect(error?.message.contains("_rev") == false)
      #expect(error?.documentID == "u1")
    }
    #expect(try users.count() == 1)
  }

  @Test func aValueIndexBehindPointsAtRegistering() throws {
    let path = directory.path("values.db")
    do {
      let songs = try Database(path: path).collection("songs")
      try songs.valueIndexes.define("cat", type: .string, version: "1") { _ in ["x"] }
      _ = try songs.valueIndexes.uniqueValues(of: "cat")
      try songs.put(["_id": "s1"])
    }
    let songs = try Database(path: path).collection("songs")  // another process: not registered
    let error = expectError(.viewNotRegistered) {
      _ = try songs.valueIndexes.uniqueValues(of: "cat")
    }
    #expect(error?.message.contains("stale") == false, "\(String(describing: error))")
    #expect(error?.message.contains("valueIndexes.define") == true)
  }

  @Test func aDocumentPrintsAsJSON() throws {
    let document = Document(id: "mike", rev: nil, body: ["age": 12])
    #expect("\(document)" == #"{"_id":"mike","age":12}"#)
  }
}

/// explain and paging tell the same story as the query that runs.
@Suite("explain and paging agree")
struct ExplainAndPagingTests {
  let people: DocumentCollection

  init() throws {
    people = try Database(inMemoryWith: .init()).collection("people")
    var documents: [JSONObject] = []
    for number in 0..<40 {
      var document: JSONObject = ["_id": .string("p\(number)"), "name": .string("n\(number % 7)")]
      if number % 5 != 0 { document["age"] = .int(Int64((number * 13) % 50)) }  // some missing
      documents.append(document)
    }
    try people.putAll(documents)
    try people.ensureIndexed(["name", "age"], name: "basic")
  }

  @Test func aLookupByIDNamesTheIDIndexAndDoesNotWarn() throws {
    let query = try FindQuery(json: JSONParser.parse(#"{"selector": {"_id": "p3"}}"#))
    let plan = try people.explain(query)
    #expect(plan.indexes == ["_all_docs"] && plan.json["scan"] == "index")
    #expect(try people.findPage(query).warning == nil)
  }

  @Test(arguments: [
    #"{"selector": {"age": {"$gt": 20}}, "sort": [{"age": "desc"}], "fields": ["name", "age"], "limit": 3}"#,
    #"{"selector": {"name": {"$gt": "n2"}}, "sort": [{"age": "asc"}], "fields": ["name", "age"], "limit": 4}"#,
    #"{"selector": {"name": {"$gte": "n0"}}, "sort": [{"name": "desc"}, {"age": "desc"}], "fields": ["name", "age", "_id"], "limit": 5}"#,
  ])
  func everyPageOfACoveredQueryIsCoveredAndTheyJoinUp(_ text: String) throws {
    var request = try JSONParser.parse(text).objectValue ?? [:]
    var unpaged = request
    unpaged["limit"] = 0
    let whole = try people.find(FindQuery(json: .object(unpaged)))
    var pages: [Document] = []
    for _ in 0..<40 {
      let query = try FindQuery(json: .object(request))
      let plan = try people.explain(query)
      #expect(plan.covering, "\(request["bookmark"] ?? "first page")")
      let page = try people.findPage(query)
      #expect(page.warning == nil)
      if page.documents.isEmpty { break }
      pages += page.documents
      request["bookmark"] = .string(page.bookmark)
    }
    #expect(pages.map(\.id) == whole.map(\.id))
  }
}

/// NTJsonStore's default store: a database without a path, in the platform's place for an
/// app's data.
@Suite("The default store")
struct DefaultStoreTests {
  let directory = TemporaryDirectory()

  @Test func aDatabaseByNameLivesInTheDataDirectory() throws {
    setenv("XDG_DATA_HOME", directory.path("data"), 1)
    defer { unsetenv("XDG_DATA_HOME") }
    let path = try Database.defaultPath(named: "notes.db")
    #expect(path == directory.path("data") + "/settee/notes.db")
    let db = try Database(named: "notes.db")
    try db.collection().put(["_id": "n1"])
    #expect(try Database(path: path).collection().get("n1") != nil)
    for bad in ["", "a/b", "..", "."] {
      expectError(.invalidArgument) { _ = try Database.defaultPath(named: bad) }
    }
  }
}
