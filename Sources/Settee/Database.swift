import Foundation
import GRDB
import SetteeCore

typealias SQLConnection = GRDB.Database

/// A Settee database: one SQLite file (in WAL mode: readers run beside one writer) or an
/// in-memory database, holding any number of named collections of JSON documents.
///
/// ```swift
/// let db = try Database(path: "people.db")
/// let people = db.collection("people")
/// let result = try people.put(["_id": "mike", "name": "mike", "age": 12])
/// let mike = try people.get("mike")
/// ```
public final class Database: Sendable {
  /// The name of the collection used when none is given.
  public static let defaultCollectionName = "_default"

  package let writer: any DatabaseWriter
  /// `writer` when it is a pool (a file), whose readers are opened read-only: reads run
  /// there in transactions of Settee's own (see ``read(_:)``).
  let pool: DatabasePool?
  /// The threads the async forms read on, taking readers from `pool`.
  let readerLanes: ReaderLanes
  /// The connections the async forms' brief reads use on the calling thread; `nil` for a
  /// database in memory or opened read-only, whose brief reads take a lane as others do.
  let briefReaders: BriefReaders?
  /// The settings the database was opened with.
  public let configuration: Configuration
  /// Collection ids by name (its UTF-8 bytes: Swift's `String` equality would make two
  /// spellings of "é" one key, while SQLite keeps them apart). A committed collection keeps
  /// its id for the life of the file (there is no way to drop one), so ids read from
  /// committed state are kept (``SQLConnection/readsCommittedState``).
  private let collectionIDs = Locked<[[UInt8]: Int64]>([:])
  /// The catalog of the collections' JSON and text indexes (the secondary-index
  /// registry's, ``SecondaryIndexes``).
  let indexCatalog = IndexCatalog()
  /// What each face keeps for the life of this value (its caches and registries), made by
  /// the face on first use: the database names no face.
  let faceStates = FaceStates()
  /// What faces in other modules keep for the life of this value (``PackageFaceStates``).
  package let packageFaceStates = PackageFaceStates()
  /// This value's epoch token: the first write it makes to a collection records the
  /// sequence number it starts at under this token, so that sequence strings given out
  /// (``DocumentCollection/sequenceString(_:)-53hlp``) tell this file's history apart from a
  /// restored copy's (see ``DocumentCollection/sequence(since:)-12uo7``).
  /// The collections whose epoch under ``instanceToken`` is committed.
  let recordedEpochs = Locked<Set<Int64>>([])
  let instanceToken: String = {
    var random = SystemRandomNumberGenerator()
    return String(random.next(), radix: 16) + String(random.next() & 0xFFFF, radix: 16)
  }()
  /// The collections' change counts, kept for `changeCount(since:)`.
  let changeCounts = ChangeCounts()
  /// Tells observers (live queries, the continuous changes feed) about commits.
  let changeMonitor: ChangeMonitor

  /// How many live queries and changes feeds are observing this database now.
  package var liveObserverCount: Int { changeMonitor.observerCount }
  /// The file's path; `nil` for an in-memory database.
  public let path: String?

  /// Opens the database file at `path`: for reading and writing (creating it if needed),
  /// or, with ``Configuration/readOnly``, for reading only, writing nothing to the file.
  ///
  /// A file that exists but is not a Settee database (another application's SQLite
  /// database, or not SQLite at all) is refused and left untouched.
  ///
  /// - Throws: ``SetteeError`` with code `invalidArgument` for an empty path or settings
  ///   out of range, `notSetteeDatabase` for such a file, `notFound`
  ///   when a read-only open finds no database, `readOnly` when the file cannot be
  ///   written, `corruption` when it is damaged, `io` or `storage` for other failures.
  public init(path: String, configuration: Configuration = Configuration()) throws {
    try configuration.validate()
    guard !path.isEmpty else {
      // SQLite would open a private temporary database for an empty name.
      throw SetteeError(
        .invalidArgument,
        "a database path cannot be empty (Database(inMemoryWith:) makes a database in memory)")
    }
    self.path = path
    self.configuration = configuration
    readerLanes = ReaderLanes(count: configuration.maximumReaderCount)
    briefReaders =
      configuration.readOnly
      ? nil
      : BriefReaders(
        path: path, configuration: Database.grdbConfiguration(configuration),
        limit: min(
          configuration.maximumReaderCount, ProcessInfo.processInfo.activeProcessorCount))
    changeMonitor = ChangeMonitor(
      interval: configuration.observationInterval, pollsOtherWriters: true)
    if configuration.readOnly {
      // One reader of a read-only file needs one connection, not a pool's two.
      writer = try DatabaseFile.openSetteeReadOnly(
        path, configuration: Database.grdbConfiguration(configuration),
        queue: configuration.maximumReaderCount == 1)
      pool = writer as? DatabasePool
      changeMonitor.attach(writer)
    } else {
      _ = try DatabaseFile.inspect(path, configuration: configuration)
      let pool = try SetteeError.wrapping("cannot open database at \(path)") {
        try Self.openPool(path, configuration: configuration)
      }
      (writer, self.pool) = (pool, pool)
      changeMonitor.attach(writer)
      try migrate()
      // GRDB sets `synchronous = NORMAL` on the writer when it turns WAL on, after
      // `prepareDatabase` ran: the configured level is set again here.
      let level = configuration.synchronousLevel
      try SetteeError.wrapping("cannot configure database at \(path)") {
        try writer.writeWithoutTransaction { db in
          try db.execute(sql: "PRAGMA synchronous = \(level)")
        }
      }
    }
  }

  /// The pool of a writable file. Turning a new file to WAL while another process does the
  /// same can fail at once with `SQLITE_BUSY` (SQLite calls no busy handler there), so
  /// that is tried again until the busy timeout has passed.
  private static func openPool(_ path: String, configuration: Configuration) throws
    -> DatabasePool
  {
    let deadline = ContinuousClock.now + .seconds(configuration.busyTimeout)
    while true {
      do {
        return try DatabasePool(path: path, configuration: grdbConfiguration(configuration))
      } catch let error as DatabaseError
        where error.resultCode == .SQLITE_BUSY && ContinuousClock.now < deadline
      {
        Thread.sleep(forTimeInterval: 0.005)
      }
    }
  }

  /// A new, empty database that lives in memory until the value is released.
  public init(inMemoryWith configuration: Configuration = Configuration()) throws {
    try configuration.validate()
    self.path = nil
    self.configuration = configuration
    readerLanes = ReaderLanes(count: 1)
    briefReaders = nil
    // Nothing else can write an in-memory database: no polling.
    changeMonitor = ChangeMonitor(
      interval: configuration.observationInterval, pollsOtherWriters: false)
    writer = try SetteeError.wrapping("cannot create an in-memory database") {
      try DatabaseQueue(configuration: Database.grdbConfiguration(configuration))
    }
    pool = nil
    changeMonitor.attach(writer)
    try migrate()
  }

  /// The collection named `name`; it is created by its first write.
  public func collection(_ name: String = Database.defaultCollectionName) -> DocumentCollection {
    DocumentCollection(database: self, name: name)
  }

  /// The names of the collections that have been written to, sorted.
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func collectionNames() throws -> [String] {
    try read { db in
      try String.fetchAll(db, sql: "SELECT name FROM collections WHERE NOT dropped ORDER BY name")
    }
  }

  /// Runs the schema's missing migrations. GRDB reads which are missing outside the
  /// transactions it runs them in, so two processes (or values) opening a new file at once
  /// both try the first: the second one's fails and rolls back whole (its record in
  /// `grdb_migrations` included). It is then tried again from what is recorded, for as
  /// long as the other opener makes progress.
  private func migrate() throws {
    try SetteeError.wrapping("cannot prepare the database schema") {
      var applied = -1
      while true {
        do {
          try Schema.migrator.migrate(writer)
          return
        } catch let error as DatabaseError {
          let now = try writer.read { try Schema.migrator.appliedIdentifiers($0).count }
          guard now > applied else { throw error }
          applied = now
        }
      }
    }
  }

  static func grdbConfiguration(_ configuration: Configuration) -> GRDB.Configuration {
    var grdb = GRDB.Configuration()
    grdb.busyMode = .timeout(configuration.busyTimeout)
    grdb.maximumReaderCount = configuration.maximumReaderCount
    grdb.foreignKeysEnabled = false
    grdb.readonly = configuration.readOnly
    let level = configuration.synchronousLevel
    grdb.prepareDatabase { db in
      try db.execute(sql: "PRAGMA synchronous = \(level)")
      SQLFunctions.register(in: db)
      QueryBudget.install(on: db, configuration: configuration)
    }
    return grdb
  }

  // MARK: - Access

  /// Runs `body` in a write transaction; SQLite errors become ``SetteeError``s.
  ///
  /// From inside another write's closure (an import's progress callback), it fails with
  /// `invalidArgument` rather than re-entering the writer.
  func write<T>(_ body: (SQLConnection) throws -> T) throws -> T {
    try checkWritable()
    defer { changeMonitor.didCommit() }
    return try wrapping("write failed") {
      if let db = ThreadAccess.lentWriter {
        var result: T?
        try db.inTransaction {
          result = try ThreadAccess.inside(.write) { try body(db) }
          return .commit
        }
        return result!
      }
      return try writer.write { db in try ThreadAccess.inside(.write) { try body(db) } }
    }
  }

  /// The async form of ``write(_:)``.
  func write<T: Sendable>(_ body: @escaping @Sendable (SQLConnection) throws -> T) async throws
    -> T
  {
    try checkWritable()
    return try await withConnection(.writing) { try self.write(body) }
  }

  /// Runs `body` with the writer connection outside any transaction (it opens its own,
  /// as an import does for each batch), under the same rules as ``write(_:)``. Errors
  /// are passed through as they are.
  func writeWithoutTransaction<T>(_ body: (SQLConnection) throws -> T) throws -> T {
    try checkWritable()
    defer { changeMonitor.didCommit() }
    if let db = ThreadAccess.lentWriter { return try ThreadAccess.inside(.write) { try body(db) } }
    return try writer.writeWithoutTransaction { db in
      try ThreadAccess.inside(.write) { try body(db) }
    }
  }

  /// Runs `body` in a read transaction (one consistent snapshot).
  ///
  /// Called from inside another access's closure (a streaming `find`'s), it runs on that
  /// access's connection, in its transaction, so it sees the same snapshot (or, inside a
  /// write, the write's own changes).
  ///
  /// On a file, the transaction is begun and ended with statements kept prepared: GRDB's
  /// `read` prepares `BEGIN` and `COMMIT` anew each time (a third of a small indexed
  /// query). Its readers are opened read-only, so SQLite refuses a write there as GRDB's
  /// read would. An in-memory database's single connection keeps GRDB's `read`, which
  /// also makes the connection refuse writes for the duration.
  func read<T>(_ body: (SQLConnection) throws -> T) throws -> T {
    try wrapping("read failed") {
      switch ThreadAccess.current {
      case .read, .write: return try writer.unsafeReentrantRead(body)
      case .lent:
        if let db = ThreadAccess.lentConnection?.db {
          return try db.inReadTransaction { try ThreadAccess.inside(.read) { try body(db) } }
        }
      case .none: break
      }
      guard let pool else {
        return try writer.read { db in try ThreadAccess.inside(.read) { try body(db) } }
      }
      return try pool.unsafeRead { db in
        try db.inReadTransaction { try ThreadAccess.inside(.read) { try body(db) } }
      }
    }
  }

  /// The async form of ``read(_:)``.
  func read<T: Sendable>(_ body: @escaping @Sendable (SQLConnection) throws -> T) async throws -> T
  {
    try await withConnection(.reading) { try self.read(body) }
  }

  /// The async form of ``read(_:)`` for a brief read: a few rows by key
  /// (``ConnectionUse/brief``).
  func briefRead<T: Sendable>(_ body: @escaping @Sendable (SQLConnection) throws -> T)
    async throws -> T
  {
    try await withConnection(.brief) { try self.read(body) }
  }

  /// Runs a query of any face in a read transaction (``read(_:)``) under the time budget
  /// of ``Configuration/queryTimeLimit`` (see ``QueryBudget``).
  func query<T>(_ body: (SQLConnection) throws -> T) throws -> T {
    let limit = configuration.queryTimeLimit
    return try read { db in try QueryBudget.within(limit) { try body(db) } }
  }

  /// The async form of ``query(_:)``.
  func query<T: Sendable>(_ body: @escaping @Sendable (SQLConnection) throws -> T) async throws
    -> T
  {
    try await withConnection(.reading) { try self.query(body) }
  }

  /// The async form of ``query(_:)`` for a query that is usually brief
  /// (``ConnectionUse/tentative``): `body` may run twice.
  func tentativeQuery<T: Sendable>(_ body: @escaping @Sendable (SQLConnection) throws -> T)
    async throws -> T
  {
    try await withConnection(.tentative) { try self.query(body) }
  }
}

extension Database {
  /// Refuses a write to a database opened read-only, or one made from inside another
  /// write's callback, before it reaches SQLite (or GRDB, which traps on reentrance).
  func checkWritable() throws {
    if configuration.readOnly {
      throw SetteeError(
        .readOnly,
        "the database at \(path ?? ":memory:") was opened read-only (Configuration.readOnly): it cannot be written"
      )
    }
    if ThreadAccess.current == .write {
      throw SetteeError(
        .invalidArgument,
        "a write cannot run from inside another write's callback (such as an import's progress closure): make it after that call returns"
      )
    }
  }

  /// Runs `body`, turning its errors into ``SetteeError``s (but for a caller's own).
  func wrapping<T>(_ context: String, _ body: () throws -> T) throws -> T {
    do { return try body() } catch let error as CallerError { throw error } catch {
      throw SetteeError.from(error, context, busyTimeout: configuration.busyTimeout)
    }
  }
}

/// An error thrown by the caller's own closure (a streaming `find`'s body, an export's
/// output): carried past Settee's conversion of errors, and thrown back to the caller as
/// it was thrown.
struct CallerError: Error {
  let error: any Error

  /// Runs the caller's closure, marking what it throws as the caller's.
  static func marking<T>(_ body: () throws -> T) throws -> T {
    // The caller's time is not the query's (QueryBudget).
    let result: T
    do { result = try QueryBudget.paused(body) } catch { throw CallerError(error: error) }
    // An async form's task cancelled while the caller's closure ran: stop here. Rows read
    // before the cancellation would otherwise still come (an interrupt reaches only a
    // running statement, and the progress handler looks only every thousand steps).
    if QueryBudget.cancelled { throw CancellationError() }
    return result
  }

  /// Runs `body`, throwing a caller's error as the caller threw it.
  static func unmarking<T>(_ body: () throws -> T) throws -> T {
    do { return try body() } catch let error as CallerError { throw error.error }
  }
}

extension Database {
  /// The id of the collection named `name`, or `nil` if it has never been written to.
  func collectionID(_ db: SQLConnection, _ name: String) throws -> Int64? {
    let key = Array(name.utf8)
    if let known = collectionIDs.withLock({ $0[key] }) { return known }
    guard let cid = try DocumentReader.collectionID(db, name) else { return nil }
    // A collection created by a write that has not committed may still roll back, and its
    // id then go to another collection.
    if db.readsCommittedState { collectionIDs.withLock { $0[key] = cid } }
    return cid
  }

  /// Runs SQLite's `PRAGMA integrity_check` and returns the problems it finds (none: `[]`).
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func checkIntegrity() throws -> [String] {
    let messages = try read { db in try String.fetchAll(db, sql: "PRAGMA integrity_check") }
    return messages == ["ok"] ? [] : messages
  }
}

// The async twins: the same calls without blocking the caller's thread.
extension Database {
  /// The names of the collections, without blocking the caller's thread.
  public func collectionNames() async throws -> [String] {
    try await withConnection(.reading) { try self.collectionNames() }
  }

  /// SQLite's integrity check alone, without blocking the caller's thread.
  public func checkIntegrity() async throws -> [String] {
    try await withConnection(.reading) { try self.checkIntegrity() }
  }
}
