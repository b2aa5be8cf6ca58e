import Foundation
import SetteeCLI
import GRDB
import Settee
import SetteeCore

// The query workloads: indexed equality, counts, ranges, $or, $in, scans, text, sorted reads.
extension BenchSuite {
  // MARK: - Queries

  mutating func queries(_ n: Int) -> [(name: String, age: Int64, pet: String, number: Int64)] {
    (0..<n).map { _ in
      (
        data.pick(BenchData.names), Int64(1 + data.next() % 90), data.pick(BenchData.pets),
        Int64(data.next() % UInt64(count))
      )
    }
  }

  /// Runs each query through Settee and, for the baseline, the hand-written `sql` with the
  /// matching arguments; the times cover all the queries.
  func compare(
    _ name: String, n: Int, target: Double?, _ collection: DocumentCollection,
    _ cases: [(query: FindQuery, arguments: StatementArguments)], baseline sql: String,
    repetitions: Int? = nil
  ) throws -> BenchResult {
    let runs = repetitions ?? self.repetitions
    // Both sides must return the same documents, or the ratio means nothing.
    for item in cases.prefix(20) {
      let mine = try collection.find(item.query).map(\.id)
      let theirs = try pool.read { db in
        try Row.fetchAll(db.cachedStatement(sql: sql), arguments: item.arguments).map {
          $0[0] as String
        }
      }
      try check(name + " ids", mine, theirs)
    }
    let timed = try Measure.medians(repetitions: runs) {
      for item in cases { _ = try collection.find(item.query) }
    } _: {
      for item in cases {
        _ = try read { db in
          BenchSuite.documents(
            try Row.fetchAll(db.cachedStatement(sql: sql), arguments: item.arguments))
        }
      }
    }
    return BenchResult(name: name, n: n, timed, target: target)
  }

  /// Equalities on the three fields of the `nap` index, each with the index keys a
  /// baseline binds for it.
  mutating func equalityCases() throws -> [(query: FindQuery, arguments: StatementArguments)] {
    try queries(quick ? 20 : 200).map { value in
      (
        FindQuery(
          selector: try SelectorParser.parse([
            "name": .string(value.name), "age": .int(value.age), "pet": .string(value.pet),
          ])),
        StatementArguments([
          BenchSuite.key(.string(value.name)), BenchSuite.key(.int(value.age)),
          BenchSuite.key(.string(value.pet)),
        ])
      )
    }
  }

  mutating func indexedEquality(_ collection: DocumentCollection, _ cid: Int64) throws
    -> BenchResult
  {
    let nap = try table("nap", cid)
    let cases = try equalityCases()
    let returned = try cases.reduce(0) { $0 + (try collection.find($1.0).count) }
    log("    (\(returned / max(cases.count, 1)) documents per query)")
    return try compare(
      "indexed equality, 3 fields", n: cases.count, target: 1.5, collection, cases,
      baseline:
        "SELECT d.id, d.rev, d.body FROM \(nap) x CROSS JOIN documents d ON d.rid = x.rid WHERE x.k0 = ? AND x.k1 = ? AND x.k2 = ? AND d.deleted = 0 ORDER BY d.id"
    )
  }

  /// `count(_:)` of the indexed equality's queries, against counting the index's entries by
  /// hand, as Settee does: entries exist only for live documents, one per document here
  /// (these documents hold no arrays), so the documents themselves need not be read.
  mutating func indexedCount(_ collection: DocumentCollection, _ cid: Int64) throws
    -> BenchResult
  {
    let nap = try table("nap", cid)
    let cases = try equalityCases()
    let sql =
      "SELECT count(*) FROM \(nap) x WHERE x.k0 = ? AND x.k1 = ? AND x.k2 = ?"
    func counted(_ arguments: StatementArguments) throws -> Int {
      try read { db in try Int.fetchOne(db.cachedStatement(sql: sql), arguments: arguments) ?? 0 }
    }
    // Both sides must count the same documents, and as many as a find returns.
    for item in cases.prefix(20) {
      let found = try collection.find(item.query).count
      try check("count, indexed equality", try collection.count(item.query), found)
      try check("count, indexed equality (baseline)", try counted(item.arguments), found)
    }
    let timed = try Measure.medians(repetitions: repetitions) {
      for item in cases { _ = try collection.count(item.query) }
    } _: {
      for item in cases { _ = try counted(item.arguments) }
    }
    return BenchResult(
      name: "count, indexed equality", n: cases.count, timed,
      target: 1.5)
  }

  mutating func indexedRange(_ collection: DocumentCollection, _ cid: Int64) throws -> BenchResult {
    let num = try table("num", cid)
    let cases = try queries(quick ? 20 : 200).map { value in
      (
        try FindQuery(
          matching: Field("docNumber") > value.number, sort: [.ascending("docNumber")], limit: 10),
        StatementArguments([BenchSuite.key(.int(value.number))])
      )
    }
    return try compare(
      "indexed range, sort, limit 10", n: cases.count, target: 1.5, collection, cases,
      baseline:
        "SELECT d.id, d.rev, d.body FROM \(num) x CROSS JOIN documents d ON d.rid = x.rid WHERE x.k0 > ? AND x.k0 < x'08' AND d.deleted = 0 ORDER BY x.k0, x.id LIMIT 10"
    )
  }

  mutating func indexedOr(_ collection: DocumentCollection, _ cid: Int64) throws -> BenchResult {
    let (num, nap) = (try table("num", cid), try table("nap", cid))
    let cases = try queries(quick ? 20 : 200).map { value in
      (
        FindQuery(
          selector: try SelectorParser.parse([
            "$or": [
              ["docNumber": .int(value.number)],
              ["name": .string(value.name), "age": .int(value.age), "pet": .string(value.pet)],
            ]
          ])),
        StatementArguments([
          BenchSuite.key(.int(value.number)), BenchSuite.key(.string(value.name)),
          BenchSuite.key(.int(value.age)), BenchSuite.key(.string(value.pet)),
        ])
      )
    }
    return try compare(
      "$or over two indexes", n: cases.count, target: 1.5, collection, cases,
      baseline:
        "SELECT d.id, d.rev, d.body FROM documents d WHERE d.rid IN (SELECT rid FROM \(num) WHERE k0 = ? UNION SELECT rid FROM \(nap) WHERE k0 = ? AND k1 = ? AND k2 = ?) AND d.deleted = 0 ORDER BY d.id"
    )
  }

  mutating func indexedIn(_ collection: DocumentCollection, _ cid: Int64) throws -> BenchResult {
    let num = try table("num", cid)
    let lists = (0..<(quick ? 20 : 200)).map { _ in
      (0..<10).map { _ in Int64(data.next() % UInt64(count)) }
    }
    let cases = try lists.map { list in
      (
        FindQuery(
          selector: try SelectorParser.parse(["docNumber": ["$in": .array(list.map { .int($0) })]])),
        StatementArguments(list.map { BenchSuite.key(.int($0)) })
      )
    }
    return try compare(
      "$in, 10 values", n: cases.count, target: 1.5, collection, cases,
      baseline:
        "SELECT d.id, d.rev, d.body FROM \(num) x CROSS JOIN documents d ON d.rid = x.rid WHERE x.k0 IN (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) AND d.deleted = 0 ORDER BY d.id"
    )
  }

  func unindexedScan(_ collection: DocumentCollection, _ cid: Int64) throws -> BenchResult {
    let query = FindQuery(
      selector: try SelectorParser.parse(#"{"pet": "parrot", "age": {"$gt": 85}}"#))
    return try compare(
      "unindexed query (scan)", n: count, target: 2, collection, [(query, [cid])],
      baseline:
        "SELECT id, rev, body FROM documents WHERE cid = ? AND deleted = 0 AND instr(body, '\"parrot\"') AND json_extract(body, '$.pet') = 'parrot' AND json_extract(body, '$.age') > 85 ORDER BY id"
    )
  }

  /// A scan with no string to look for first: every document's JSON is read.
  func unindexedNumericScan(_ collection: DocumentCollection, _ cid: Int64) throws -> BenchResult {
    let query = FindQuery(selector: try SelectorParser.parse(#"{"age": {"$gt": 88}}"#))
    return try compare(
      "unindexed numeric range (scan)", n: count, target: 2, collection, [(query, [cid])],
      baseline:
        "SELECT id, rev, body FROM documents WHERE cid = ? AND deleted = 0 AND json_extract(body, '$.age') > 88 ORDER BY id"
    )
  }

  mutating func prepareProfiles() throws -> (collection: DocumentCollection, cid: Int64) {
    try load("profiles", data.profiles(count))
    let collection = database.collection("profiles")
    if database.isTextSearchEnabled {
      try collection.ensureIndexed(["comment"], name: "comments", type: .text)
    }
    return (collection, try collectionID("profiles"))
  }

  func arrayElement(_ collection: DocumentCollection, _ cid: Int64) throws -> BenchResult {
    let query = FindQuery(
      selector: try SelectorParser.parse(#"{"tags": "hamster", "name": "mike"}"#))
    return try compare(
      "array element query (scan)", n: count, target: 2, collection, [(query, [cid])],
      baseline:
        "SELECT id, rev, body FROM documents WHERE cid = ? AND deleted = 0 AND instr(body, '\"hamster\"') AND instr(body, '\"mike\"') AND EXISTS (SELECT 1 FROM json_each(body, '$.tags') WHERE value = 'hamster') AND json_extract(body, '$.name') = 'mike' ORDER BY id"
    )
  }

  func textSearch(_ collection: DocumentCollection, _ cid: Int64) throws -> BenchResult {
    guard database.isTextSearchEnabled else {
      return BenchResult(
        name: "text search (FTS4 unavailable)", n: 0, settee: 0, baseline: 0, target: nil)
    }
    let fts = try table("comments", cid, prefix: "fts_")
    return try compare(
      "text search, a phrase", n: count, target: 1.5, collection,
      [(FindQuery(selector: .text("\"chess sailing\"")), ["\"chess sailing\""])],
      baseline:
        "SELECT d.id, d.rev, d.body FROM \(fts) f CROSS JOIN documents d ON d.rid = f.docid WHERE \(fts) MATCH ? AND d.deleted = 0 ORDER BY d.id"
    )
  }

  func sortedLimit(_ collection: DocumentCollection, _ cid: Int64) throws -> BenchResult {
    let num = try table("num", cid)
    let query = try FindQuery(matching: .all, sort: [.descending("docNumber")], limit: 10)
    return try compare(
      "sorted by index, limit 10", n: try collection.count(), target: 1.5, collection,
      [(query, [])],
      baseline:
        "SELECT d.id, d.rev, d.body FROM \(num) x CROSS JOIN documents d ON d.rid = x.rid WHERE d.deleted = 0 ORDER BY x.k0 DESC, x.id DESC LIMIT 10",
      repetitions: repetitions * 20)
  }
}
