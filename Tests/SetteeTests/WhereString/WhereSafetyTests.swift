import Foundation
import Settee
import SetteeCore
import SetteeTestSupport
import Testing

/// Anything outside the grammar is a typed error with its position; nothing reaches SQL.
@Suite("where strings: errors and injection attempts")
struct WhereSafetyTests {
  let people: DocumentCollection

  init() throws {
    people = try Database(inMemoryWith: .init()).collection("people")
    try people.putAll([
      ["_id": "a", "name": "ann", "age": 30, "address": ["country": "US"]],
      ["_id": "b", "name": "bo", "age": 12, "address": ["country": "FR"]],
    ])
  }

  @Test(arguments: [
    ("[age] > 1; DROP TABLE documents", "position 10"),
    ("[age] > 1 -- comment", "position 11"),
    ("[age] > 1 /* x */", "position 11"),
    ("[age] > 1 UNION SELECT id FROM documents", "position 11"),
    ("[age] IN (SELECT age FROM documents)", "position 11"),
    ("age > 1", "position 1"),
    ("\"age\" > 1", "position 1"),
    ("[age] > sqlite_version()", "position 9"),
    ("load_extension('x') = 1", "position 1"),
    ("[age] > ", "position 9"),
    ("[age", "position 1"),
    ("[age] = 'unclosed", "position 9"),
    ("[a..b] = 1", "position 1"),
    ("[age] > ?1", "position 9"),
    ("abs(1, 2) = 1", "position 1"),
    ("[age] BETWEEN 1", "position 16"),
    ("CASE END", "position 6"),
  ])
  func outsideTheGrammarIsAnErrorWithItsPosition(_ text: String, _ position: String) throws {
    let error = expectError(.invalidQuery) { _ = try people.find(where: text) }
    #expect(error?.message.contains(position) == true, "\(error?.message ?? "no error")")
    #expect(error?.message.contains(JSON.string(text).description) == true)
    #expect(try people.count(where: "") == 2)  // the collection is untouched
  }

  @Test func argumentsAndFieldNamesAreOnlyValues() throws {
    // Hostile text as arguments is a value compared like any other.
    for hostile: JSON in ["x' OR '1'='1", "1; DROP TABLE documents", "') OR 1=1 --", "\u{0}"] {
      #expect(try people.find(where: "[name] = ?", args: [hostile]).isEmpty)
    }
    // Field names are bound JSON paths: brackets, quotes and SQL inside find nothing.
    #expect(try people.find(where: "[na\\]me] = 'ann'").isEmpty)
    #expect(try people.find(where: "[x'); DROP TABLE documents; --] IS NULL").count == 2)
    expectError(.invalidQuery) { _ = try people.find(where: "[a\"b] = 1") }
    #expect(try people.count(where: "") == 2)
  }

  @Test func argumentCountsMustMatch() throws {
    expectError(.invalidQuery) { _ = try people.find(where: "[age] > ?") }
    expectError(.invalidQuery) { _ = try people.find(where: "[age] > ?", args: [1, 2]) }
    expectError(.invalidQuery) {
      _ = try people.find(where: "[age] > ?", args: [1], orderBy: "[age] * ?")
    }
    #expect(
      try people.find(where: "[age] > ?", args: [1, -1], orderBy: "[age] * ?", limit: 1).map(\.id)
        == ["a"])
  }

  @Test func theSeedsExample() throws {
    // As the seed writes it: optional configuration, then the query.
    try people.addIndex("[last_name], [first_name]")
    try people.addQueryableFields("[address.country]")
    let users = try people.find(
      where: "[address.country] = ?", args: ["US"], orderBy: "[last_name], [first_name]")
    #expect(users.map(\.id) == ["a"])
    #expect(try people.findOne(where: "[age] < ?", args: [20])?.id == "b")
    #expect(try people.count(where: "[name] LIKE ?", args: ["A%"]) == 1)  // ASCII case-insensitive
    #expect(
      try people.find(where: "", orderBy: "[age] DESC NULLS LAST", limit: 1).map(\.id) == ["a"])
    expectError(.invalidQuery) { _ = try people.find(where: "", orderBy: "2") }
  }

  /// Aliases, index definitions and queryable fields are parsed by the same grammar; a
  /// hostile one is a typed error, a hostile field name is data, and nothing changes.
  @Test func aliasesAndDefinitionsCarryNoSQL() throws {
    let hostile = [
      "[age]; DROP TABLE documents", "[age] -- x", "[age] /* x */", "[age] UNION SELECT 1",
      "(SELECT age FROM documents)", "sqlite_version()", "[age]) ; DELETE FROM documents; --",
      "[age] = ?", "age",
    ]
    for text in hostile {
      expectError(.invalidQuery) { try people.setAliases(["a": text]) }
      #expect(throws: SetteeError.self, "\(text)") { try people.addIndex(text) }
      #expect(throws: SetteeError.self, "\(text)") { try people.addUniqueIndex(text) }
      #expect(throws: SetteeError.self, "\(text)") { try people.addQueryableFields(text) }
    }
    for name in ["a; DROP", "a b", "a--", "\"a\"", "select(", "or"] {
      expectError(.invalidQuery) { try people.setAliases([name: "[age]"]) }
    }
    #expect(try people.aliases().isEmpty && people.whereIndexes().isEmpty)
    // Hostile field names in definitions are paths, bound into where_fields, never SQL.
    try people.addIndex("[x'); DROP TABLE documents; --], [name] DESC")
    try people.addQueryableFields("[; DELETE FROM documents]")
    expectError(.invalidQuery) { try people.addQueryableFields(#"[\"; DELETE FROM documents]"#) }
    try people.setAliases(["evil": "[a') OR 1=1 --]"])
    #expect(
      try people.find(where: "evil IS NULL AND [x'); DROP TABLE documents; --] IS NULL").count == 2)
    #expect(try people.count(where: "") == 2)
    #expect(try people.find(where: "[address.country] = 'US'").map(\.id) == ["a"])
  }
}
