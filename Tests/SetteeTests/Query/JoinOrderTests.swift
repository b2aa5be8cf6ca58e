import GRDB
import SetteeCore
import SetteeTestSupport
import Testing

@testable import Settee

/// SQLite's own planner must not undo Settee's: reading an index in order and looking up
/// each document by rowid is what makes a sorted `limit 10` cost the same at any size.
@Suite("Join order of index reads")
struct JoinOrderTests {
  let directory = TemporaryDirectory()

  @Test func sortedReadsStartFromTheIndexWhenSQLiteMeasuredTheDocuments() throws {
    let path = directory.path("order.db")
    let database = try Settee.Database(path: path)
    let people = database.collection("people")
    // Written with putAll, so no ANALYZE has run and SQLite has no statistics table yet.
    try people.putAll((0..<12_000).map { ["n": .int(Int64($0)), "name": .string("p\($0 % 50)")] })
    let queue = try DatabaseQueue(path: path)
    try people.ensureIndexed(["n"], name: "n")
    // As PRAGMA optimize does when it finds `documents` worth measuring (after imports, and
    // whenever an application runs it): before one index is made, and after the other.
    try queue.write { db in try db.execute(sql: "ANALYZE documents") }
    try people.ensureIndexed(["name", "n"], name: "name+n")

    let queries = [
      FindQuery(selector: .all, sort: [.init("n", descending: true)], limit: 10),
      FindQuery(selector: .condition("n", .greaterThan(100)), sort: [.init("n")], limit: 10),
      FindQuery(
        selector: .condition("name", .equal("p7")), sort: [.init("name"), .init("n")], limit: 5),
    ]
    for query in queries {
      let plan = try people.explain(query)
      #expect(plan.sortedByIndex)
      let steps = try queue.read { db in
        // The plan does not depend on the values: NULLs stand for them.
        let nulls = StatementArguments(plan.arguments.map { _ in DatabaseValue.null })
        return try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + plan.sql, arguments: nulls).map {
          $0["detail"] as String
        }
      }
      #expect(
        steps.first?.hasPrefix("SCAN x") == true || steps.first?.hasPrefix("SEARCH x") == true,
        "\(steps)")
      // A Bloom filter on `documents` means a scan of every document before the first row.
      #expect(
        !steps.contains {
          $0.contains("AUTOMATIC") || $0.contains("TEMP B-TREE") || $0.contains("BLOOM")
        }, "\(steps)")
    }
  }

  /// A query that takes every result has no LIMIT: with one, SQLite sorts a small result
  /// in a temporary B-tree (OpenEphemeral, made and zeroed for each run) instead of its
  /// sorter. With a limit or a skip, the clause is there.
  @Test func queriesWithoutLimitSortWithSQLitesSorter() throws {
    let path = directory.path("sorter.db")
    let database = try Settee.Database(path: path)
    let people = database.collection("people")
    try people.putAll((0..<200).map { ["n": .int(Int64($0 % 20)), "name": .string("p\($0)")] })
    try people.ensureIndexed(["n"], name: "n")
    let queue = try DatabaseQueue(path: path)
    // Ten documents have n = 3.
    for (query, limited, count) in [
      (FindQuery(selector: .condition("n", .equal(3))), false, 10),
      (FindQuery(selector: .condition("n", .equal(3)), limit: 5), true, 5),
      (FindQuery(selector: .condition("n", .equal(3)), skip: 2), true, 8),
    ] {
      let plan = try people.explain(query)
      #expect(plan.sql.contains(" LIMIT ") == limited, "\(plan.sql)")
      let opcodes = try queue.read { db in
        let nulls = StatementArguments(plan.arguments.map { _ in DatabaseValue.null })
        return try Row.fetchAll(db, sql: "EXPLAIN " + plan.sql, arguments: nulls).map {
          $0["opcode"] as String
        }
      }
      if !limited { #expect(!opcodes.contains("OpenEphemeral"), "\(opcodes)") }
      #expect(try people.find(query).count == count)
    }
  }
}

/// Statistics gathered while one collection held every document make SQLite expect that
/// many rows for any collection; counting a small collection must still read its index
/// range, not the whole table.
@Suite("Plans under statistics of one collection")
struct StaleStatisticsTests {
  let directory = TemporaryDirectory()

  /// A file whose statistics were gathered when collection "big" held every document,
  /// with a collection "small" of five written afterwards.
  func staleFile(_ name: String) throws -> (small: DocumentCollection, queue: DatabaseQueue) {
    let path = directory.path(name)
    let database = try Settee.Database(path: path)
    try database.collection("big").putAll((0..<2_000).map { ["n": .int(Int64($0))] })
    let queue = try DatabaseQueue(path: path)
    try queue.write { db in try db.execute(sql: "ANALYZE documents") }
    let small = database.collection("small")
    try small.putAll((0..<5).map { ["n": .int(Int64($0))] })
    return (small, queue)
  }

  /// SQLite's plan for `sql` on the file, with NULL for each of its `arguments`.
  func plan(_ queue: DatabaseQueue, _ sql: String, arguments: Int) throws -> [String] {
    try queue.read { db in
      SQLFunctions.register(in: db)
      let nulls = StatementArguments((0..<arguments).map { _ in DatabaseValue.null })
      return try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + sql, arguments: nulls).map {
        $0["detail"] as String
      }
    }
  }

  @Test func countingASmallCollectionReadsItsIndexRange() throws {
    let (small, queue) = try staleFile("stale-count.db")
    // The hazard: the same count without the index named scans every document.
    let unnamed = "SELECT count(*) FROM documents WHERE cid = ? AND deleted = 0"
    #expect(try plan(queue, unnamed, arguments: 1) == ["SCAN documents"])
    let counted = SQLFragment("SELECT count(*) FROM ") + .liveDocuments(cid: 0)
    let steps = try plan(queue, counted.text, arguments: 1)
    #expect(steps.count == 1 && steps[0].hasPrefix("SEARCH d USING INDEX documents_by_id"), "\(steps)")
    #expect(try small.count() == 5)
    #expect(try small.allDocuments().totalRows == 5)
  }

  /// Unindexed finds, sorted by a field or by id, read the collection's range of the id
  /// index.
  @Test(arguments: [false, true])
  func unindexedFindsOfASmallCollectionReadItsIndexRange(sorted: Bool) throws {
    let (small, queue) = try staleFile("stale-find-\(sorted).db")
    let query = FindQuery(
      selector: .condition("n", .greaterThan(1)), sort: sorted ? [.init("n")] : [])
    let plan = try small.explain(query)
    let steps = try self.plan(queue, plan.sql, arguments: plan.arguments.count)
    #expect(!steps.contains("SCAN d"), "\(steps)")
    #expect(try small.find(query).count == 3)
  }
}
