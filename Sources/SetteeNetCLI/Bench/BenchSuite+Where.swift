import Foundation
import SetteeCLI
import GRDB
import Settee
import SetteeCore

/// Seed 003's `where` face against hand-written SQL: the same `json_extract` scan, and
/// the same field table and indexes read directly (the trick Settee uses), so the ratios
/// show what parsing the `where` string, compiling it and parsing the documents cost.
/// Every row checks that both sides return the same documents.
extension BenchSuite {
  mutating func whereQueries() throws -> [BenchResult] {
    var results: [BenchResult] = []
    let objects = try people.map { line -> JSONObject in
      guard case .object(let object) = try JSONParser.parse(line) else { fatalError("bench data") }
      return object
    }
    let ids = objects.map { $0["_id"]!.stringValue! }

    // insertBatch: all of them in one transaction, against the hand-written insert of
    // the same objects (printed with the same JSON writer).
    let runs = quick ? 1 : 3
    let batch = try pairedWrites(
      repetitions: runs, prepare: { "where-batch-s\($0)" },
      settee: { name in try database.collection(name).insertBatch(objects) },
      prepareBaseline: { "where-batch-b\($0)" }
    ) { name in
      try handInsert(name, ids: ids) { JSONWriter.bytes(.object(objects[$0])) }
    }
    try check(
      "insertBatch documents", try database.collection("where-batch-s0").count(),
      try pool.read { db in
        try Int.fetchOne(
          db,
          sql:
            "SELECT count(*) FROM documents JOIN collections USING (cid) WHERE name = 'where-batch-b0'"
        )!
      })
    results.append(
      BenchResult(
        name: "where: insertBatch", n: count, batch, target: 1.5))

    let collection = database.collection("where-batch-s0")
    let cid = try collectionID("where-batch-s0")

    // An unindexed where: the json_extract scan Settee writes, by hand.
    let scanWhere = "[pet] = ? AND [age] > ?"
    let scanArguments: [JSON] = ["parrot", 85]
    let scanSQL =
      "SELECT id, rev, body FROM documents WHERE cid = ? AND deleted = 0 AND json_extract(body, '$.pet') = ? AND json_extract(body, '$.age') > ? ORDER BY id"
    results.append(
      try compareWhere(
        "where: unindexed (scan)", n: count, target: 1.5, collection,
        [(scanWhere, scanArguments, "", nil, [cid, "parrot", 85])], baseline: scanSQL))

    // The same where once the fields are queryable, against the same hand-written scan.
    try collection.addQueryableFields("[pet], [age]")
    results.append(
      try compareWhere(
        "where: same, on queryable fields", n: count, target: nil, collection,
        [(scanWhere, scanArguments, "", nil, [cid, "parrot", 85])], baseline: scanSQL))

    // Indexed: the field table and its index, read by hand (its rows are the live
    // documents: no condition on `documents`, as in Settee's SQL).
    try collection.addIndex("[name], [age]")
    try collection.addIndex("[docNumber]")
    let table = "\"wf_\(cid)\""
    func column(_ path: String) throws -> String {
      let number = try pool.read { db in
        try Int.fetchOne(
          db, sql: "SELECT col FROM where_fields WHERE cid = ? AND path = ?",
          arguments: [cid, path])!
      }
      return "f.\"c\(number)\""
    }
    let (name, age, docNumber) = (
      try column("$.\"name\""), try column("$.\"age\""), try column("$.\"docNumber\"")
    )
    let equality = queries(quick ? 20 : 200).map { value in
      (
        "[name] = ? AND [age] = ?", [JSON.string(value.name), .int(value.age)], "", Int?.none,
        [value.name, value.age] as StatementArguments
      )
    }
    results.append(
      try compareWhere(
        "where: indexed equality, 2 fields", n: equality.count, target: 1.5, collection, equality,
        baseline:
          "SELECT d.id, d.rev, d.body FROM \(table) f CROSS JOIN documents d ON d.rid = f.rid WHERE \(name) = ? AND \(age) = ? ORDER BY d.id"
      ))
    let range = queries(quick ? 20 : 200).map { value in
      (
        "[docNumber] > ?", [JSON.int(value.number)], "[docNumber]", Int?.some(10),
        [value.number] as StatementArguments
      )
    }
    results.append(
      try compareWhere(
        "where: indexed range, orderBy, limit 10", n: range.count, target: 1.5, collection, range,
        baseline:
          "SELECT d.id, d.rev, d.body FROM \(table) f CROSS JOIN documents d ON d.rid = f.rid WHERE \(docNumber) > ? ORDER BY \(docNumber), d.id LIMIT 10"
      ))
    return results
  }

  /// Runs each `where` query through Settee and the hand-written `sql`, after checking
  /// that both return the same documents in the same order.
  func compareWhere(
    _ title: String, n: Int, target: Double?, _ collection: DocumentCollection,
    _ cases: [(where: String, args: [JSON], orderBy: String, limit: Int?, sql: StatementArguments)],
    baseline sql: String
  ) throws -> BenchResult {
    func hand(_ arguments: StatementArguments) throws -> [Row] {
      try read { db in try Row.fetchAll(db.cachedStatement(sql: sql), arguments: arguments) }
    }
    for item in cases.prefix(20) {
      let mine = try collection.find(
        where: item.where, args: item.args, orderBy: item.orderBy, limit: item.limit
      ).map(\.id)
      try check(title + " ids", mine, try hand(item.sql).map { $0[0] as String })
    }
    let timed = try Measure.medians(repetitions: repetitions) {
      for item in cases {
        _ = try collection.find(
          where: item.where, args: item.args, orderBy: item.orderBy, limit: item.limit)
      }
    } _: {
      for item in cases { _ = BenchSuite.documents(try hand(item.sql)) }
    }
    return BenchResult(name: title, n: n, timed, target: target)
  }
}
