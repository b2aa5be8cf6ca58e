import Foundation
import Settee
import SetteeCore
import SetteeTestSupport
import Testing

@Suite("Values round-trip")
struct CodableAndValuesTests {
  let people: DocumentCollection

  init() throws { people = try Database(inMemoryWith: .init()).collection() }

  struct Person: Codable, Equatable {
    struct Pet: Codable, Equatable {
      var species: String
      var names: [String]
    }
    var name: String
    var age: Int
    var height: Double
    var pet: Pet?
    var nickname: String?
    var tags: Set<String>
  }

  @Test func codableValuesRoundTrip() throws {
    let mike = Person(
      name: "Mike “Ünïcødé” 🐈", age: 12, height: 1.52,
      pet: .init(species: "cat", names: ["Tom", "Tömmi"]), nickname: nil, tags: ["a", "b"])
    let written = try people.put(mike, id: "mike")
    #expect(try people.get(Person.self, id: "mike") == mike)

    // A type with _id and _rev members reads them back too.
    struct Stored: Codable {
      var _id: String
      var _rev: String
      var name: String
    }
    let stored = try #require(try people.get(Stored.self, id: "mike"))
    #expect(stored._id == "mike" && stored._rev == written.rev.description)

    // Updating through Codable needs the revision like any write.
    #expect(throws: SetteeError.self) { try people.put(mike, id: "mike") }
    try people.put(mike, id: "mike", rev: written.rev)
  }

  @Test func nonObjectValuesAreRejected() {
    #expect {
      try people.put([1, 2, 3], id: "list")
    } throws: { ($0 as? SetteeError)?.code == .invalidDocument }
  }

  @Test(arguments: [
    "mike", "Ünïcødé", "中文 id", "عربي", "🎉", "with space", "a/b", "x\"y", "tab\there",
    "_design/app",
  ])
  func unicodeIDsAndFields(_ id: String) throws {
    let field = "field " + id  // top-level names may not start with "_"
    let object: JSONObject = [
      "_id": .string(id), field: .string(id), "nested": .object([id: [.string(id)]]),
    ]
    try people.put(object)
    let document = try #require(try people.get(id))
    #expect(document.id == id)
    #expect(document[field] == .string(id))
    #expect(document["nested"]?[id]?[0] == .string(id))
  }

  @Test func numbersAtTheEdges() throws {
    let values: JSONObject = [
      "big": .int(9_007_199_254_740_993),  // 2^53 + 1: not representable as a Double
      "max": .int(.max), "min": .int(.min),
      "negativeZero": .double(-0.0), "huge": .double(1e308),
      "tiny": .double(.leastNonzeroMagnitude),
      "third": .double(1.0 / 3.0), "whole": .double(2.0),
    ]
    try people.put((["_id": "n"] as JSONObject).merging(values))
    let stored = try #require(try people.get("n"))
    #expect(stored.body == values)
    #expect(stored["negativeZero"]?.doubleValue?.sign == .minus)
    #expect(stored["whole"] == .double(2.0))
  }

  @Test func memberOrderIsKept() throws {
    let keys = ["zeta", "alpha", "mu", "beta", "_id"]
    var object = JSONObject()
    for (index, key) in keys.enumerated() {
      object[key] = key == "_id" ? "ordered" : .int(Int64(index))
    }
    try people.put(object)
    #expect(try people.get("ordered")?.body.keys == ["zeta", "alpha", "mu", "beta"])
  }

  @Test func asyncCallsWork() async throws {
    let created = try await people.put(["_id": "async", "n": 1])
    #expect(try await people.get("async")?["n"] == 1)
    try await people.delete("async", rev: created.rev)
    #expect(try await people.get("async") == nil)
    #expect(try await people.changes().map(\.id) == ["async"])
  }
}

extension JSONObject {
  func merging(_ other: JSONObject) -> JSONObject {
    var merged = self
    for member in other { merged[member.key] = member.value }
    return merged
  }
}
