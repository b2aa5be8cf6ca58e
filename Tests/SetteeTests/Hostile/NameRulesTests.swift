import Settee
import SetteeCore
import SetteeTestSupport
import Testing

/// Names are stored and compared whole, or refused: U+0000 is refused in every kind of
/// name (SQLite would cut it there), and names compare byte for byte.
@Suite("Names")
struct NameRulesTests {
  let db: Database
  let people: DocumentCollection

  init() throws {
    db = try Database(inMemoryWith: .init())
    people = db.collection("people")
  }

  @Test func aNULInAnIDNeverReachesAnotherDocument() throws {
    let d1 = try people.put(["_id": "d1", "v": 1])
    expectError(.invalidID) {
      try people.put(["_id": "d1\u{0}x", "_rev": .string(d1.rev.description), "hacked": true])
    }
    expectError(.invalidID) { try people.put(["_id": "\u{0}x"]) }
    #expect(try people.get("d1")?["hacked"] == nil)
    #expect(try people.get("d1\u{0}x") == nil)
    expectError(.invalidID) { try people.delete("d1\u{0}x", rev: d1.rev) }
    #expect(try people.get("d1") != nil)
    #expect(try people.count() == 1)
  }

  @Test(arguments: [
    ["a\u{0}b": 1] as JSONObject,
    ["a": ["b\u{0}": 1]],
    ["a": [["c": ["\u{0}": true]]]],
  ])
  func fieldNamesWithNULAreRefusedAtAnyDepth(_ body: JSONObject) throws {
    expectError(.invalidDocument) { try people.put(body) }
    #expect(try people.count() == 0)
  }

  @Test func valuesMayHoldNUL() throws {
    try people.put(["_id": "v", "text": "y\u{0}z"])
    #expect(try people.get("v")?["text"] == "y\u{0}z")
  }

  @Test func indexNamesWithNULOrALeadingUnderscoreAreRefused() throws {
    for name in ["\u{0}", "a\u{0}b", "_all_docs", "_x"] {
      expectError(.invalidIndex) { try people.ensureIndexed(["v"], name: name) }
    }
    try people.put(["_id": "a", "v": 1])
    #expect(try people.indexes().isEmpty)
    // The collection keeps working.
    #expect(try people.find(["v": 1]).count == 1)
  }

  @Test func collectionNamesWithNULAreRefused() throws {
    try db.collection("a").put(["_id": "x"])
    let evil = db.collection("a\u{0}b")
    expectError(.invalidArgument) { try evil.put(["_id": "y"]) }
    expectError(.invalidArgument) { _ = try evil.get("x") }
    expectError(.invalidArgument) { _ = try evil.count() }
    #expect(try db.collection("a").count() == 1)
  }

  @Test func selectorSortAndProjectionPathsWithNULAreRefused() throws {
    for text in [
      #"{"selector": {"a\u0000": 1}}"#, #"{"selector": {"a": {"b\u0000": 1}}}"#,
      #"{"selector": {}, "sort": ["a\u0000"]}"#, #"{"selector": {}, "fields": ["\u0000"]}"#,
    ] {
      expectError(.invalidQuery) { _ = try FindQuery(json: JSONParser.parse(text)) }
    }
  }

  /// Swift's `String` equality treats two spellings of "é" as one; SQLite does not. Names
  /// must be compared as SQLite stores them, or a cache hands out the wrong collection.
  @Test func namesCompareByteForByte() throws {
    let composed = "caf\u{E9}"
    let decomposed = "cafe\u{301}"
    try db.collection(composed).put(["_id": "c"])
    #expect(try db.collection(decomposed).count() == 0)
    try db.collection(decomposed).put(["_id": "d"])
    #expect(try db.collection(composed).get("d") == nil)
    #expect(try db.collectionNames().count == 2)

    try people.ensureIndexed(["a"], name: composed)
    try people.ensureIndexed(["b"], name: decomposed)
    #expect(try people.indexes().count == 2)
    try people.deleteIndex(named: decomposed)
    #expect(try people.indexes().map(\.name) == [composed])
  }

  /// CouchDB's spelling rules (issue 31): a 32-hex suffix is lowercased, so an uppercase
  /// spelling of the current revision names it; a generation with a leading zero is
  /// refused; any other suffix is kept as given.
  @Test func revisionsFollowCouchDBsSpelling() throws {
    let created = try people.put(["_id": "a"])
    let upper = created.rev.description.uppercased()
    #expect(try RevisionID(parsing: upper) == created.rev)
    expectError(.invalidRevision) { _ = try RevisionID(parsing: "01-abc") }
    let updated = try people.put(["_id": "a", "_rev": .string(upper), "n": 1])
    #expect(updated.rev.generation == 2)
    #expect(try people.get("a")?.rev == updated.rev)
    #expect(try RevisionID(parsing: "10-ABC").description == "10-ABC")
  }
}
