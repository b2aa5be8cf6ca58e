import Foundation
import GRDB
import SetteeCore
import SetteeTestSupport
import Testing

@testable import Settee

/// Opening a path: Settee files for reading and writing, read-only opens that write
/// nothing, and files that are not Settee's, refused untouched.
@Suite("Database files")
struct DatabaseFileTests {
  let directory = TemporaryDirectory()

  func bytes(_ path: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: path)) }

  func exists(_ path: String) -> Bool { FileManager.default.fileExists(atPath: path) }

  /// The defaults docs/limits-and-safety.md states, as they take effect: every connection
  /// waits 10 s for a lock (SQLite's own busy timeout, on the writer and on a reader), and
  /// a query runs under a 60 s budget.
  @Test func theDefaultsAreTenSecondsBusyAndSixtySecondsAQuery() throws {
    let database = try Database(path: directory.path("defaults.db"))
    #expect(database.configuration.busyTimeout == 10)
    #expect(database.configuration.queryTimeLimit == 60)
    let writerWaits = try database.write { db in try Int.fetchOne(db, sql: "PRAGMA busy_timeout") }
    let readerWaits = try database.read { db in try Int.fetchOne(db, sql: "PRAGMA busy_timeout") }
    #expect(writerWaits == 10_000 && readerWaits == 10_000)
    let left = try database.query { _ in QueryBudget.remainingSeconds }
    #expect(left.map { (59...60).contains($0) } == true, "\(String(describing: left))")
    #expect(QueryBudget.remainingSeconds == nil, "the budget ends with its query")
  }

  @Test func aReadOnlyOpenCreatesNothing() throws {
    let path = directory.path("missing.db")
    expectError(.notFound) { _ = try Database(path: path, configuration: .init(readOnly: true)) }
    #expect(!exists(path) && !exists(path + "-wal"))
  }

  /// A pool, and the single connection a read-only open makes for one reader.
  @Test(arguments: [5, 1])
  func aReadOnlyOpenReadsAndWritesNothing(readers: Int) throws {
    let path = directory.path("people-\(readers).db")
    do {
      let people = try Database(path: path).collection("people")
      try people.put(["_id": "mike", "age": 12, "job": "doctor"])
      try people.ensureIndexed(["age"], name: "age")
      try people.ensureIndexed(["job"], name: "jobs", type: .text)
    }
    let before = try bytes(path)
    let db = try Database(
      path: path, configuration: .init(maximumReaderCount: readers, readOnly: true))
    let people = db.collection("people")
    #expect(try people.get("mike")?["age"] == 12)
    #expect(try people.find(["age": 12]).map(\.id) == ["mike"])
    #expect(try people.changes().count == 1)
    #expect(try people.indexes().map(\.name) == ["age", "jobs"])
    #expect(db.isTextSearchEnabled)
    let search = FindQuery(selector: try SelectorParser.parse(["$text": ["$search": "doctor"]]))
    #expect(try people.find(search).map(\.id) == ["mike"])
    #expect(try db.collectionNames() == ["people"])
    var exported = 0
    try people.exportDocuments { _ in exported += 1 }
    #expect(exported == 1)
    expectError(.readOnly) { try people.put(["_id": "fred"]) }
    expectError(.readOnly) { try people.ensureIndexed(["name"], name: "name") }
    expectError(.readOnly) { try db.collection("other").put(["_id": "x"]) }
    #expect(try bytes(path) == before)
    // A commit by another writer afterwards is seen by the next read.
    try Database(path: path).collection("people").put(["_id": "fred", "age": 12])
    #expect(try people.find(["age": 12]).map(\.id) == ["fred", "mike"])
  }

  @Test func aSQLiteFileOfAnotherApplicationIsRefusedUntouched() throws {
    let path = directory.path("other.db")
    do {
      let queue = try DatabaseQueue(path: path)
      try queue.write { db in
        try db.execute(sql: "CREATE TABLE notes (text TEXT); INSERT INTO notes VALUES ('hi')")
      }
    }
    let before = try bytes(path)
    for readOnly in [false, true] {
      let error = expectError(.notSetteeDatabase) {
        _ = try Database(path: path, configuration: .init(readOnly: readOnly))
      }
      #expect(error?.message.contains("\"notes\"") == true)
    }
    #expect(try bytes(path) == before)
    #expect(!exists(path + "-wal"))
  }

  @Test(arguments: [Data(repeating: 0x42, count: 8192), Data("hello\n".utf8)])
  func aFileThatIsNotSQLiteIsRefusedUntouched(_ content: Data) throws {
    let path = directory.path("garbage.db")
    try content.write(to: URL(fileURLWithPath: path))
    for readOnly in [false, true] {
      expectError(.notSetteeDatabase) {
        _ = try Database(path: path, configuration: .init(readOnly: readOnly))
      }
    }
    #expect(try bytes(path) == content)
  }

  @Test func anEmptyFileBecomesADatabaseOnlyWhenWritten() throws {
    let path = directory.path("empty.db")
    #expect(FileManager.default.createFile(atPath: path, contents: Data()))
    expectError(.notFound) { _ = try Database(path: path, configuration: .init(readOnly: true)) }
    try Database(path: path).collection().put(["_id": "a"])
    #expect(
      try Database(path: path, configuration: .init(readOnly: true)).collection().count() == 1)
  }

  /// `Configuration.fullSync` must hold on every connection: GRDB turns WAL on after
  /// `prepareDatabase`, and sets `synchronous = NORMAL` on the writer as it does.
  @Test(arguments: [true, false])
  func theConfiguredSynchronousLevelHoldsOnEveryConnection(_ fullSync: Bool) throws {
    let path = directory.path("sync-\(fullSync).db")
    let db = try Database(
      path: path, configuration: .init(fullSync: fullSync, maximumReaderCount: 4))
    try db.collection().put(["_id": "a"])
    let expected = fullSync ? 2 : 1
    let writerLevel = try db.writer.writeWithoutTransaction { db in
      try Int.fetchOne(db, sql: "PRAGMA synchronous")
    }
    #expect(writerLevel == expected)
    // Four readers at once, so that the pool opens four connections.
    let levels = Guarded<[Int]>([])
    let started = DispatchSemaphore(value: 0)
    let release = DispatchSemaphore(value: 0)
    let group = DispatchGroup()
    for _ in 0..<4 {
      group.enter()
      Thread {
        let level = try? db.writer.read { db -> Int? in
          started.signal()
          release.wait()
          return try Int.fetchOne(db, sql: "PRAGMA synchronous")
        }
        levels.mutate { $0.append(level ?? -1) }
        group.leave()
      }.start()
    }
    for _ in 0..<4 { started.wait() }
    for _ in 0..<4 { release.signal() }
    group.wait()
    #expect(levels.value == Array(repeating: expected, count: 4))
  }

  /// A write that waits longer than the busy timeout for another connection's write lock
  /// fails with a typed `busy` error and writes nothing.
  @Test func aWriteBlockedPastTheBusyTimeoutIsBusy() throws {
    let path = directory.path("busy.db")
    let holder = try Database(path: path)
    try holder.collection().put(["_id": "a"])
    let waiter = try Database(path: path, configuration: .init(busyTimeout: 0.2))
    let done = holder.holdWriteLock(for: 1.5)
    let start = Date()
    let error = expectError(.busy) { try waiter.collection().put(["_id": "b"]) }
    #expect(Date().timeIntervalSince(start) < 1.4)
    #expect(error?.message.contains("busy timeout") == true)
    done.wait()
    #expect(try waiter.collection().get("b") == nil)
    try waiter.collection().put(["_id": "b"])
  }

  /// Reads never wait for writers (docs/limits-and-safety.md, "Locks"): with another
  /// connection holding the write lock until the reads are done (or a minute passes),
  /// every kind of read answers, and the writer's transaction is still open afterwards.
  /// Had a read waited, it would have answered only once the minute was up, after the
  /// transaction ended, and the last expectation would fail: no clock is read.
  @Test func readsNeverWaitForAWriter() throws {
    let path = directory.path("readers.db")
    let holder = try Database(path: path)
    let people = holder.collection("people")
    try people.putAll((0..<20).map { ["_id": .string("p\($0)"), "age": .int(Int64($0))] })
    try people.ensureIndexed(["age"], name: "age")
    let byAge = try people.view("byAge", version: "1") { doc, emit in emit(doc["age"] ?? nil, nil) }
    _ = try byAge.query()
    let reader = try Database(path: path).collection("people")
    let release = DispatchSemaphore(value: 0)
    let done = holder.holdWriteLock(until: release, atMost: 60)
    #expect(try reader.get("p3")?.json["age"] == 3)
    #expect(try reader.count() == 20)
    let found = try reader.find(
      FindQuery(selector: try SelectorParser.parse(["age": ["$gte": 15]])))
    #expect(found.count == 5)
    #expect(try reader.allDocuments(ViewQuery(limit: 3)).rows.count == 3)
    #expect(try reader.changes(since: 0).count == 20)
    // A view that is current answers from its rows without the write lock.
    let view = try Database(path: path).collection("people").view("byAge", version: "1") {
      doc, emit in emit(doc["age"] ?? nil, nil)
    }
    #expect(try view.query(ViewQuery(limit: 2)).rows.count == 2)
    #expect(done.wait(timeout: .now()) == .timedOut, "the writer's transaction ended first")
    release.signal()
    done.wait()
  }

  /// Queries send documents holding U+0000 to the matcher only in collections that have
  /// held one (`holds_nul`), which every connection and an upgraded file agree on.
  @Test func collectionsRememberHoldingNUL() throws {
    let path = directory.path("nul.db")
    let db = try Database(path: path)
    let plain = db.collection("plain")
    let odd = db.collection("odd")
    try plain.put(["_id": "a", "t": "y"])
    try odd.put(["_id": "a", "t": "y"])
    let query = FindQuery(selector: try SelectorParser.parse(["t": ["$gt": "y"]]))
    #expect(!(try plain.explain(query).sql.contains("settee_match")))
    // Written through another Database value: the flag is read from the file.
    try Database(path: path).collection("odd").put(["_id": "b", "t": "y\u{0}z"])
    #expect(try odd.explain(query).sql.contains("settee_match"))
    #expect(try odd.find(query).map(\.id) == ["b"])
    #expect(!(try plain.explain(query).sql.contains("settee_match")))

    // A file from before the flag: the upgrade finds the documents that need it.
    try db.writer.writeWithoutTransaction { db in
      try db.execute(
        sql: """
          ALTER TABLE collections DROP COLUMN holds_nul;
          DELETE FROM grdb_migrations WHERE identifier = 'v4-holds-nul';
          """)
    }
    expectError(.readOnly) { _ = try Database(path: path, configuration: .init(readOnly: true)) }
    let upgraded = try Database(path: path).collection("odd")
    #expect(try upgraded.find(query).map(\.id) == ["b"])
    #expect(try upgraded.explain(query).sql.contains("settee_match"))
  }

  /// A file from before a migration that only drops what readers never use (the index on
  /// revisions) opens read-only as it is, and is upgraded by the next write open.
  @Test func readOnlyOpenAcceptsFilesMissingOnlyReaderOptionalMigrations() throws {
    let path = directory.path("old.db")
    try Database(path: path).collection().put(["_id": "a", "n": 1])
    let db = try Database(path: path)
    try db.writer.writeWithoutTransaction { db in
      try db.execute(
        sql: """
          CREATE INDEX documents_by_rev ON documents(cid, rev);
          DELETE FROM grdb_migrations WHERE identifier = 'v9-no-rev-index';
          """)
    }
    let reader = try Database(path: path, configuration: .init(readOnly: true))
    #expect(try reader.collection().get("a")?.body["n"] == 1)
    _ = try Database(path: path)
    let indexes = try db.writer.read { db in
      try String.fetchAll(db, sql: "SELECT name FROM sqlite_schema WHERE type = 'index'")
    }
    #expect(!indexes.contains("documents_by_rev"))
  }
}
