import Foundation
import GRDB
import SetteeCore
import Synchronization

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

  let writer: any DatabaseWriter
  public let configuration: Configuration
  /// Collection ids by name (its UTF-8 bytes: Swift's `String` equality would make two
  /// spellings of "é" one key, while SQLite keeps them apart). A collection keeps its id
  /// for the life of the file (there is no way to drop one), so ids found once are kept.
  private let collectionIDs = Mutex<[[UInt8]: Int64]>([:])
  /// The collections' index lists.
  let indexCatalog = IndexCatalog()
  /// The file's path; `nil` for an in-memory database.
  public let path: String?

  /// Opens (creating if needed) the database file at `path`.
  ///
  /// - Throws: ``SetteeError`` with code `storage` when the file cannot be opened or is
  ///   not a Settee database.
  public init(path: String, configuration: Configuration = Configuration()) throws {
    self.path = path
    self.configuration = configuration
    writer = try SetteeError.wrapping("cannot open database at \(path)") {
      try DatabasePool(path: path, configuration: Database.grdbConfiguration(configuration))
    }
    try migrate()
  }

  /// A new, empty database that lives in memory until the value is released.
  public init(inMemoryWith configuration: Configuration = Configuration()) throws {
    self.path = nil
    self.configuration = configuration
    writer = try SetteeError.wrapping("cannot create an in-memory database") {
      try DatabaseQueue(configuration: Database.grdbConfiguration(configuration))
    }
    try migrate()
  }

  /// The collection named `name`; it is created by its first write.
  public func collection(_ name: String = Database.defaultCollectionName) -> DocumentCollection {
    DocumentCollection(database: self, name: name)
  }

  /// The names of the collections that have been written to, sorted.
  public func collectionNames() throws -> [String] {
    try read { db in try String.fetchAll(db, sql: "SELECT name FROM collections ORDER BY name") }
  }

  private func migrate() throws {
    try SetteeError.wrapping("cannot prepare the database schema") {
      try Schema.migrator.migrate(writer)
    }
  }

  private static func grdbConfiguration(_ configuration: Configuration) -> GRDB.Configuration {
    var grdb = GRDB.Configuration()
    grdb.busyMode = .timeout(configuration.busyTimeout)
    grdb.maximumReaderCount = configuration.maximumReaderCount
    grdb.foreignKeysEnabled = false
    let fullSync = configuration.fullSync
    grdb.prepareDatabase { db in
      try db.execute(sql: fullSync ? "PRAGMA synchronous = FULL" : "PRAGMA synchronous = NORMAL")
      SQLFunctions.register(in: db)
    }
    return grdb
  }

  // MARK: - Access

  /// Runs `body` in a write transaction; SQLite errors become ``SetteeError``s.
  func write<T>(_ body: (SQLConnection) throws -> T) throws -> T {
    try SetteeError.wrapping("write failed") { try writer.write(body) }
  }

  /// Runs `body` in a read transaction (one consistent snapshot).
  func read<T>(_ body: (SQLConnection) throws -> T) throws -> T {
    try SetteeError.wrapping("read failed") { try writer.read(body) }
  }

  func write<T: Sendable>(_ body: @escaping @Sendable (SQLConnection) throws -> T) async throws
    -> T
  {
    do { return try await writer.write(body) } catch {
      throw SetteeError.from(error, "write failed")
    }
  }

  func read<T: Sendable>(_ body: @escaping @Sendable (SQLConnection) throws -> T) async throws -> T
  {
    do { return try await writer.read(body) } catch { throw SetteeError.from(error, "read failed") }
  }
}

extension SetteeError {
  /// Converts any error to a ``SetteeError``: ours pass through, SQLite's become `storage`.
  static func from(_ error: any Error, _ context: String) -> SetteeError {
    if let error = error as? SetteeError { return error }
    if let error = error as? DatabaseError {
      return SetteeError(.storage, context, cause: error.message ?? "\(error.resultCode)")
    }
    return SetteeError(.storage, context, cause: "\(error)")
  }

  static func wrapping<T>(_ context: String, _ body: () throws -> T) throws -> T {
    do { return try body() } catch { throw from(error, context) }
  }
}

extension Database {
  /// The id of the collection named `name`, or `nil` if it has never been written to.
  func collectionID(_ db: SQLConnection, _ name: String) throws -> Int64? {
    let key = Array(name.utf8)
    if let known = collectionIDs.withLock({ $0[key] }) { return known }
    guard let cid = try DocumentReader.collectionID(db, name) else { return nil }
    collectionIDs.withLock { $0[key] = cid }
    return cid
  }

  /// Runs SQLite's `PRAGMA integrity_check` and returns the problems it finds (none: `[]`).
  public func checkIntegrity() throws -> [String] {
    let messages = try read { db in try String.fetchAll(db, sql: "PRAGMA integrity_check") }
    return messages == ["ok"] ? [] : messages
  }
}
