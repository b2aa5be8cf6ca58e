import Foundation
import GRDB
import Settee
import SetteeCLI
import SetteeCore

// The write workloads: bulk insert, reads by id, JSON round trips, updates, index builds.
extension BenchSuite {
  // MARK: - Writes

  mutating func bulkInsert() throws -> BenchResult {
    let lines = people
    let ids = (0..<count).map { BenchData.id($0, prefix: "p") }
    let runs = quick ? 1 : 3
    let timed = try pairedWrites(
      repetitions: runs, prepare: { "bulk-s\($0)" }, settee: { name in try load(name, lines) },
      prepareBaseline: { "bulk-b\($0)" }
    ) { name in
      try handInsert(name, ids: ids) { lines[$0] }
    }
    return BenchResult(name: "bulk insert", n: count, timed, target: 1.5)
  }

  /// The hand-written bulk insert: one transaction, prepared statements, the document row,
  /// the collection's sequence number (a first revision has no `revisions` row, as in
  /// Settee's schema).
  /// `body` gives each document's JSON (a final newline is left out).
  func handInsert(_ name: String, ids: [String], body: (Int) -> [UInt8]) throws {
    try pool.write { db in
      try Self.largePageCache(db, mebibytes: 16) {
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
        // The collection's counts, kept per batch as Settee keeps them.
        try db.execute(
          sql: "UPDATE collections SET last_seq = ?, doc_count = doc_count + ? WHERE cid = ?",
          arguments: [ids.count, ids.count, cid])
      }
    }
  }

  mutating func sampleIDs(_ n: Int) -> [String] {
    (0..<n).map { _ in BenchData.id(Int(data.next() % UInt64(count)), prefix: "p") }
  }

  mutating func getByID(_ collection: DocumentCollection, _ cid: Int64) throws -> BenchResult {
    let ids = sampleIDs(quick ? 100 : 1_000)
    let timed = try Measure.medians(repetitions: repetitions) {
      for id in ids { _ = try collection.get(id) }
    } _: {
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
    return BenchResult(name: "get by id", n: ids.count, timed, target: 1.5)
  }

  /// Settee's JSON parser and printer over every stored body, against SQLite's `json()`
  /// (which parses and prints too) over the same bodies, read by the same loop. Both must
  /// print the same number of bytes (bodies are stored minified, as both print them).
  func jsonRoundTrip(_ cid: Int64) throws -> BenchResult {
    let select = "SELECT body FROM documents WHERE cid = ? AND deleted = 0"
    var printed = (settee: 0, baseline: 0)
    let timed = try Measure.medians(repetitions: repetitions) {
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
    } _: {
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
    return BenchResult(name: "JSON parse and print, every body", n: count, timed, target: 3)
  }

  /// Read a document, change a field, write it: against the same work by hand, which
  /// parses and prints the body, records the revision and the sequence number, and keeps
  /// the collection's two indexes (`nap` gets the entry's new keys, `num` its new revision).
  mutating func update(_ collection: DocumentCollection, _ cid: Int64) throws -> BenchResult {
    let ids = Array(Set(sampleIDs(quick ? 50 : 300))).sorted()
    let (nap, num) = (try table("nap", cid), try table("num", cid))
    let runs = quick ? 1 : 3
    let timed = try Measure.medians(repetitions: runs) {
      for id in ids {
        var document = try collection.get(id)!.json
        document["age"] = .int(Int64((document["age"]?.doubleValue ?? 0) + 1))
        try collection.put(document)
      }
    } _: {
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
          // The replaced revision keeps its body until compaction (its row is made now
          // when it was the document's first).
          try db.cachedStatement(
            sql: """
              INSERT INTO revisions (rid, rev, parent, deleted, seq, body)
                SELECT ?1, ?2, NULL, 0, ?3, body FROM documents WHERE rid = ?1
                ON CONFLICT (rid, rev) DO UPDATE SET body = excluded.body
              """
          ).execute(arguments: [rid, parent.description, oldSeq])
          try db.cachedStatement(
            sql: "UPDATE documents SET rev = ?, seq = ?, body = ? WHERE rid = ?"
          ).execute(arguments: [rev, seq, String(decoding: bytes, as: UTF8.self), rid])
          try db.cachedStatement(
            sql: "INSERT INTO revisions (rid, rev, parent, deleted, seq) VALUES (?, ?, ?, 0, ?)"
          ).execute(arguments: [rid, rev, parent.description, seq])
          try db.cachedStatement(
            sql: "UPDATE collections SET last_seq = ?, kept_bodies = kept_bodies + 1 WHERE cid = ?"
          ).execute(arguments: [seq, cid])
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
    // the index by its new values, at its current revision, with its replaced revision's
    // body kept.
    for id in ids.prefix(20) {
      let document = try collection.get(id)!
      let history = try collection.revisions(of: id).map(\.rev)  // oldest first
      try check(
        "update: \(id) keeps its replaced revision",
        try history.count > 1 ? collection.get(id, rev: history[history.count - 2])?["age"] : nil,
        document["age"].map { .int(Int64(($0.doubleValue ?? 0) - 1)) })
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
      name: "update (read, change, write)", n: ids.count, timed, target: 1.5)
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
        // By hand: the collection's rows (found through its id index, as Settee finds them;
        // named, since statistics gathered when one collection held every document make
        // SQLite scan the whole table for a small one) with json_extract of each field,
        // then an index over those keys. A partial expression index on `documents` would
        // scan every collection's rows instead.
        let columns = fields.enumerated().map { "json_extract(body, '$.\($1)') AS k\($0)" }.joined(
          separator: ", ")
        let keys = fields.indices.map { "k\($0)" }.joined(separator: ", ")
        let timed = try pairedWrites(
          repetitions: runs, prepare: { _ in () },
          settee: { _ in try collection.ensureIndexed(fields, name: "bench") },
          cleanUp: { try collection.deleteIndex(named: "bench") },
          prepareBaseline: { _ in () }
        ) { _ in
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
        } cleanUpBaseline: {
          try pool.write { db in try db.execute(sql: "DROP TABLE bench_baseline") }
        }
        results.append(
          BenchResult(
            name: "index build, \(fields.count) field\(fields.count == 1 ? "" : "s")", n: size,
            timed, target: 2,
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

  /// Times Settee's writes and the baseline's in alternation, each run prepared and its
  /// WAL copied into the database as ``medianOfWrites(repetitions:prepare:_:cleanUp:)``
  /// does: a machine's load that comes and goes then weighs on both sides of the ratio.
  func pairedWrites<A, B>(
    repetitions: Int,
    prepare: (Int) throws -> A, settee: (A) throws -> Void, cleanUp: () throws -> Void = {},
    prepareBaseline: (Int) throws -> B, baseline: (B) throws -> Void,
    cleanUpBaseline: () throws -> Void = {}
  ) throws -> Paired {
    func checkpoint() throws {
      try pool.writeWithoutTransaction { db in _ = try db.checkpoint(.passive) }
    }
    return try Measure.paired(
      repetitions: repetitions,
      prepareFirst: { run in
        let state = try prepare(run)
        try checkpoint()
        return state
      }, settee, cleanUpFirst: cleanUp,
      prepareSecond: { run in
        let state = try prepareBaseline(run)
        try checkpoint()
        return state
      }, baseline, cleanUpSecond: cleanUpBaseline)
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

  /// Runs a baseline write with the page cache Settee gives its large writes instead of
  /// SQLite's 2 MB: 16 MiB for imports, 64 MiB for view catch-ups.
  static func largePageCache(
    _ db: GRDB.Database, mebibytes: Int = 64, _ body: () throws -> Void
  ) throws {
    let size = try Int.fetchOne(db, sql: "PRAGMA cache_size") ?? -2_000
    try db.execute(sql: "PRAGMA cache_size = -\(mebibytes * 1024)")
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
    // cid is a number Settee made, not user input.
    let timed = try pairedWrites(
      repetitions: runs, prepare: { _ in () },
      settee: { _ in try collection.ensureIndexed(["name", "age", "pet"], name: "bench") },
      cleanUp: { try collection.deleteIndex(named: "bench") },
      prepareBaseline: { _ in () }
    ) { _ in
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
    } cleanUpBaseline: {
      try pool.write { db in try db.execute(sql: "DROP TABLE bench_baseline") }
    }
    return BenchResult(name: "index build, 3 fields, arrays", n: count, timed, target: 2)
  }
}
