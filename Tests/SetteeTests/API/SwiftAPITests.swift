import Foundation
import Settee
import SetteeCore
import SetteeTestSupport
import Testing

/// The Swift surface issue 11 asks for, as far as it is built: one import, typed JSON
/// accessors, upserts, revisions as text without traps, decoding errors as SetteeErrors.
@Suite("Swift API")
struct SwiftAPITests {
  let people: DocumentCollection

  init() throws {
    people = try Database(inMemoryWith: .init()).collection("people")
  }

  struct Person: Codable, Equatable {
    var _id: String
    var _rev: String?
    var name: String
    var age: Int
  }

  @Test func jsonHasTypedAccessorsAndPaths() throws {
    let json = try JSONParser.parse(
      #"{"age": 12, "big": 9007199254740993, "half": 2.5, "whole": 3.0, "pet": {"species": "cat"}, "tags": ["a", "b"], "a.b": 1}"#
    )
    #expect(json["age"]?.intValue == 12)
    #expect(json["big"]?.int64Value == 9_007_199_254_740_993)
    #expect(json["half"]?.intValue == nil && json["whole"]?.intValue == 3)
    #expect(json[path: "pet.species"]?.stringValue == "cat")
    #expect(json[path: "tags.1"] == "b")
    #expect(json[path: #"a\.b"#] == 1)
    #expect(json[path: "tags.5"] == nil && json[path: "pet.species.x"] == nil)
    #expect(json[path: ""] == nil)
    // Inserting never traps: a name already there moves, a position out of range clamps.
    var object: JSONObject = ["a": 1, "b": 2]
    object.insert(3, forKey: "b", at: 0)
    object.insert(4, forKey: "c", at: 99)
    object.insert(5, forKey: "d", at: -1)
    #expect(object.keys == ["d", "b", "a", "c"] && object["b"] == 3)
  }

  @Test func upsertsWithoutARevision() throws {
    let first = try people.upsert(["_id": "mike", "age": 12])
    let second = try people.upsert(["_id": "mike", "age": 13])
    #expect(first.rev.generation == 1 && second.rev.generation == 2)
    #expect(try people.get("mike")?["age"] == 13)
    #expect(try people.revisions(of: "mike").map(\.parent) == [nil, first.rev])
    // A stale _rev is ignored by an upsert, and a tombstone is replaced.
    try people.upsert(["_id": "mike", "_rev": .string(first.rev.description), "age": 14])
    try people.delete("mike", rev: try #require(try people.get("mike")?.rev))
    try people.upsert(Person(_id: "mike", name: "mike", age: 15))
    #expect(try people.get(Person.self, id: "mike")?.age == 15)
  }

  @Test func revisionsAsTextAreCheckedNotTrapped() throws {
    let created = try people.put(["_id": "a"])
    expectError(.invalidRevision) { try people.delete("a", rev: "banana") }
    expectError(.conflict) { try people.delete("a", rev: "1-abc") }
    try people.delete("a", rev: created.rev.description)
    #expect(try people.get("a") == nil)
  }

  @Test func codableValuesAreDeletedByTheirOwnIdAndRevision() throws {
    try people.put(Person(_id: "chen", name: "chen", age: 29))
    let chen = try #require(try people.get(Person.self, id: "chen"))
    #expect(chen._rev?.hasPrefix("1-") == true)
    try people.delete(chen)
    #expect(try people.get("chen") == nil)
    struct Anonymous: Codable { var name: String }
    expectError(.invalidDocument) { try people.delete(Anonymous(name: "x")) }
  }

  @Test func decodingErrorsAreSetteeErrorsNamingTheDocumentAndPath() throws {
    try people.put(["_id": "odd", "name": "odd", "age": "twelve"])
    try people.put(["_id": "short", "name": "short"])
    let mismatch = expectError(.invalidDocument) { _ = try people.get(Person.self, id: "odd") }
    #expect(mismatch?.documentID == "odd" && mismatch?.message.contains(#""age""#) == true)
    let missing = expectError(.invalidDocument) { _ = try people.get(Person.self, id: "short") }
    #expect(missing?.message.contains("missing") == true)
    expectError(.invalidDocument) { _ = try people.find(Person.self, FindQuery()) }
  }

  @Test func theMatcherAnswersTextWithAnErrorNotATrap() throws {
    let selector = try SelectorParser.parse(["$text": ["$search": "x"]])
    expectError(.invalidQuery) { _ = try Matcher.matches(selector, [:]) }
  }

  @Test func queriesWithoutJSONStrings() throws {
    try people.putAll([
      ["_id": "mike", "name": "mike", "age": 12, "pet": ["species": "cat"]],
      ["_id": "fred", "name": "fred", "age": 23, "pet": ["species": "dog"]],
      ["_id": "amara", "name": "amara", "age": 41],
    ])
    let withPets = Field("age") > 10 && Field("pet.species").in(["cat", "dog"])
    #expect(
      try people.find(matching: withPets, sort: [.descending("age")]).map(\.id) == ["fred", "mike"])
    #expect(
      try people.find(matching: withPets, fields: ["name"]).map { $0.body } == [
        ["name": "fred"], ["name": "mike"],
      ])
    #expect(try people.count(matching: !withPets) == 1)
    #expect(try people.findOne(matching: Field("name").beginsWith("am"))?.id == "amara")
    struct Named: Codable, Equatable {
      var name: String
      var age: Int
    }
    #expect(
      try people.find(Named.self, matching: Field("age") < 20) == [Named(name: "mike", age: 12)])
    expectError(.invalidQuery) { _ = try people.find(matching: Field("a..b") == 1) }
  }

  @Test func queriesWithoutJSONStringsAwait() async throws {
    try await people.putAll([["_id": "a", "n": 1], ["_id": "b", "n": 2]])
    #expect(try await people.find(matching: Field("n") >= 2).map(\.id) == ["b"])
    #expect(try await people.count(matching: Field("n").exists) == 2)
    #expect(try await people.findOne(matching: Field("n") == 1)?.id == "a")
    try await people.upsert(["_id": "a", "n": 3])
    #expect(try await people.find(matching: .all, sort: [.ascending("n")]).map(\.id) == ["b", "a"])
  }

  /// Every operation has an async form that async code awaits (compiled under Swift 6's
  /// strict concurrency checking, which this target uses).
  @Test func everyOperationHasAnAsyncForm() async throws {
    struct Pet: Codable, Sendable, Equatable {
      var _id: String?
      var _rev: String?
      var kind: String
    }
    let db = people.database
    let created = try await people.put(["_id": "a", "n": 1])
    try await people.put(Document(id: "b", body: ["n": 2]))
    try await people.put(Pet(_id: nil, _rev: nil, kind: "cat"), id: "p")
    try await people.upsert(Pet(_id: nil, _rev: nil, kind: "dog"), id: "p")
    let pet = try #require(try await people.get(Pet.self, id: "p"))
    #expect(pet.kind == "dog")
    try await people.delete(pet)
    try await people.upsert(["_id": "a", "n": 3])
    try await people.delete("b", rev: try #require(try await people.get("b")?.rev).description)
    #expect(try await people.getRevision("b")?.isDeleted == true)
    #expect(try await people.revisions(of: "a").first?.rev == created.rev)
    #expect(try await people.count() == 1)
    #expect(try await people.lastSequence() == 7)
    try await people.ensureIndexed(["n"], name: "n")
    try await people.ensureIndexed(IndexDefinition(name: "m", fields: ["m"]))
    #expect(try await people.indexes().count == 2)
    #expect(try await people.listIndexes().keys.sorted() == ["m", "n"])
    try await people.deleteIndex(named: "m")
    let query = try FindQuery(matching: Field("n") > 0)
    #expect(try await people.find(query).count == 1)
    #expect(try await people.findOne(query)?.id == "a")
    #expect(try await people.count(query) == 1)
    #expect(try await people.explain(query).indexes == ["n"])
    #expect(try await people.find(["n": 3], fields: ["n"]).count == 1)
    let lines = Guarded(0)
    try await people.exportDocuments { chunk in
      lines.mutate { $0 += chunk.filter { $0 == 10 }.count }
    }
    #expect(lines.value == 1)
    #expect(try await db.collectionNames() == ["people"])
    #expect(try await db.check().isHealthy)
    #expect(try await people.changes(since: 0).count == 3)
    let streamed = Guarded([String]())
    let summary = try await people.find(query) { document in
      streamed.mutate { $0.append(document.id) }
    }
    #expect(streamed.value == ["a"])
    // The same summary the blocking form returns (its bookmark continues after "a").
    let blocking: (FindQuery, (Document) throws -> Void) throws -> FindSummary = people.find
    #expect(try summary == blocking(query) { _ in })
    let directory = TemporaryDirectory()
    let file = URL(fileURLWithPath: directory.path("in.ndjson"))
    try Data("{\"_id\": \"i1\"}\n{\"_id\": \"i2\"}\n".utf8).write(to: file)
    #expect(try await people.importDocuments(contentsOf: file).documents == 2)
    try await people.delete(try #require(try await people.get("i1")))
    #expect(try await people.count() == 2)
    try await people.setRevsLimit(50)
    #expect(try await people.revsLimit() == 50)
    try await people.put(["_id": "c", "_rev": "1-x"], newEdits: false)
    try await people.putAll([["_id": "c", "_rev": "1-y"]], newEdits: false)
    #expect(try await people.conflictedDocumentIDs() == ["c"])
    #expect(try await people.conflictCount() == 1)
    #expect(try await people.leaves(of: "c").count == 2)
    #expect(try await people.get("c", rev: RevisionID(parsing: "1-x")) != nil)
    try await people.resolveConflicts(of: "c") { leaves in .keep(leaves[0].rev!) }
    #expect(try await people.conflictCount() == 0)
    #expect(try await people.document("c", RevisionReadOptions(revs: true))?["_rev"] != nil)
    #expect(try await people.openRevisions("c").count == 2)
    try await people.putLocal(["_id": "_local/cp", "seq": 1])
    #expect(try await people.localDocument("cp")?.rev == "0-1")
    #expect(try await people.localDocuments().count == 1)
    try await people.deleteLocal("cp")
    let attached = try await people.putAttachment("a.txt", to: "att", rev: nil, data: [1, 2])
    #expect(try await people.attachments(of: "att").map(\.name) == ["a.txt"])
    #expect(try await people.attachment("a.txt", of: "att")?.data == [1, 2])
    let attachmentBytes = Guarded([UInt8]())
    try await people.readAttachment("a.txt", of: "att") { chunk in attachmentBytes.mutate { $0 += chunk } }
    #expect(attachmentBytes.value == [1, 2])
    let attachmentFile = URL(fileURLWithPath: directory.path("att.bin"))
    try Data([3]).write(to: attachmentFile)
    let replaced = try await people.putAttachment(
      "a.txt", to: "att", rev: attached.rev, contentsOf: attachmentFile)
    try await people.deleteAttachment("a.txt", from: "att", rev: replaced.rev)
    #expect(try await people.sequence(since: try await people.sequenceString(2)) == 2)
    #expect(try await people.purge(["att": [replaced.rev]]).isEmpty, "no longer a leaf")
    #expect(try await people.purgeSequence() == 0)
    let exported = Guarded(0)
    try await people.exportRevisionTrees { chunk in exported.mutate { $0 += chunk.count } }
    #expect(exported.value > 0)
    #expect(try await db.uuid().count == 32)
  }

  /// What the caller's own closure throws comes back as it was thrown, from the blocking
  /// and the async forms: Settee's conversion of errors is for its own.
  @Test func callersErrorsComeBackAsThrown() async throws {
    struct Enough: Error, Equatable { var after: Int }
    try await people.putAll((0..<5).map { ["_id": .string("p\($0)"), "n": .int(Int64($0))] })
    var seen = 0
    #expect(throws: Enough(after: 2)) {
      try Self.find(people) { _ in
        seen += 1
        if seen == 2 { throw Enough(after: 2) }
      }
    }
    #expect(seen == 2)
    #expect(throws: Enough(after: 1)) {
      try Self.export(people) { _ in throw Enough(after: 1) }
    }
    await #expect(throws: Enough(after: 3)) {
      try await people.find(FindQuery()) { _ in throw Enough(after: 3) }
    }
    await #expect(throws: Enough(after: 4)) {
      try await people.exportDocuments { _ in throw Enough(after: 4) }
    }
    // Settee's own errors are still SetteeErrors, from inside the same calls.
    expectError(.invalidRevision) {
      try Self.find(people) { document in try people.delete(Document(id: document.id)) }
    }
  }

  /// The blocking forms (in an async test, Swift picks the async ones).
  static func find(_ collection: DocumentCollection, _ body: (Document) throws -> Void) throws {
    try collection.find(FindQuery(), body)
  }

  static func export(_ collection: DocumentCollection, _ output: ([UInt8]) throws -> Void)
    throws
  {
    try collection.exportDocuments(output)
  }

  @Test func storedDocumentsAreDeletedByThemselves() throws {
    try people.put(["_id": "x"])
    try people.delete(try #require(try people.get("x")))
    #expect(try people.get("x") == nil)
    expectError(.invalidRevision) { try people.delete(Document(id: "y")) }
    let file = URL(fileURLWithPath: "/no/such/file.ndjson")
    expectError(.io) { try people.importDocuments(contentsOf: file) }
  }

  /// The DocC articles' examples (TextSearch, Queries), kept compiling and true.
  @Test func theDocumentationExamplesWork() throws {
    try people.putAll([
      ["_id": "a", "name": "ann", "age": 30, "comment": "a doctor"],
      ["_id": "b", "name": "bo", "age": 10, "comment": "wants to be a nurse"],
    ])
    try people.ensureIndexed(
      ["name", "comment"], name: "comments", type: .text, settings: ["tokenize": "porter"])
    let hits = try people.find(
      matching: .text("doctor OR nurse") && Field("age") > 20, sort: [.relevance])
    #expect(hits.map(\.id) == ["a"])
    let query = try FindQuery(
      matching: Field("age") > 12 && Field("pet.species").in(["cat", "dog"]),
      sort: [.descending("age")], fields: ["name", "age"], limit: 10)
    let same = try FindQuery(
      json: JSONParser.parse(
        #"""
        {"selector": {"age": {"$gt": 12}, "pet.species": {"$in": ["cat", "dog"]}},
         "sort": [{"age": "desc"}], "fields": ["name", "age"], "limit": 10}
        """#))
    #expect(query == same)
  }
}
