import Foundation
import SetteeCLI
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
///
/// `@unchecked Sendable`: a suite goes from the command's task to the thread that runs its
/// synchronous workloads and back (``run(_:)``), used by one of them at a time; its log
/// closure writes to standard error.
struct BenchSuite: @unchecked Sendable {
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
    "sorted", "views", "value-index", "live", "revisions", "where",
  ]

  init(path: String, documents: Int, quick: Bool, log: @escaping (String) -> Void) throws {
    self.path = path
    count = documents
    self.quick = quick
    self.log = log
    database = try Settee.Database(path: path)
    // The baselines read and write Settee's tables by hand (collections, documents,
    // indexes, ix_…): they are written for one schema.
    guard Settee.Database.schemaVersion == BenchSuite.schemaVersion else {
      throw SetteeError(
        .storage,
        "the benchmark's hand-written baselines were written for schema \(BenchSuite.schemaVersion), and this build's is \(Settee.Database.schemaVersion): update them (BenchSuite) before measuring"
      )
    }
    pool = try DatabasePool(path: path)
    // The baseline commits as durably as Settee does (Configuration.fullSync): GRDB's WAL
    // set-up leaves its writer at NORMAL, which skips the fsync a FULL commit makes.
    let level = database.configuration.synchronousLevel
    try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = \(level)") }
    people = data.people(documents)
  }

  /// The schema the baselines' SQL is written for (`Database.schemaVersion`).
  static let schemaVersion = "v20-kept-bodies"

  var repetitions: Int { quick ? 1 : 5 }

  /// Runs the chosen workloads in their order: the synchronous ones on a thread of their
  /// own (timed off Swift's cooperative threads), the live queries' as async work.
  static func run(_ suite: BenchSuite) async throws -> [BenchResult] {
    var (results, suite) = try await onOwnThread {
      var copy = suite
      return (try copy.runBeforeLiveQueries(), copy)
    }
    if suite.wanted("live") {
      for result in try await suite.liveQueries() {
        suite.report(result)
        results.append(result)
      }
    }
    let afterLive = suite
    results += try await onOwnThread {
      var copy = afterLive
      return try copy.runAfterLiveQueries()
    }
    return results
  }

  func wanted(_ key: String) -> Bool { only?.contains(key) ?? true }

  func report(_ result: BenchResult) {
    Measure.returnFreedMemory()
    log(
      String(
        format: "  %@ (n=%d): %.4f s vs %.4f s", result.name, result.n, result.settee,
        result.baseline))
  }

  private mutating func runBeforeLiveQueries() throws -> [BenchResult] {
    var results: [BenchResult] = []
    func add(_ result: BenchResult) {
      report(result)
      results.append(result)
    }
    log("preparing \(count) documents…")
    try load("people", people)
    let main = database.collection("people")
    try main.ensureIndexed(["docNumber"], name: "num")
    try main.ensureIndexed(["name", "age", "pet"], name: "nap")
    let cid = try collectionID("people")

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
    return results
  }

  /// The workloads after the live queries.
  private mutating func runAfterLiveQueries() throws -> [BenchResult] {
    var results: [BenchResult] = []
    func add(_ result: BenchResult) {
      report(result)
      results.append(result)
    }
    let main = database.collection("people")
    let cid = try collectionID("people")
    // Before `where`: its triggers on `documents` call functions that only Settee's
    // connections have, which the baselines' hand-written inserts would then meet.
    if wanted("revisions") {
      for result in try graftedInsert() { add(result) }
      add(try revsDiff(main, cid))
      add(try attachmentRoundTrip())
    }
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
        + pad("ratio", 8) + pad("range", 11)
        + pad("target", 8) + pad("seed iPhone5 s", 16)
    ]
    for result in results {
      lines.append(
        pad(result.name, 32, left: true) + pad(String(result.n), 9)
          + pad(String(format: "%.5f", result.settee), 11)
          + pad(result.baseline > 0 ? String(format: "%.5f", result.baseline) : "-", 12)
          + pad(result.baseline > 0 ? String(format: "%.2f", result.ratio) : "-", 8)
          + pad(
            result.ratios.map { String(format: "%.2f-%.2f", $0.lowerBound, $0.upperBound) } ?? "",
            11)
          + pad(
            result.target.map { String(format: "<= %.1f", $0) }
              ?? result.limit.map { String(format: "<%.0f ms", $0 * 1000) } ?? "", 8)
          + pad(result.seed.map { String(format: "%.1f", $0) } ?? "", 16))
    }
    return lines.joined(separator: "\n") + "\n"
  }
}
