import Foundation
import GRDB
import Settee
import SetteeCore
import SetteeTestSupport
import Testing

/// Seed 003's configuration: indexes (unique too), queryable fields, defaults, aliases,
/// kept in the file, and what each changes for queries and writes.
@Suite("where strings: indexes, queryable fields, defaults, aliases")
struct WhereIndexTests {
  let directory = TemporaryDirectory()
  var path: String { directory.path("where.db") }

  func users() throws -> DocumentCollection { try Database(path: path).collection("users") }

  @Test func indexesServeWhereAndOrderBy() throws {
    let users = try users()
    try users.insertBatch(
      (0..<50).map { ["_id": .string("u\($0)"), "last": .string("L\($0 % 7)"), "age": .int($0)] })
    try users.addIndex("[last], [age] DESC")
    let plan = try users.explain(where: "[last] = ?", args: ["L3"], orderBy: "[last], [age] DESC")
    #expect(plan.steps.contains { $0.contains("INDEX wx_") }, "\(plan)")
    #expect(!plan.sql.contains("L3"))
    let found = try users.find(where: "[last] = ?", args: ["L3"], orderBy: "[age] DESC", limit: 3)
    #expect(found.map(\.id) == ["u45", "u38", "u31"])
    // Writes after the index keep it current, whichever face writes.
    try users.put(["_id": "m1", "last": "L3", "age": 99])
    try users.update(["_id": "u45", "last": "L4", "age": 45])
    try users.remove("u38")
    #expect(
      try users.find(where: "[last] = ?", args: ["L3"], orderBy: "[age] DESC", limit: 3).map(\.id)
        == ["m1", "u31", "u24"])
    #expect(try users.whereIndexes().map(\.description) == ["[last], [age] DESC"])
    try users.removeIndex("[last], [age]")
    #expect(try users.whereIndexes().isEmpty)
    #expect(!(try users.explain(where: "[last] = 'L3'").steps.contains { $0.contains("wx_") }))
  }

  @Test func uniqueIndexesRefuseDuplicatesAndWriteNothing() throws {
    let users = try users()
    try users.insert(["_id": "a", "email": "a@x.org"])
    try users.insert(["_id": "b"])  // no email: does not count
    try users.addUniqueIndex("[email]")
    let error = expectError(.uniqueViolation) {
      _ = try users.insert(["_id": "c", "email": "a@x.org"])
    }
    #expect(error?.message.contains("[email]") == true)
    #expect(error?.message.contains("\"a@x.org\"") == true)
    #expect(error?.message.contains("\"a\"") == true)
    #expect(try users.get("c") == nil)
    // A batch is all or nothing.
    expectError(.uniqueViolation) {
      _ = try users.insertBatch([
        ["_id": "d", "email": "d@x.org"], ["_id": "e", "email": "a@x.org"],
      ])
    }
    #expect(try users.get("d") == nil)
    #expect(try users.count(where: "") == 2)
    // Through the other faces too: Mango's put, and update.
    expectError(.uniqueViolation) { _ = try users.put(["_id": "f", "email": "a@x.org"]) }
    try users.insert(["_id": "g", "email": "g@x.org"])
    expectError(.uniqueViolation) { _ = try users.update(["_id": "g", "email": "a@x.org"]) }
    #expect(try users.get("g")?["email"] == "g@x.org")
    // Rewriting a document with its own value, nulls and missing fields are fine.
    try users.update(["_id": "a", "email": "a@x.org", "n": 1])
    try users.insertBatch([["_id": "h", "email": nil], ["_id": "i", "email": nil], ["_id": "j"]])
    // A removed document frees its value.
    try users.remove("a")
    try users.insert(["_id": "k", "email": "a@x.org"])
  }

  @Test func aUniqueIndexOverDuplicatesIsRefused() throws {
    let users = try users()
    try users.insertBatch([
      ["_id": "a", "last": "X", "first": "Y"], ["_id": "b", "last": "X", "first": "Z"],
      ["_id": "c", "last": "X", "first": "Y"],
    ])
    let error = expectError(.uniqueViolation) { try users.addUniqueIndex("[last], [first]") }
    #expect(error?.message.contains(#"["X","Y"]"#) == true, "\(String(describing: error))")
    #expect(error?.message.contains(#""a" and "c""#) == true)
    #expect(try users.whereIndexes().isEmpty)
    try users.addIndex("[last], [first]")
    try users.addUniqueIndex("[last], [first], [_xyz]")  // missing fields: NULLs never clash
  }

  @Test func defaultsApplyToMissingFieldsOnly() throws {
    let items = try users()
    try items.insertBatch([
      ["_id": "a", "flag": true], ["_id": "b", "flag": false], ["_id": "c"],
      ["_id": "d", "flag": nil], ["_id": "e", "meta": ["level": 3]], ["_id": "f", "meta": [:]],
    ])
    try items.setDefaults(["flag": false, "meta": ["level": 1]])
    #expect(try items.find(where: "[flag] = 0").map(\.id) == ["b", "c", "e", "f"])
    #expect(try items.find(where: "[flag] IS NULL").map(\.id) == ["d"])
    #expect(try items.find(where: "[meta.level] = 1").map(\.id) == ["a", "b", "c", "d", "f"])
    // The same answers from materialized fields (defaults stored in the column).
    try items.addQueryableFields("[flag], [meta.level]")
    #expect(try items.find(where: "[flag] = 0").map(\.id) == ["b", "c", "e", "f"])
    #expect(try items.find(where: "[meta.level] = 1").map(\.id) == ["a", "b", "c", "d", "f"])
    try items.insert(["_id": "g"])
    #expect(try items.count(where: "[flag] = 0 AND [meta.level] = 1") == 4)
    // Changing a default changes the stored columns.
    try items.setDefaults(["flag": true])
    #expect(try items.find(where: "[flag] = 1").map(\.id) == ["a", "c", "e", "f", "g"])
    #expect(try items.find(where: "[meta.level] IS NULL").map(\.id).count == 6)
  }

  @Test func aliasesWorkInWhereOrderByAndIndexes() throws {
    let users = try users()
    try users.setAliases(["firstName": "[user.first_name]", "shout": "upper([user.first_name])"])
    try users.insertBatch([
      ["_id": "1", "user": ["first_name": "bo"]], ["_id": "2", "user": ["first_name": "ann"]],
    ])
    #expect(try users.find(where: "firstName = ?", args: ["ann"]).map(\.id) == ["2"])
    #expect(try users.find(where: "shout = 'BO'").map(\.id) == ["1"])
    #expect(try users.find(orderBy: "firstName DESC").map(\.id) == ["1", "2"])
    try users.addIndex("firstName")
    #expect(try users.whereIndexes().map(\.description) == ["[user.first_name]"])
    let aliasPlan = try users.explain(where: "firstName = 'x'")
    #expect(aliasPlan.steps.contains { $0.contains("wx_") }, "\(aliasPlan)")
    expectError(.invalidQuery) { try users.addIndex("shout") }
    for (name, expression) in [
      ("and", "[a]"), ("1x", "[a]"), ("a-b", "[a]"), ("", "[a]"), ("x", "[a] = ?"),
      ("x", "firstName"), ("x", "[a]; DROP TABLE documents"),
    ] {
      expectError(.invalidQuery) { try users.setAliases([name: expression]) }
    }
    #expect(try users.aliases().count == 2)
    expectError(.invalidQuery) { _ = try users.find(where: "lastName = 1") }
  }

  @Test func settingsPersistAndSettingThemAgainChangesNothing() throws {
    do {
      let users = try users()
      try users.insert(["_id": "a", "email": "a@x.org", "country": "US"])
      try users.addUniqueIndex("[email]")
      try users.addQueryableFields("[country]")
      try users.setDefaults(["country": "NZ"])
      try users.setAliases(["mail": "[email]"])
    }
    let users = try users()
    #expect(try users.whereIndexes().map(\.isUnique) == [true])
    #expect(try users.queryableFields().map(\.description) == ["country"])
    #expect(try users.defaults() == ["country": "NZ"])
    #expect(try users.aliases() == ["mail": "[email]"])
    expectError(.uniqueViolation) { _ = try users.insert(["_id": "b", "email": "a@x.org"]) }
    // The same settings again write nothing: no new sequence, no rebuild, same file.
    let before = try Data(contentsOf: URL(fileURLWithPath: path))
    try users.addUniqueIndex("[email]")
    try users.addQueryableFields("[country]")
    try users.setDefaults(["country": "NZ"])
    try users.setAliases(["mail": "[email]"])
    #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
    #expect(try users.find(where: "mail = ? AND [country] = 'US'", args: ["a@x.org"]).count == 1)
  }

  @Test func indexDefinitionsAreCheckedAndNeverPasted() throws {
    let users = try users()
    try users.insert(["_id": "a", "x]y": 1, "q'": 2])
    for bad in [
      "", "[a] +", "[a], [a]", "[a] NULLS FIRST", "[a] = 1", "?", "[_id]", "[a\"b]",
      "[a]; DROP TABLE documents", "[a] -- x", "(SELECT 1)", "lower([a])",
    ] {
      #expect(throws: SetteeError.self, "\(bad)") { try users.addIndex(bad) }
    }
    // Names that need quoting are data: bound into where_fields, never written into SQL.
    try users.addUniqueIndex(#"[x\]y], [q']"#)
    #expect(try users.find(where: #"[x\]y] = 1 AND [q'] = 2"#).map(\.id) == ["a"])
    expectError(.uniqueViolation) { _ = try users.insert(["_id": "b", "x]y": 1, "q'": 2]) }
    #expect(try users.count(where: "") == 1)
  }

  /// Once `PRAGMA optimize` (after an import) has measured `documents` and not the field
  /// table, a condition on `documents` made SQLite build a Bloom filter over the whole
  /// collection for every query; queries over the field table put none there.
  @Test func measuredDocumentsDoNotTurnIndexedQueriesIntoScans() throws {
    do {
      let users = try users()
      try users.insertBatch((0..<300).map { ["_id": .string("u\($0)"), "n": .int(Int64($0))] })
      try users.addIndex("[n]")
      try users.addQueryableFields("[m]")
    }
    try DatabaseQueue(path: path).write { db in try db.execute(sql: "ANALYZE documents") }
    let users = try users()
    for (condition, order) in [("[n] > 10", "[n]"), ("[n] = 5", ""), ("[m] IS NULL", "")] {
      let plan = try users.explain(where: condition, orderBy: order, limit: 10)
      #expect(!plan.steps.contains { $0.contains("BLOOM") }, "\(condition): \(plan.steps)")
    }
    #expect(
      try users.find(where: "[n] > 10", orderBy: "[n]", limit: 2).map(\.id) == ["u11", "u12"])
  }
}
