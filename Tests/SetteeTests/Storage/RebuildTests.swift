import Foundation
import Settee
import SetteeCore
import SetteeTestSupport
import Testing

/// `rebuildIndexes()` repairs what `check()` reports of secondary data, whatever its kind
/// (each kind rebuilds through the secondary-index registry), and leaves documents alone.
@Suite("Rebuilding secondary indexes")
struct RebuildTests {
  let directory = TemporaryDirectory()

  /// A collection with one secondary index of every kind: in a fresh file the JSON index
  /// is `ix_1`, the TEXT index `fts_2`, the view `vw_1`, the value index `vw_2` and the
  /// field table `wf_1`.
  func makeDatabase() throws -> (Database, DocumentCollection) {
    let db = try Database(path: directory.path("rebuild.db"), configuration: .init(fullSync: false))
    let items = db.collection("items")
    try items.putAll(
      (0..<30).map {
        [
          "_id": .string("d\($0)"), "n": .int(Int64($0 % 6)),
          "s": .string($0 % 5 == 0 ? "alpha beta" : "gamma"), "email": .string("u\($0)@x.org"),
        ]
      })
    try items.ensureIndexed(["n"], name: "n")
    try items.ensureIndexed(["s"], name: "s", type: .text)
    let view = try items.defineView(json: ["name": "byN", "key": "n"])
    _ = try view.query()
    try items.valueIndexes.define("byS", field: "s")
    _ = try items.valueIndexes.uniqueValues(of: "byS")
    try items.addUniqueIndex("[email]")
    try items.addQueryableFields("[n]")
    return (db, items)
  }

  @Test(arguments: [
    "DELETE FROM ix_1 WHERE id = 'd3'",
    "UPDATE ix_1 SET rev = '9-bad' WHERE id = 'd4'",
    "DELETE FROM fts_2 WHERE docid = (SELECT rid FROM documents WHERE id = 'd5')",
    "DELETE FROM wf_1 WHERE rid = (SELECT rid FROM documents WHERE id = 'd6')",
    "UPDATE wf_1 SET c0 = 'x' WHERE rid = (SELECT rid FROM documents WHERE id = 'd7')",
    "DELETE FROM vw_1 WHERE doc_id = 'd8'",
    "DELETE FROM vw_2 WHERE doc_id = 'd10'",
  ])
  func rebuildingRepairsWhatCheckReports(_ damage: String) throws {
    let (db, items) = try makeDatabase()
    let documents = try items.find(FindQuery())
    try db.damage(damage)
    #expect(try db.check().problemCount > 0, "\(damage) was not seen")
    try items.rebuildIndexes()
    let report = try db.check()
    #expect(report.isHealthy, "\(damage): \(report.problems)")
    #expect(try items.find(FindQuery()) == documents)
    // Every kind answers from its rebuilt data.
    #expect(try items.count(matching: Field("n") == 3) == 5)
    #expect(try items.find(matching: .text("alpha")).count == 6)
    #expect(try items.count(where: "[n] = 3 AND [email] LIKE 'u%'") == 5)
    #expect(try items.view(named: "byN").query(ViewQuery().key(2)).rows.count == 5)
    #expect(try items.valueIndexes.uniqueValues(of: "byS").count == 2)
    expectError(.uniqueViolation) { try items.insert(["_id": "dup", "email": "u1@x.org"]) }
  }

  /// A database's rebuild covers every collection; a read-only one refuses.
  @Test func everyCollectionAndReadOnlyFiles() async throws {
    let (db, _) = try makeDatabase()
    try await db.collection("other").put(["_id": "o"])
    try db.damage("DELETE FROM ix_1")
    try await db.rebuildIndexes()
    #expect(try await db.check().isHealthy)
    let readOnly = try Database(path: db.path!, configuration: .init(readOnly: true))
    await #expect(throws: SetteeError.self) {
      try await readOnly.collection("items").rebuildIndexes()
    }
  }

  /// `secondaryIndexes()` lists every kind through the registry, with how it is kept and
  /// how far a view is behind.
  @Test func secondaryIndexesListEveryKind() throws {
    let (_, items) = try makeDatabase()
    try items.put(["_id": "late", "n": 1])
    let listed = try items.secondaryIndexes()
    #expect(
      listed.map { "\($0.kind.rawValue) \($0.name) \($0.upkeep.rawValue) \($0.rows)" } == [
        "json n in_write 31", "text s in_write 31", "view byN on_read 30",
        "value_index byS on_read 30", "where_fields [n], [email] by_trigger 31",
      ])
    #expect(listed.map(\.changesBehind) == [nil, nil, 1, 1, nil])
    #expect(try items.database.collection("none").secondaryIndexes().isEmpty)
  }

  /// Dropping an index removes its statistics row; rows left by older versions go with the
  /// migration that opens the file for writing.
  @Test func statisticsRowsOfDroppedIndexesGo() throws {
    let path = directory.path("stat.db")
    func statTables(_ db: Database) throws -> [String] {
      try db.statisticsTables()
    }
    do {
      let db = try Database(path: path, configuration: .init(fullSync: false))
      let items = db.collection("items")
      try items.putAll((0..<10).map { ["_id": .string("d\($0)"), "n": .int(Int64($0))] })
      try items.ensureIndexed(["n"], name: "n")
      try items.ensureIndexed(["m"], name: "m")
      #expect(try statTables(db) == ["ix_1", "ix_2"])
      try items.deleteIndex(named: "m")
      #expect(try statTables(db) == ["ix_1"])
      // As an older version left a file: an orphan row, the migration not yet run.
      try db.damage(
        """
        INSERT INTO sqlite_stat1 (tbl, idx, stat) VALUES ('ix_7', 'ix_7', '10 1 1 1');
        DELETE FROM grdb_migrations WHERE identifier = 'v11-stat1-orphans';
        """)
      #expect(try statTables(db) == ["ix_1", "ix_7"])
    }
    #expect(try statTables(try Database(path: path)) == ["ix_1"])
  }
}
