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
