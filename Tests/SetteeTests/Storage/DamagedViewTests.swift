import Foundation
import SetteeCore
import SetteeTestSupport
import Testing

@testable import Settee

/// A view's rows and bookkeeping damaged in the file are `corruption` errors, never a trap
/// of the host process (GRDB's subscripts trap on a value of the wrong type).
@Suite("Damaged view rows")
struct DamagedViewTests {
  let directory = TemporaryDirectory()

  func makeView() throws -> (Database, View) {
    let db = try Database(path: directory.path("views.db"))
    let sales = db.collection("sales")
    try sales.putAll(
      (0..<12).map {
        ["_id": .string("s\($0)"), "store": .string("st\($0 % 3)"), "n": .int(Int64($0))]
      })
    let view = try sales.defineView(
      json: ["name": "t", "key": ["store", "n"], "value": "n", "reduce": "_sum"])
    #expect(try view.query(ViewQuery(groupLevel: 1)).rows.count == 3)
    return (db, view)
  }

  @Test(arguments: [
    "UPDATE vw_1 SET key_json = 5",
    "UPDATE vw_1 SET key_json = x'ff00'",
    "UPDATE vw_1 SET doc_id = 7",
    "UPDATE views SET total_rows = 'many'",
    "UPDATE views SET collation = 3",
    "UPDATE views SET last_seq = x'00'",
  ])
  func damagedRowsAreCorruption(_ sql: String) throws {
    let (db, view) = try makeView()
    try db.damage(sql)
    let queries: [ViewQuery] = [
      ViewQuery(group: true), ViewQuery(groupLevel: 1), ViewQuery(reduce: false),
      ViewQuery(keys: [["st1", 4]], group: true), ViewQuery(),
    ]
    // Each query answers (SQLite converts some values silently) or fails with corruption.
    for query in queries {
      do { _ = try view.query(query) } catch let error as SetteeError {
        #expect(error.code == .corruption, "\(error)")
      }
    }
  }
}

/// Definitions and settings damaged in the file are `corruption`, naming what is damaged,
/// never the user's `bad_request`; a missing table of Settee's too.
@Suite("Damaged definitions and settings")
struct DamagedDefinitionTests {
  let directory = TemporaryDirectory()

  func makeDatabase() throws -> Database {
    let db = try Database(path: directory.path("definitions.db"))
    let people = db.collection("people")
    try people.putAll((0..<10).map { ["_id": .string("p\($0)"), "n": .int(Int64($0))] })
    try people.ensureIndexed(["n"], name: "byN")
    try people.addIndex("[n]")
    try people.setAliases(["num": "[n]"])
    _ = try people.defineView(json: ["name": "v", "key": "n"]).query()
    return db
  }

  static let deepAlias =
    String(repeating: "[n] + ", count: 20_000) + "[n]"

  @Test(arguments: [
    ("UPDATE where_settings SET settings = 'garbage'", "where"),
    ("UPDATE where_settings SET settings = '{\"aliases\": 3}'", "where"),
    (
      "UPDATE where_settings SET settings = json_set(settings, '$.aliases.num', '\(deepAlias)')",
      "where"
    ),
    ("DROP TABLE wf_1", "where"),
    ("UPDATE indexes SET fields = 'garbage'", "find"),
    ("UPDATE indexes SET fields = '[\"a..b\"]'", "find"),
    ("UPDATE indexes SET partial_filter = '{\"$nope\": 1}'", "find"),
    ("UPDATE views SET definition = 'garbage'", "view"),
    ("UPDATE views SET definition = '{\"name\": \"v\"}'", "view"),
    ("DROP TABLE vw_1", "view"),
    ("DROP TABLE ix_1", "find"),
  ])
  func damageIsCorruption(_ sql: String, _ face: String) throws {
    let db = try makeDatabase()
    let people = db.collection("people")
    try db.damage(sql)
    let error = expectError(.corruption) {
      switch face {
      case "where": _ = try people.find(where: "num > 2")
      case "find": _ = try people.find(["n": ["$gt": 2]])
      default:
        try people.put(["_id": "new", "n": 3])
        _ = try people.view(named: "v").query()
      }
    }
    #expect(error != nil, "\(sql)")
    // Settings still list, so that a damaged alias can be seen and removed.
    if sql.contains("aliases.num") {
      #expect(try people.aliases()["num"] == Self.deepAlias)
      try people.setAliases([:])
      #expect(try people.find(where: "[n] > 2").count == 7)
    }
  }
}
