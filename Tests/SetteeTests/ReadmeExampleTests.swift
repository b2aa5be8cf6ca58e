import Foundation
import Settee
import SetteeTestSupport
import Testing

/// What the README's Swift examples claim, checked (CI also builds and runs the README's code
/// verbatim as a user's package: Examples/ReadmeCheck).
@Suite("README example")
struct ReadmeExampleTests {
  @Test func theExampleWorks() throws {
    let directory = TemporaryDirectory()
    let db = try Database(path: directory.path("people.db"))
    let people = db.collection("people")

    let created = try people.upsert([
      "_id": "mike", "name": "mike", "age": 12, "pet": ["species": "cat"],
    ])

    var mike = try people.get("mike")!.json
    mike["age"] = 13
    let updated = try people.put(mike)
    #expect(updated.rev.generation == 2)

    var sawConflict = false
    do {
      try people.put(["_id": "mike", "_rev": .string(created.rev.description), "age": 99])
    } catch SetteeError.Code.conflict {
      sawConflict = true
    }
    #expect(sawConflict)

    try people.putAll([["name": "fred", "age": 23], ["name": "amara", "age": 41]])

    try people.delete("mike", rev: updated.rev)
    #expect(try people.revisions(of: "mike").map(\.rev.generation) == [1, 2, 3])

    #expect(try people.changes(since: 0).count == 3)

    struct Person: Codable, Equatable {
      var name: String
      var age: Int
    }
    try people.upsert(Person(name: "chen", age: 29), id: "chen")
    #expect(try people.get(Person.self, id: "chen") == Person(name: "chen", age: 29))

  }

  @Test func asyncCodeAwaitsTheSameCalls() async throws {
    let people = try Database(inMemoryWith: .init()).collection("people")
    try await people.put(["_id": "chen", "age": 29])
    let again = try await people.get("chen")
    #expect(again?["age"] == 29)
  }
}

extension ReadmeExampleTests {
  @Test func theQueryExampleWorks() throws {
    let people = try Database(inMemoryWith: .init()).collection("people")
    try people.putAll([
      ["name": "mike", "age": 12, "pet": ["species": "cat"]],
      ["name": "mike", "age": 34, "pet": ["species": "dog"]],
      ["name": "fred", "age": 23, "pet": ["species": "cat"]],
    ])
    try people.ensureIndexed(["name", "age"], name: "basic")
    let query = try FindQuery(
      json: JSONParser.parse(
        """
        {"selector": {"age": {"$gt": 12}, "pet.species": {"$in": ["cat", "dog"]}},
         "sort": [{"age": "desc"}], "fields": ["name", "age"], "limit": 10}
        """))
    #expect(try people.find(query).map { $0["name"] } == ["mike", "fred"])
    #expect(try people.count(query) == 2)
    #expect(!(try people.explain(query).reason.isEmpty))
    let cats = try people.find(
      ["pet.species": "cat"], skip: 0, limit: 0, fields: ["name"], sort: ["name"])
    #expect(cats.map { $0["name"] } == ["fred", "mike"])
  }
}

extension ReadmeExampleTests {
  @Test func queriesHaveAsyncForms() async throws {
    let people = try Database(inMemoryWith: .init()).collection("people")
    try await people.putAll([["name": "mike", "age": 12], ["name": "fred", "age": 23]])
    let query = FindQuery(selector: try SelectorParser.parse(#"{"age": {"$gt": 20}}"#))
    #expect(try await people.find(query).map(\.id).count == 1)
    #expect(try await people.count(query) == 1)
    struct Person: Decodable, Sendable { var name: String }
    #expect(try await people.find(Person.self, query).map(\.name) == ["fred"])
  }
}

extension ReadmeExampleTests {
  @Test func theSearchExampleWorks() throws {
    let db = try Database(inMemoryWith: .init())
    let people = db.collection("people")
    try people.putAll(SampleData.seedPeople)
    if db.isTextSearchEnabled {
      try people.ensureIndexed(
        ["name", "comment"], name: "comments", type: .text, settings: ["tokenize": "porter"])
    }
    let hits = try people.find(
      try FindQuery(
        json: JSONParser.parse(
          """
          {"selector": {"$text": {"$search": "doctor books"}, "age": {"$gt": 20}},
           "sort": [{"$relevance": "desc"}], "fields": ["name"]}
          """)))
    #expect(hits.map(\.id) == ["mike34"])
  }
}
