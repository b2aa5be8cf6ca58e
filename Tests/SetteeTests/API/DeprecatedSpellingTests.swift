import Settee
import SetteeCore
import Testing

/// The Mango builder's calls took `where:` before they took `matching:` (issue 30); the old
/// spellings forward for one release, answering as the new ones do.
@Suite("Deprecated spellings forward")
struct DeprecatedSpellingTests {
  struct Person: Codable, Equatable, Sendable {
    var _id: String
    var age: Int
  }

  static func people() throws -> DocumentCollection {
    let people = try Database(inMemoryWith: .init()).collection("people")
    try people.putAll([["_id": "a", "age": 9], ["_id": "b", "age": 30], ["_id": "c", "age": 41]])
    return people
  }

  static let adults = Field("age") >= 18

  @available(*, deprecated, message: "calls the deprecated spellings on purpose")
  @Test func theBlockingForms() throws {
    let people = try Self.people()
    let expected = try people.find(matching: Self.adults, sort: [.ascending("age")])
    #expect(expected.map(\.id) == ["b", "c"])
    #expect(try people.find(where: Self.adults, sort: [.ascending("age")]) == expected)
    #expect(try people.find(Person.self, where: Self.adults).count == 2)
    #expect(try people.findOne(where: Self.adults, sort: [.descending("age")])?.id == "c")
    #expect(
      try people.findOne(Person.self, where: Self.adults, sort: [.ascending("age")])?._id == "b")
    #expect(try people.count(where: Self.adults) == 2)
    #expect(try FindQuery(where: Self.adults) == FindQuery(matching: Self.adults))
  }

  @available(*, deprecated, message: "calls the deprecated spellings on purpose")
  @Test func theAsyncForms() async throws {
    let people = try Self.people()
    let expected = try await people.find(matching: Self.adults, sort: [.ascending("age")])
    #expect(try await people.find(where: Self.adults, sort: [.ascending("age")]) == expected)
    #expect(try await people.find(Person.self, where: Self.adults).count == 2)
    #expect(try await people.findOne(where: Self.adults, sort: [.ascending("age")])?.id == "b")
    #expect(try await people.findOne(Person.self, where: Self.adults)?.age ?? 0 >= 18)
    #expect(try await people.count(where: Self.adults) == 2)
  }
}
