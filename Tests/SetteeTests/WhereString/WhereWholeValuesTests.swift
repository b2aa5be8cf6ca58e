import Foundation
import SetteeCore
import SetteeTestSupport
import Testing

@testable import Settee

/// `where` queries and unique indexes compare strings holding U+0000 whole, and find
/// members whose names hold a backslash or a control character, whether a field is read
/// from the body, materialized as queryable, or kept in a unique index.
@Suite("where strings: whole strings and unusual names")
struct WhereWholeValuesTests {
  let directory = TemporaryDirectory()

  enum Reading: String, CaseIterable {
    case body, queryable, uniqueIndex
  }

  func collection(_ reading: Reading, fields: [String]) throws -> DocumentCollection {
    let collection = try Database(inMemoryWith: .init()).collection("c")
    for field in fields {
      switch reading {
      case .body: break
      case .queryable: try collection.addQueryableFields(FieldPath(components: [field]).bracketed)
      case .uniqueIndex: try collection.addUniqueIndex(FieldPath(components: [field]).bracketed)
      }
    }
    return collection
  }

  @Test(arguments: Reading.allCases)
  func stringsHoldingNULCompareWhole(_ reading: Reading) throws {
    let users = try collection(reading, fields: ["email"])
    try users.put(["_id": "attacker", "email": "victim@x.org\u{0}evil"])
    // The real owner is not refused as a duplicate of the attacker's address.
    try users.put(["_id": "victim", "email": "victim@x.org"])
    let ids = { (text: String, args: [JSON]) in
      try users.find(where: text, args: args).map(\.id)
    }
    #expect(try ids("[email] = ?", ["victim@x.org"]) == ["victim"])
    #expect(try ids("[email] = 'victim@x.org'", []) == ["victim"])
    #expect(try ids("[email] = ?", ["victim@x.org\u{0}evil"]) == ["attacker"])
    #expect(try ids("[email] > ?", ["victim@x.org"]) == ["attacker"])
    #expect(try ids("[email] IN (?, ?)", ["victim@x.org\u{0}", "x"]).isEmpty)
    #expect(try users.count(where: "[email] <> ?", args: ["victim@x.org"]) == 1)
    #expect(try ids("", []) == ["attacker", "victim"])
    #expect(try users.find(where: "", orderBy: "[email] DESC").map(\.id) == ["attacker", "victim"])
    if reading == .uniqueIndex {
      // The same whole value twice is still refused.
      expectError(.uniqueViolation) {
        try users.put(["_id": "again", "email": "victim@x.org\u{0}evil"])
      }
    }
    #expect(try users.database.check().problems.isEmpty)
  }

  @Test func aDefaultHoldingNULIsKeptWhole() throws {
    for queryable in [false, true] {
      let users = try Database(inMemoryWith: .init()).collection("c")
      if queryable { try users.addQueryableFields("[tag]") }
      try users.setDefaults(["tag": "a\u{0}b"])
      try users.putAll([["_id": "missing"], ["_id": "cut", "tag": "a"]])
      #expect(try users.find(where: "[tag] = ?", args: ["a\u{0}b"]).map(\.id) == ["missing"])
      #expect(try users.find(where: "[tag] = 'a'").map(\.id) == ["cut"])
    }
  }

  @Test(arguments: Reading.allCases)
  func namesWithBackslashesAndControlCharactersAreFound(_ reading: Reading) throws {
    let names = ["a\\b", "t\tb", "n\nl", "u\u{1}", "back\\", "é\u{7F}"]
    let docs = try collection(reading, fields: names)
    var body: JSONObject = ["_id": "d1"]
    for (number, name) in names.enumerated() { body[name] = .int(Int64(number)) }
    try docs.put(body)
    try docs.put(["_id": "d2"])
    for (number, name) in names.enumerated() {
      let field = FieldPath(components: [name]).bracketed
      #expect(
        try docs.find(where: "\(field) = ?", args: [.int(Int64(number))]).map(\.id) == ["d1"],
        "\(field)")
      if reading == .uniqueIndex {
        expectError(.uniqueViolation) {
          try docs.put(["_id": "d3", .init(name): .int(Int64(number))])
        }
      }
    }
    #expect(try docs.database.check().problems.isEmpty)
  }

  /// A file whose field tables were built before names were escaped in paths (their
  /// columns empty for such names) is rebuilt by the migration when opened for writing.
  @Test func oldFieldTablesAreRebuiltWhenOpened() throws {
    let path = directory.path("old.db")
    do {
      let docs = try Database(path: path).collection()
      try docs.addQueryableFields("[a\\\\b]")
      try docs.put(["_id": "d1", "a\\b": 5])
      // As an older version left it: the unescaped path, and nothing found by it.
      try docs.database.writer.writeWithoutTransaction { db in
        try db.execute(
          sql: """
            DELETE FROM grdb_migrations WHERE identifier = 'v10-where-whole-names-and-strings';
            UPDATE where_fields SET path = '$."a\\b"';
            UPDATE wf_1 SET c0 = NULL;
            """)
      }
      #expect(try docs.find(where: "[a\\\\b] = 5").isEmpty)
    }
    let docs = try Database(path: path).collection()
    #expect(try docs.find(where: "[a\\\\b] = 5").map(\.id) == ["d1"])
    #expect(try docs.database.check().isHealthy)
  }

  @Test func aDoubleQuoteInANameIsRefusedEverywhere() throws {
    let docs = try Database(inMemoryWith: .init()).collection("c")
    try docs.put(["_id": "d1", "a\"b": 1])
    expectError(.invalidQuery) { _ = try docs.find(where: "[a\"b] = 1") }
    expectError(.invalidQuery) { try docs.addUniqueIndex("[a\"b]") }
    expectError(.invalidQuery) { try docs.addQueryableFields("[a\"b]") }
  }
}
