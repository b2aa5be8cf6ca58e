import Foundation
import Settee
import SetteeCore
import SetteeTestSupport
import Testing

/// The README's Swift example, kept compiling and correct.
@Suite("README example")
struct ReadmeExampleTests {
  @Test func theExampleWorks() throws {
    let directory = TemporaryDirectory()
    let db = try Database(path: directory.path("people.db"))
    let people = db.collection("people")

    let created = try people.put(["_id": "mike", "name": "mike", "age": 12, "pet": ["species": "cat"]])

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

    struct Person: Codable, Equatable { var name: String; var age: Int }
    try people.put(Person(name: "chen", age: 29), id: "chen")
    #expect(try people.get(Person.self, id: "chen") == Person(name: "chen", age: 29))

  }

  @Test func asyncCodeAwaitsTheSameCalls() async throws {
    let people = try Database(inMemoryWith: .init()).collection("people")
    try await people.put(["_id": "chen", "age": 29])
    let again = try await people.get("chen")
    #expect(again?["age"] == 29)
  }

  @Test func aFileThatIsNotADatabaseIsAStorageError() throws {
    let directory = TemporaryDirectory()
    let path = directory.path("garbage.db")
    try Data(repeating: 0x42, count: 8192).write(to: URL(fileURLWithPath: path))
    #expect {
      _ = try Database(path: path)
    } throws: { ($0 as? SetteeError)?.code == .storage }
    #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data(repeating: 0x42, count: 8192))
  }
}
