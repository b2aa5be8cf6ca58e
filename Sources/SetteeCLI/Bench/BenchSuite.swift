import Foundation
import GRDB
import Settee
import SetteeCore

/// The workloads of `settee bench`, each beside its hand-written baseline.
///
/// Baselines use GRDB on the same file, the same tables and the same documents; they do
/// what a careful programmer would write by hand for the same result, and nothing that
/// Settee's API does not also do. Joins from an index's entries to documents are CROSS
/// JOINs, which fix the order as Settee's SQL does: SQLite has no statistics for entry
/// tables, and once `PRAGMA optimize` has measured `documents` it may prefer to scan every
/// document and build an automatic index on the entries (milliseconds instead of
/// microseconds for a `limit 10`).
struct BenchSuite {
  let path: String
  let count: Int
  let quick: Bool
  let log: (String) -> Void
  let database: Settee.Database
  let pool: DatabasePool
  var data = BenchData()
  let people: [[UInt8]]

  /// The workloads to run, by key (``workloads``); nil for all.
  var only: Set<String>?

  /// Each workload's key, for `--only`.
  static let workloads = [
    "insert", "get", "json", "update", "build", "equality", "count", "range", "or", "in", "scan",
    "array",
    "text",
    "sorted", "views", "value-index", "live", "where",
  ]

  init(path: String, documents: Int, quick: Bool, log: @escaping (String) -> Void) throws {
    self.path = path
    count = documents
    self.quick = quick
    self.log = log
    database = try Settee.Database(path: path)
    pool = try DatabasePool(path: path)
    // The baseline commits as durably as Settee does (Configuration.fullSync): GRDB's WAL
    // set-up leaves its writer at NORMAL, which skips the fsync a FULL commit makes.
    let level = database.configuration.synchronousLevel
    try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = \(level)") }
    people = data.people(documents)
  }

  var repetitions: Int { quick ? 1 : 5 }

  mutating func run() throws -> [BenchResult] {
    var results: [BenchResult] = []
    func add(_ result: BenchResult) {
      log(
        String(
          format: "  %@ (n=%d): %.4f s vs %.4f s", result.name, result.n, result.settee,
          result.baseline))
      results.append(result)
    }
    log("preparing \(count) documents…")
    try load("people", people)
    let main = database.collection("people")
    try main.ensureIndexed(["docNumber"], name: "num")
    try main.ensureIndexed(["name", "age", "pet"], name: "nap")
    let cid = try collectionID("people")

    func wanted(_ key: String) -> Bool { only?.contains(key) ?? true }
    if wanted("insert") { add(try bulkInsert()) }
    if wanted("get") { add(try getByID(main, cid)) }
    if wanted("json") { add(try jsonRoundTrip(cid)) }
    if wanted("update") { add(try update(main, cid)) }
    if wanted("build") { for result in try indexBuilds() { add(result) } }
    if wanted("equality") { add(try indexedEquality(main, cid)) }
    if wanted("count") { add(try indexedCount(main, cid)) }
    if wanted("range") { add(try indexedRange(main, cid)) }
    if wanted("or") { add(try indexedOr(main, cid)) }
    if wanted("in") { add(try indexedIn(main, cid)) }
    if wanted("scan") {
      add(try unindexedScan(main, cid))
      add(try unindexedNumericScan(main, cid))
    }
    if wanted("array") || wanted("text") {
      let profiles = try prepareProfiles()
      if wanted("array") { add(try arrayElement(profiles.collection, profiles.cid)) }
      if wanted("text") { add(try textSearch(profiles.collection, profiles.cid)) }
    }
    if wanted("sorted") {
      let small = min(10_000, count)
      if small < count {
        try load("people-small", Array(people.prefix(small)))
        let smallCollection = database.collection("people-small")
        try smallCollection.ensureIndexed(["docNumber"], name: "num")
        add(try sortedLimit(smallCollection, try collectionID("people-small")))
      }
      add(try sortedLimit(main, cid))
    }
    if wanted("views") { for result in try views(main, cid) { add(result) } }
    if wanted("value-index") { add(try valueIndex(main, cid)) }
    if wanted("live") { for result in try liveQueries() { add(result) } }
    if wanted("where") { for result in try whereQueries() { add(result) } }
    return results
  }

  // MARK: - Setup

  func load(_ name: String, _ lines: [[UInt8]]) throws {
    var iterator = lines.makeIterator()
    var reader = JSONRecordReader(maxRecordBytes: 1 << 20) { iterator.next() }
    try database.collection(name).importDocuments(from: &reader)
  }

  func collectionID(_ name: String) throws -> Int64 {
    try pool.read { db in
      try Int64.fetchOne(db, sql: "SELECT cid FROM collections WHERE name = ?", arguments: [name])!
    }
  }

  /// The entry table of an index, as the baselines address it.
  func table(_ index: String, _ cid: Int64, prefix: String = "ix_") throws -> String {
    let xid = try pool.read { db in
      try Int64.fetchOne(
        db, sql: "SELECT xid FROM indexes WHERE cid = ? AND name = ?", arguments: [cid, index])!
    }
    return "\"\(prefix)\(xid)\""
  }

  static func key(_ value: JSON) -> Data { Data(CollationKey.encode(value)) }

  /// A timed baseline read, run as Settee runs its reads: in a transaction begun and
  /// ended with statements kept prepared (GRDB's `read` prepares `BEGIN` and `COMMIT`
  /// anew each time, a third of a small indexed query), so that the ratio measures
  /// Settee's engine, not a trick only one side has.
  func read<T>(_ body: (GRDB.Database) throws -> T) throws -> T {
    try pool.unsafeRead { db in
      try db.cachedStatement(sql: "BEGIN DEFERRED TRANSACTION").execute()
      do {
        let result = try body(db)
        try db.cachedStatement(sql: "COMMIT TRANSACTION").execute()
        return result
      } catch {
        try? db.cachedStatement(sql: "ROLLBACK TRANSACTION").execute()
        throw error
      }
    }
  }

  static func documents(_ rows: [Row]) -> Int {
    // What a hand-written reader does with a row: take its id, revision and body text.
    rows.reduce(0) { sum, row in
      let id: String = row[0]
      let rev: String = row[1]
      let body: String = row[2]
      return sum + id.utf8.count + rev.utf8.count + body.utf8.count
    }
  }

  // MARK: - Writes

  mutating func bulkInsert() throws -> BenchResult {
    let lines = people
    let ids = (0..<count).map { BenchData.id($0, prefix: "p") }
    let runs = quick ? 1 : 3
    let settee = try medianOfWrites(repetitions: runs, prepare: { "bulk-s\($0)" }) { name in
      try load(name, lines)
    }
    let baseline = try medianOfWrites(repetitions: runs, prepare: { "bulk-b\($0)" }) { name in
      try handInsert(name, ids: ids) { lines[$0] }
    }
    return BenchResult(
      name: "bulk insert", n: count, settee: settee, baseline: baseline, target: 1.5)
  }

  /// The hand-written bulk insert: one transaction, prepared statements, the document row,
  /// the collection's sequence number (a first revision has no `revisions` row, as in
  /// Settee's schema).
  /// `body` gives each document's JSON (a final newline is left out).
  func handInsert(_ name: String, ids: [String], body: (Int) -> [UInt8]) throws {
    try pool.write { db in
      try Self.largePageCache(db) {
        try db.execute(sql: "INSERT INTO collections (name) VALUES (?)", arguments: [name])
        let cid = db.lastInsertedRowID
        let insertDocument = try db.makeStatement(
          sql: "INSERT INTO documents (cid, id, rev, deleted, seq, body) VALUES (?, ?, ?, 0, ?, ?)")
        for number in ids.indices {
          let bytes = body(number)
          let rev = RevisionID.next(after: nil, deleted: false, body: bytes).description
          let text = String(
            decoding: bytes.last == 10 ? bytes.dropLast() : bytes[...], as: UTF8.self)
          try insertDocument.execute(arguments: [cid, ids[number], rev, number + 1, text])
        }
        try db.execute(
          sql: "UPDATE collections SET last_seq = ? WHERE cid = ?", arguments: [ids.count, cid])
      }
    }
  }

  mutating func sampleIDs(_ n: Int) -> [String] {
    (0..<n).map { _ in BenchData.id(Int(data.next() % UInt64(count)), prefix: "p") }
  }

  mutating func getByID(_ collection: DocumentCollection, _ cid: Int64) throws -> BenchResult {
    let ids = sampleIDs(quick ? 100 : 1_000)
    let settee = try Measure.median(repetitions: repetitions) {
      for id in ids { _ = try collection.get(id) }
    }
    let baseline = try Measure.median(repetitions: repetitions) {
      for id in ids {
        _ = try read { db in
          try Row.fetchAll(
            db.cachedStatement(
              sql: "SELECT id, rev, body FROM documents WHERE cid = ? AND id = ? AND deleted = 0"),
            arguments: [cid, id]
          ).count
        }
      }
    }
    return BenchResult(
      name: "get by id", n: ids.count, settee: settee, baseline: baseline, target: 1.5)
  }

  /// Settee's JSON parser and printer over every stored body, against SQLite's `json()`
  /// (which parses and prints too) over the same bodies, read by the same loop. Both must
  /// print the same number of bytes (bodies are stored minified, as both print them).
  func jsonRoundTrip(_ cid: Int64) throws -> BenchResult {
    let select = "SELECT body FROM documents WHERE cid = ? AND deleted = 0"
    var printed = (settee: 0, baseline: 0)
    let settee = try Measure.median(repetitions: repetitions) {
      printed.settee = 0
      var output: [UInt8] = []
      try pool.read { db in
        let rows = try Row.fetchCursor(db.cachedStatement(sql: select), arguments: [cid])
        while let row = try rows.next() {
          let value = try row.withUnsafeData(atIndex: 0) { data in
            try (data ?? Data()).withUnsafeBytes {
              try JSONParser.parse($0.bindMemory(to: UInt8.self))
            }
          }
          output.removeAll(keepingCapacity: true)
          JSONWriter.write(value, into: &output)
          printed.settee += output.count
        }
      }
    }
    let baseline = try Measure.median(repetitions: repetitions) {
      printed.baseline = 0
      try pool.read { db in
        let rows = try Row.fetchCursor(
          db.cachedStatement(sql: "SELECT json(body) FROM documents WHERE cid = ? AND deleted = 0"),
          arguments: [cid])
        while let row = try rows.next() {
          printed.baseline += try row.withUnsafeData(atIndex: 0) { $0?.count ?? 0 }
        }
      }
    }
    guard printed.settee == printed.baseline, printed.settee > 0 else {
      throw SetteeError(
        .storage,
        "bench: JSON round trip printed \(printed.settee) bytes, json() \(printed.baseline)")
    }
    return BenchResult(
      name: "JSON parse and print, every body", n: count, settee: settee, baseline: baseline,
      target: 3)
  }

  /// Read a document, change a field, write it: against the same work by hand, which
  /// parses and prints the body, records the revision and the sequence number, and keeps
  /// the collection's two indexes (`nap` gets the entry's new keys, `num` its new revision).
  mutating func update(_ collection: DocumentCollection, _ cid: Int64) throws -> BenchResult {
    let ids = Array(Set(sampleIDs(quick ? 50 : 300))).sorted()
    let (nap, num) = (try table("nap", cid), try table("num", cid))
    let runs = quick ? 1 : 3
    let settee = try Measure.median(repetitions: runs) {
      for id in ids {
        var document = try collection.get(id)!.json
        document["age"] = .int(Int64((document["age"]?.doubleValue ?? 0) + 1))
        try collection.put(document)
      }
    }
    let baseline = try Measure.median(repetitions: runs) {
      for id in ids {
        try pool.write { db in
          let row = try Row.fetchOne(
            db.cachedStatement(
              sql: "SELECT rid, rev, body, seq FROM documents WHERE cid = ? AND id = ?"),
            arguments: [cid, id])!
          let rid: Int64 = row[0]
          let oldSeq: Int64 = row[3]
          let parent = RevisionID(row[1] as String)!
          guard case .object(var body) = try JSONParser.parse(row[2] as String) else {
            throw SetteeError(.storage, "bench: \(id) is not an object")
          }
          let oldAge = body["age"] ?? .null
          let age = JSON.int(Int64((oldAge.doubleValue ?? 0) + 1))
          body["age"] = age
          let bytes = JSONWriter.bytes(.object(body))
          let rev = RevisionID.next(after: parent, deleted: false, body: bytes).description
          let seq = try Int64.fetchOne(
            db.cachedStatement(sql: "SELECT last_seq + 1 FROM collections WHERE cid = ?"),
            arguments: [cid])!
          try db.cachedStatement(
            sql: "UPDATE documents SET rev = ?, seq = ?, body = ? WHERE rid = ?"
          ).execute(arguments: [rev, seq, String(decoding: bytes, as: UTF8.self), rid])
          try db.cachedStatement(
            sql:
              "INSERT OR IGNORE INTO revisions (rid, rev, parent, deleted, seq) VALUES (?, ?, NULL, 0, ?)"
          ).execute(arguments: [rid, parent.description, oldSeq])
          try db.cachedStatement(
            sql: "INSERT INTO revisions (rid, rev, parent, deleted, seq) VALUES (?, ?, ?, 0, ?)"
          ).execute(arguments: [rid, rev, parent.description, seq])
          try db.cachedStatement(sql: "UPDATE collections SET last_seq = ? WHERE cid = ?")
            .execute(arguments: [seq, cid])
          // The name+age+pet index: the entry moves to its new key.
          let (name, pet) = (body["name"] ?? .null, body["pet"] ?? .null)
          try db.cachedStatement(
            sql:
              "DELETE FROM \(nap) WHERE k0 = ? AND k1 = ? AND k2 = ? AND id = ? AND rid = ?"
          ).execute(arguments: [
            BenchSuite.key(name), BenchSuite.key(oldAge), BenchSuite.key(pet), id, rid,
          ])
          try db.cachedStatement(
            sql:
              "INSERT INTO \(nap) (k0, k1, k2, v0, v1, v2, id, rid, rev) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
          ).execute(arguments: [
            BenchSuite.key(name), BenchSuite.key(age), BenchSuite.key(pet),
            JSONWriter.string(name), JSONWriter.string(age), JSONWriter.string(pet), id, rid, rev,
          ])
          // The docNumber index: same key, new revision.
          try db.cachedStatement(
            sql: "UPDATE \(num) SET rev = ? WHERE k0 = ? AND id = ? AND rid = ?"
          ).execute(arguments: [rev, BenchSuite.key(body["docNumber"] ?? .null), id, rid])
        }
      }
    }
    // The hand-written writes must leave what Settee's leave: each document found through
    // the index by its new values, at its current revision.
    for id in ids.prefix(20) {
      let document = try collection.get(id)!
      let query = FindQuery(
        selector: try SelectorParser.parse([
          "name": document["name"]!, "age": document["age"]!, "pet": document["pet"]!,
        ]), fields: [FieldPath(components: ["_rev"])])
      let found = try collection.find(query).first { $0.id == id }
      try check("update: \(id) through the nap index", found?.rev, document.rev)
      let byNumber = FindQuery(
        selector: try SelectorParser.parse(["docNumber": document["docNumber"]!]),
        fields: [FieldPath(components: ["docNumber"])])
      try check(
        "update: \(id) through the num index", try collection.find(byNumber).first?.rev,
        document.rev)
    }
    return BenchResult(
      name: "update (read, change, write)", n: ids.count, settee: settee, baseline: baseline,
      target: 1.5)
  }

  /// Seed 000's indexing table: 1 and 3 fields at 1,000 to 100,000 documents.
  mutating func indexBuilds() throws -> [BenchResult] {
    let seed: [Int: (Double, Double)] = [
      1_000: (0.8, 0.8), 10_000: (6.9, 7.6), 50_000: (56.2, 60.7), 100_000: (169.2, 179.9),
    ]
    var results: [BenchResult] = []
    for size in [1_000, 10_000, 50_000, 100_000] where size <= count {
      let name = "build-\(size)"
      try load(name, Array(people.prefix(size)))
      let collection = database.collection(name)
      let cid = try collectionID(name)
      for fields in [["name"], ["name", "age", "pet"]] {
        let runs = quick ? 1 : 3
        let settee = try medianOfWrites(repetitions: runs, prepare: { _ in () }) { _ in
          try collection.ensureIndexed(fields, name: "bench")
        } cleanUp: {
          try collection.deleteIndex(named: "bench")
        }
        // By hand: the collection's rows (found through its id index, as Settee finds them;
        // named, since statistics gathered when one collection held every document make
        // SQLite scan the whole table for a small one) with json_extract of each field,
        // then an index over those keys. A partial expression index on `documents` would
        // scan every collection's rows instead.
        let columns = fields.enumerated().map { "json_extract(body, '$.\($1)') AS k\($0)" }.joined(
          separator: ", ")
        let keys = fields.indices.map { "k\($0)" }.joined(separator: ", ")
        let baseline = try medianOfWrites(repetitions: runs, prepare: { _ in () }) { _ in
          try pool.write { db in
            // A helper thread for the sort and no cache spill, as Settee's build has.
            try Self.buildPragmas(db) {
              // cid is a number Settee made, not user input.
              try db.execute(
                sql:
                  "CREATE TABLE bench_baseline AS SELECT \(columns), id, rid FROM documents INDEXED BY documents_by_id WHERE cid = \(cid) AND deleted = 0"
              )
              try db.execute(
                sql: "CREATE INDEX bench_baseline_keys ON bench_baseline (\(keys), id)")
            }
          }
        } cleanUp: {
          try pool.write { db in try db.execute(sql: "DROP TABLE bench_baseline") }
        }
        results.append(
          BenchResult(
            name: "index build, \(fields.count) field\(fields.count == 1 ? "" : "s")", n: size,
            settee: settee, baseline: baseline, target: 2,
            seed: fields.count == 1 ? seed[size]?.0 : seed[size]?.1))
      }
    }
    results.append(try arrayIndexBuild())
    return results
  }

  /// Times writes as ``Measure/median(repetitions:prepare:_:cleanUp:)`` does, each run
  /// after its preparation and then a copy of the WAL into the database: otherwise a run
  /// pays for moving the pages that earlier work (or its own preparation's writes) put in
  /// the WAL (the commit that finds the WAL over SQLite's threshold does that), which
  /// flattered whichever side ran second (the 3-field array build's baseline took 0.67 s
  /// instead of 0.38 s; Settee's bulk insert, run first after the data was loaded, 0.98 s
  /// instead of 0.58 s).
  func medianOfWrites<State>(
    repetitions: Int, prepare: (Int) throws -> State, _ body: (State) throws -> Void,
    cleanUp: () throws -> Void = {}
  ) throws -> Double {
    try Measure.median(
      repetitions: repetitions,
      prepare: { run in
        let state = try prepare(run)
        try pool.writeWithoutTransaction { db in _ = try db.checkpoint(.passive) }
        return state
      }, body, cleanUp: cleanUp)
  }

  /// Runs a baseline build as Settee runs its own: a helper thread for the sort, and the
  /// new index's pages kept in memory (up to 64 MB) rather than spilled to the WAL.
  static func buildPragmas(_ db: GRDB.Database, _ body: () throws -> Void) throws {
    let spill = try Int.fetchOne(db, sql: "PRAGMA cache_spill") ?? 0
    try db.execute(sql: "PRAGMA threads = 1")
    try db.execute(sql: "PRAGMA cache_spill = 16384")
    defer {
      try? db.execute(sql: "PRAGMA threads = 0")
      try? db.execute(sql: "PRAGMA cache_spill = \(spill)")
    }
    try body()
  }

  /// Runs a baseline write with the page cache Settee gives its large writes (imports,
  /// view catch-ups): up to 64 MB instead of SQLite's 2 MB.
  static func largePageCache(_ db: GRDB.Database, _ body: () throws -> Void) throws {
    let size = try Int.fetchOne(db, sql: "PRAGMA cache_size") ?? -2_000
    try db.execute(sql: "PRAGMA cache_size = -65536")
    defer { try? db.execute(sql: "PRAGMA cache_size = \(size)") }
    try body()
  }

  /// A 3-field build where `pet` is an array of two in every seventh document (the
  /// whole-process comparison's documents): those get an entry per element. By hand: the
  /// same keys, with `json_each` giving the elements of the array documents.
  mutating func arrayIndexBuild() throws -> BenchResult {
    let name = "build-arrays"
    try load(
      name, data.wholeProcess(count).map { Array((JSONWriter.string(.object($0)) + "\n").utf8) })
    let collection = database.collection(name)
    let cid = try collectionID(name)
    let runs = quick ? 1 : 3
    let settee = try medianOfWrites(repetitions: runs, prepare: { _ in () }) { _ in
      try collection.ensureIndexed(["name", "age", "pet"], name: "bench")
    } cleanUp: {
      try collection.deleteIndex(named: "bench")
    }
    // cid is a number Settee made, not user input.
    let baseline = try medianOfWrites(repetitions: runs, prepare: { _ in () }) { _ in
      try pool.write { db in
        try Self.buildPragmas(db) {
          try db.execute(
            sql: """
              CREATE TABLE bench_baseline AS
              SELECT json_extract(body, '$.name') AS k0, json_extract(body, '$.age') AS k1,
                json_extract(body, '$.pet') AS k2, id, rid
              FROM documents INDEXED BY documents_by_id WHERE cid = \(cid) AND deleted = 0
                AND json_type(body, '$.pet') IS NOT 'array'
              UNION ALL
              SELECT json_extract(d.body, '$.name'), json_extract(d.body, '$.age'), e.value, d.id,
                d.rid
              FROM documents AS d INDEXED BY documents_by_id, json_each(d.body, '$.pet') AS e
              WHERE d.cid = \(cid) AND d.deleted = 0 AND json_type(d.body, '$.pet') = 'array'
              """)
          try db.execute(sql: "CREATE INDEX bench_baseline_keys ON bench_baseline (k0, k1, k2, id)")
        }
      }
    } cleanUp: {
      try pool.write { db in try db.execute(sql: "DROP TABLE bench_baseline") }
    }
    return BenchResult(
      name: "index build, 3 fields, arrays", n: count, settee: settee, baseline: baseline,
      target: 2)
  }

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
    let (settee, baseline) = try Measure.medians(repetitions: runs) {
      for item in cases { _ = try collection.find(item.query) }
    } _: {
      for item in cases {
        _ = try read { db in
          BenchSuite.documents(
            try Row.fetchAll(db.cachedStatement(sql: sql), arguments: item.arguments))
        }
      }
    }
    return BenchResult(name: name, n: n, settee: settee, baseline: baseline, target: target)
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
    let (settee, baseline) = try Measure.medians(repetitions: repetitions) {
      for item in cases { _ = try collection.count(item.query) }
    } _: {
      for item in cases { _ = try counted(item.arguments) }
    }
    return BenchResult(
      name: "count, indexed equality", n: cases.count, settee: settee, baseline: baseline,
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

  // MARK: - Output

  static var machine: JSON {
    let info = ProcessInfo.processInfo
    return [
      "cpus": .int(Int64(info.activeProcessorCount)),
      "memory_bytes": .int(Int64(info.physicalMemory)),
      "os": .string(info.operatingSystemVersionString),
      "sqlite": .string(sqliteVersion),
    ]
  }

  static var sqliteVersion: String {
    let version = try? DatabaseQueue().read { db in
      try String.fetchOne(db, sql: "SELECT sqlite_version()")
    }
    return (version ?? nil) ?? "?"
  }

  static func table(_ results: [BenchResult]) -> String {
    func pad(_ text: String, _ width: Int, left: Bool = false) -> String {
      let padding = String(repeating: " ", count: max(0, width - text.count))
      return left ? text + padding : padding + text
    }
    var lines = [
      pad("workload", 32, left: true) + pad("n", 9) + pad("settee s", 11) + pad("baseline s", 12)
        + pad("ratio", 8)
        + pad("target", 8) + pad("seed iPhone5 s", 16)
    ]
    for result in results {
      lines.append(
        pad(result.name, 32, left: true) + pad(String(result.n), 9)
          + pad(String(format: "%.5f", result.settee), 11)
          + pad(result.baseline > 0 ? String(format: "%.5f", result.baseline) : "-", 12)
          + pad(result.baseline > 0 ? String(format: "%.2f", result.ratio) : "-", 8)
          + pad(
            result.target.map { String(format: "<= %.1f", $0) }
              ?? result.limit.map { String(format: "<%.0f ms", $0 * 1000) } ?? "", 8)
          + pad(result.seed.map { String(format: "%.1f", $0) } ?? "", 16))
    }
    return lines.joined(separator: "\n") + "\n"
  }
}
