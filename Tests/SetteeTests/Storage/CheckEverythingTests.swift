import Foundation
import SetteeCore
import SetteeTestSupport
import Testing

@testable import Settee

/// `check` covers everything the file holds: view and value index rows recomputed from
/// the documents, their bookkeeping, sequence numbers, revision histories, `where`
/// settings and metadata; each damage is named.
@Suite("check covers the whole file")
struct CheckEverythingTests {
  let directory = TemporaryDirectory()

  func makeDatabase() throws -> Database {
    let db = try Database(path: directory.path("whole.db"))
    let sales = db.collection("sales")
    try sales.putAll(
      (0..<12).map {
        ["_id": .string("s\($0)"), "store": .string("st\($0 % 3)"), "n": .int(Int64($0))]
      })
    let declared = try sales.defineView(
      json: ["name": "t", "key": ["store", "n"], "value": "n", "reduce": "_sum"])
    let filtered = try sales.defineView(
      json: ["name": "f", "key": "n", "filter": ["n": ["$gt": 5]]])
    let swift = try sales.view("sw", version: "1") { document, emit in
      emit(document["store"] ?? .null, document["n"] ?? .null)
    }
    try sales.valueIndexes.define("byStore", field: "store")
    for view in [declared, filtered, swift] { _ = try view.query(ViewQuery(reduce: false)) }
    _ = try sales.valueIndexes.uniqueValues(of: "byStore")
    try sales.addIndex("[store]")
    try db.setMetadata(["v": 1], forKey: "config")
    // A change the views have not caught up with is not damage.
    let s1 = try #require(try sales.get("s1"))
    try sales.put(["_id": "s1", "_rev": .string(s1.rev!.description), "store": "moved", "n": 1])
    return db
  }

  @Test func aHealthyFileWithViewsChecksClean() throws {
    let report = try makeDatabase().check()
    #expect(report.isHealthy, "\(report.problems)")
  }

  @Test(arguments: [
    ("DELETE FROM vw_1 WHERE doc_id = 's3'", "view \"t\""),
    ("UPDATE vw_1 SET key = x'00' WHERE doc_id = 's4'", "view \"t\""),
    ("UPDATE vw_1 SET value = 999 WHERE doc_id = 's5'", "view \"t\""),
    ("UPDATE vw_1 SET key_json = '[\"x\"]' WHERE doc_id = 's5'", "view \"t\""),
    ("UPDATE vw_2 SET doc_id = 's2' WHERE doc_id = 's7'", "view \"f\""),
    ("UPDATE views SET last_seq = last_seq + 100 WHERE vid = 1", "view \"t\""),
    ("UPDATE views SET total_rows = 3 WHERE vid = 1", "view \"t\""),
    ("UPDATE views SET other_values = 5 WHERE vid = 1", "view \"t\""),
    (
      "UPDATE views SET definition = '{\"name\": \"t\", \"key\": \"n\"}' WHERE vid = 1",
      "view \"t\""
    ),
    ("UPDATE views SET definition = 'garbage' WHERE vid = 2", "view \"f\""),
    ("DROP TABLE vw_1", "view \"t\""),
    ("DELETE FROM vw_3 WHERE doc_id = 's6'", "view \"sw\""),
    ("DELETE FROM vw_4 WHERE doc_id = 's6'", "value index \"byStore\""),
    ("UPDATE collections SET last_seq = 2", "sequence number"),
    (
      "UPDATE revisions SET rev = 'banana' WHERE rev = (SELECT min(rev) FROM revisions)",
      "banana"
    ),
    ("UPDATE where_settings SET settings = 'garbage'", "where settings"),
    ("DROP TABLE wf_1", "where"),
    // Issue 44 (the engine probe): each of these checked healthy.
    ("UPDATE where_fields SET path = '$.n' WHERE col = 0", "where_fields"),
    ("UPDATE where_fields SET path = 'abs(1)' WHERE col = 0", "where_fields"),
    ("DELETE FROM where_fields", "where_fields"),
    ("DROP TRIGGER wf_1_update", "wf_1_update"),
    ("DROP TRIGGER wf_1_insert", "wf_1_insert"),
    (
      "DELETE FROM revisions WHERE rev LIKE '1-%' AND rid = (SELECT rid FROM documents WHERE id = 's1')",
      "missing revision 1-"
    ),
    ("UPDATE metadata SET value = 'garbage'", "metadata"),
  ])
  func everyDamageIsNamed(_ sql: String, _ named: String) throws {
    let db = try makeDatabase()
    try db.damage(sql)
    let report = try db.check()
    #expect(!report.isHealthy, "\(sql)")
    let text = report.problems.map { "\($0.index ?? "") \($0.message)" }.joined(separator: "\n")
    #expect(text.contains(named), "\(sql): \(text)")
  }

  @Test func aSequenceNumberSetBackIsCorruptionForWrites() throws {
    let db = try makeDatabase()
    try db.damage("UPDATE collections SET last_seq = 2")
    let error = expectError(.corruption) { try db.collection("sales").put(["_id": "new"]) }
    #expect(error?.documentID == "new")
  }
}
