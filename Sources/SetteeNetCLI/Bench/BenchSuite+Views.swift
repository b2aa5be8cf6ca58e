import Foundation
import SetteeCLI
import GRDB
import Settee
import SetteeCore
import SetteeJavaScript

/// Views (seed 002) and value indexes (seed 001) against the tables a careful programmer
/// would keep by hand: key, document id and value, a primary key on (key, document id)
/// and an index on the document id for incremental updates, with SQLite's BINARY order
/// (so the cost of CouchDB's collation shows).
extension BenchSuite {
  mutating func views(_ collection: DocumentCollection, _ cid: Int64) throws -> [BenchResult] {
    var results: [BenchResult] = []
    let runs = quick ? 1 : 3
    let byName = try collection.defineView(json: ["name": "bench_name", "key": "name"])
    func makeBaselineTable(_ db: GRDB.Database) throws {
      try db.execute(
        sql: """
          CREATE TABLE bench_view (key TEXT NOT NULL, doc_id TEXT NOT NULL, value,
            PRIMARY KEY (key, doc_id)) WITHOUT ROWID;
          INSERT INTO bench_view SELECT json_extract(body, '$.name'), id, NULL FROM documents
            INDEXED BY documents_by_id WHERE cid = ? AND deleted = 0;
          CREATE INDEX bench_view_by_doc ON bench_view (doc_id);
          """, arguments: [cid])
    }
    // Building: the first query of a new view maps every document.
    let build = try pairedWrites(
      repetitions: runs, prepare: { _ in () }, settee: { _ in try byName.update() },
      cleanUp: {
        try collection.deleteView(named: "bench_name")
        _ = try collection.defineView(json: ["name": "bench_name", "key": "name"])
      },
      prepareBaseline: { _ in () },
      baseline: { _ in
        try pool.write { db in try Self.largePageCache(db) { try makeBaselineTable(db) } }
      },
      cleanUpBaseline: { try pool.write { db in try db.execute(sql: "DROP TABLE bench_view") } })
    results.append(BenchResult(name: "view build, 1 string key", n: count, build, target: 2))
    results += try javaScriptViewBuild(collection)
    try byName.update()
    try pool.write { db in try makeBaselineTable(db) }
    let rows = try pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM bench_view")! }
    try check("view rows", try byName.query(ViewQuery(limit: 0)).totalRows, rows)

    // A key range, limit 10.
    let starts = (0..<(quick ? 20 : 200)).map { _ in data.pick(BenchData.names) }
    let first = try byName.query(ViewQuery(startKey: .string(starts[0]), limit: 10)).rows
      .compactMap(\.id)
    let firstBaseline = try pool.read { db in
      try String.fetchAll(
        db, sql: "SELECT doc_id FROM bench_view WHERE key >= ? ORDER BY key, doc_id LIMIT 10",
        arguments: [starts[0]])
    }
    try check("view range rows", first, firstBaseline)
    let range = try Measure.medians(repetitions: repetitions) {
      for start in starts { _ = try byName.query(ViewQuery(startKey: .string(start), limit: 10)) }
    } _: {
      for start in starts {
        _ = try read { db in
          // Each row read as a user reads it: key, document id, value.
          try Row.fetchAll(
            db.cachedStatement(
              sql:
                "SELECT key, doc_id, value FROM bench_view WHERE key >= ? ORDER BY key, doc_id LIMIT 10"
            ),
            arguments: [start]
          ).map { row in (row[0] as String, row[1] as String, row[2] as DatabaseValue) }.count
        }
      }
    }
    results.append(
      BenchResult(
        name: "view key range, limit 10", n: starts.count, range,
        target: 1.5))

    // Reductions over all rows and grouped by the first key element.
    let counted = try collection.defineView(
      json: ["name": "bench_count", "key": ["pet", "name"], "value": "age", "reduce": "_count"])
    let summed = try collection.defineView(
      json: ["name": "bench_sum", "key": ["pet", "name"], "value": "age", "reduce": "_sum"])
    try counted.update()
    try summed.update()
    try pool.write { db in
      try db.execute(
        sql: """
          CREATE TABLE bench_pets (k1 TEXT NOT NULL, k2 TEXT NOT NULL, doc_id TEXT NOT NULL,
            value, PRIMARY KEY (k1, k2, doc_id)) WITHOUT ROWID;
          INSERT INTO bench_pets SELECT json_extract(body, '$.pet'), json_extract(body, '$.name'),
            id, json_extract(body, '$.age') FROM documents WHERE cid = ? AND deleted = 0;
          """, arguments: [cid])
    }
    for (name, view, aggregate) in [
      ("_count", counted, "count(*)"), ("_sum", summed, "sum(value)"),
    ] {
      for grouped in [false, true] {
        let query = grouped ? ViewQuery(groupLevel: 1) : ViewQuery()
        let sql =
          grouped
          ? "SELECT k1, \(aggregate) FROM bench_pets GROUP BY k1 ORDER BY k1"
          : "SELECT \(aggregate) FROM bench_pets"
        let mine = try view.query(query).rows.map(\.value)
        let theirs = try pool.read { db in
          try Row.fetchAll(db, sql: sql).map { JSON.int($0[grouped ? 1 : 0]) }
        }
        try check("\(name) rows", mine, theirs)
        let timed = try Measure.medians(repetitions: repetitions) {
          _ = try view.query(query)
        } _: {
          _ = try read { db in try Row.fetchAll(db.cachedStatement(sql: sql)).count }
        }
        results.append(
          BenchResult(
            name: "view \(name)\(grouped ? ", group level 1" : ", all rows")", n: count,
            timed, target: 2))
      }
    }

    // Catching up after 1,000 changed documents.
    let changed = Array(Set(sampleIDs(quick ? 100 : 1_000)))
    var round: Int64 = 0
    // Both sides run after the same writes, copied into the database before the timed
    // catch-up.
    func change(_: Int) throws {
      round += 1
      try Self.setAge(round, of: changed, in: collection)
    }
    // By hand, as Settee does it: the documents changed since the last catch-up are found
    // by their sequence numbers (the table remembers the last one it saw), and each loses
    // its rows and is mapped again, with the page cache Settee gives its catch-ups.
    var baselineSeq = try pool.read { db in
      try Int64.fetchOne(db, sql: "SELECT max(seq) FROM documents WHERE cid = ?", arguments: [cid])!
    }
    var caughtUp: Set<String> = []
    let catchUp = try pairedWrites(
      repetitions: runs, prepare: change, settee: { _ in try byName.update() },
      prepareBaseline: change
    ) { _ in
      caughtUp = []
      try pool.write { db in
        try Self.largePageCache(db) {
          let ids = try Row.fetchCursor(
            db, sql: "SELECT id, seq FROM documents WHERE cid = ? AND seq > ? ORDER BY seq",
            arguments: [cid, baselineSeq])
          let delete = try db.makeStatement(sql: "DELETE FROM bench_view WHERE doc_id = ?")
          let insert = try db.makeStatement(
            sql:
              "INSERT INTO bench_view SELECT json_extract(body, '$.name'), id, NULL FROM documents WHERE cid = ? AND id = ? AND deleted = 0"
          )
          while let row = try ids.next() {
            let id: String = row[0]
            try delete.execute(arguments: [id])
            try insert.execute(arguments: [cid, id])
            caughtUp.insert(id)
            baselineSeq = row[1]
          }
        }
      }
    }
    try check("documents the baseline caught up with", caughtUp, Set(changed))
    try byName.update()
    try check("view rows after catching up", try byName.query(ViewQuery(limit: 0)).totalRows, rows)
    results.append(
      BenchResult(
        name: "view catch-up, \(changed.count) changed", n: changed.count, catchUp, target: 2))
    try pool.write { db in try db.execute(sql: "DROP TABLE bench_view; DROP TABLE bench_pets") }
    return results
  }

  /// Seed 001: an integer value index, queried by `min` and `max`.
  mutating func valueIndex(_ collection: DocumentCollection, _ cid: Int64) throws -> BenchResult {
    let indexes = collection.valueIndexes
    try indexes.define("bench_age", field: "age", type: .integer)
    try indexes.updateAll()
    try pool.write { db in
      try db.execute(
        sql: """
          CREATE TABLE bench_age (key INTEGER NOT NULL, doc_id TEXT NOT NULL,
            PRIMARY KEY (key, doc_id)) WITHOUT ROWID;
          INSERT INTO bench_age SELECT json_extract(body, '$.age'), id FROM documents
            WHERE cid = ? AND deleted = 0;
          """, arguments: [cid])
    }
    let sql = """
      SELECT d.id, d.rev, d.body FROM documents d WHERE d.cid = ? AND d.deleted = 0
        AND d.id IN (SELECT doc_id FROM bench_age WHERE key BETWEEN ? AND ?) ORDER BY d.id
      """
    let ranges = (0..<(quick ? 5 : 20)).map { _ in Int64(1 + data.next() % 89) }
    let mine = try indexes.documentIDs(matching: [
      "bench_age": .between(.int(ranges[0]), .int(ranges[0] + 1))
    ])
    let theirs = try pool.read { db in
      try Row.fetchAll(db, sql: sql, arguments: [cid, ranges[0], ranges[0] + 1]).map {
        $0[0] as String
      }
    }
    try check("value index rows", mine, theirs)
    let timed = try Measure.medians(repetitions: repetitions) {
      for low in ranges {
        _ = try indexes.documents(matching: ["bench_age": .between(.int(low), .int(low + 1))])
      }
    } _: {
      for low in ranges {
        _ = try read { db in
          BenchSuite.documents(
            try Row.fetchAll(db.cachedStatement(sql: sql), arguments: [cid, low, low + 1]))
        }
      }
    }
    try pool.write { db in try db.execute(sql: "DROP TABLE bench_age") }
    return BenchResult(
      name: "value index min+max (seed 001)", n: ranges.count, timed,
      target: 1.5)
  }

  /// Both sides must give the same answer, or the figures mean nothing.
  func check<T: Equatable>(_ what: String, _ mine: T, _ theirs: T) throws {
    guard mine == theirs else {
      throw SetteeError(.storage, "bench: \(what) differ: Settee \(mine), baseline \(theirs)")
    }
  }

  /// Writes a new revision of each document of `ids` with `age` set: the changes a view
  /// catch-up workload maps again.
  static func setAge(_ age: Int64, of ids: [String], in collection: DocumentCollection) throws {
    for id in ids {
      var document = try collection.get(id)!.json
      document["age"] = .int(age)
      try collection.put(document)
    }
  }

  /// The same view as a JavaScript map function in a design document (issue 47), built on
  /// JavaScriptCore, and as a Swift map function, each against the declarative view built
  /// in SQL: no rows without JavaScriptCore on this machine.
  mutating func javaScriptViewBuild(_ collection: DocumentCollection) throws -> [BenchResult] {
    guard DesignFunctions.isAvailable else {
      log("  (no JavaScriptCore here: the JavaScript view build is not measured)")
      return []
    }
    try collection.put([
      "_id": "_design/bench",
      "views": ["by_name": ["map": "function (doc) { if (doc.name) emit(doc.name, null); }"]],
    ])
    let swiftTimed = try pairedWrites(
      repetitions: quick ? 1 : 3, prepare: { _ in () },
      settee: { _ in
        try collection.view("bench_swift", version: "1") { doc, emit in
          if let name = doc["name"] { emit(name, .null) }
        }.update()
      },
      cleanUp: { try collection.deleteView(named: "bench_swift") },
      prepareBaseline: { _ in () },
      baseline: { _ in
        try collection.defineView(json: ["name": "bench_swift_d", "key": "name"]).update()
      },
      cleanUpBaseline: { try collection.deleteView(named: "bench_swift_d") })
    var round = 0
    let timed = try pairedWrites(
      repetitions: quick ? 1 : 3, prepare: { _ in () },
      settee: { _ in try collection.designView("bench/by_name").update() },
      cleanUp: { try collection.deleteView(named: "bench/by_name") },
      prepareBaseline: { _ in () },
      baseline: { _ in
        round += 1
        try collection.defineView(json: ["name": .string("bench_js\(round)"), "key": "name"]).update()
      },
      cleanUpBaseline: { try collection.deleteView(named: "bench_js\(round)") })
    let declared = try collection.defineView(json: ["name": "bench_js_check", "key": "name"])
    let javaScript = try collection.designView("bench/by_name")
    try check(
      "JavaScript view rows", try javaScript.query(ViewQuery(limit: 0)).totalRows,
      try declared.query(ViewQuery(limit: 0)).totalRows)
    // Catching up after 1,000 changed documents, each view after the same writes (the same
    // documents each round: each view finds each once).
    let changed = Array(Set(sampleIDs(quick ? 100 : 1_000)))
    var changes: Int64 = 0
    func change(_: Int) throws {
      changes += 1
      try Self.setAge(1_000 + changes, of: changed, in: collection)
    }
    let catchUp = try pairedWrites(
      repetitions: quick ? 1 : 3, prepare: change, settee: { _ in try javaScript.update() },
      prepareBaseline: change, baseline: { _ in try declared.update() })
    try check(
      "JavaScript view rows after catching up", try javaScript.query(ViewQuery(limit: 0)).totalRows,
      try declared.query(ViewQuery(limit: 0)).totalRows)
    try collection.deleteView(named: "bench_js_check")
    try collection.deleteView(named: "bench/by_name")
    // The baselines' tables take every live document of the collection as a person.
    if let design = try collection.get("_design/bench") { try collection.delete(design) }
    return [
      BenchResult(name: "JavaScript view build (vs declarative)", n: count, timed, target: 2),
      // The floor under it: the machinery every view mapped outside SQL goes through.
      BenchResult(name: "  Swift map function (vs declarative)", n: count, swiftTimed, target: nil),
      BenchResult(
        name: "JavaScript view catch-up, \(changed.count) changed (vs declarative)",
        n: changed.count, catchUp, target: 2),
    ]
  }
}
