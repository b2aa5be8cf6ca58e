import Foundation
import GRDB
import SetteeCore

/// What is at a database path before Settee opens it, and how a file is opened for reading
/// only.
///
/// Opening a SQLite file with GRDB's pool turns it to WAL and adds tables; a file that is
/// not Settee's must be refused before that happens, and a read must not write at all.
enum DatabaseFile {
  enum State: Equatable {
    /// No file (or an empty one): a write creates the database.
    case missing
    /// A SQLite database without any table yet.
    case empty
    /// A Settee database.
    case settee
  }

  /// The tables every Settee database has.
  static let setteeTables: Set<String> = ["collections", "documents", "revisions"]

  /// Looks at the file at `path` without writing to it.
  ///
  /// - Throws: ``SetteeError`` with code `notSetteeDatabase` when the file is not a SQLite
  ///   database or holds another application's tables, `io` when it cannot be read.
  static func inspect(_ path: String, configuration: Database.Configuration) throws -> State {
    if try isMissingOrNotSQLite(path) { return .missing }
    // A bare read-only connection: the look needs none of Settee's SQL functions or pragmas.
    var probeConfiguration = GRDB.Configuration()
    probeConfiguration.readonly = true
    probeConfiguration.busyMode = .timeout(configuration.busyTimeout)
    let tables = try SetteeError.wrapping("cannot read database at \(path)") {
      try openReadOnly(path, configuration: probeConfiguration, queue: true).tables
    }
    return try state(path, tables: tables)
  }

  /// Whether there is no database at `path` (no file, or an empty one without a
  /// write-ahead log); throws when the file is not SQLite at all.
  private static func isMissingOrNotSQLite(_ path: String) throws -> Bool {
    var info = stat()
    guard stat(path, &info) == 0 else {
      if errno == ENOENT { return true }
      throw SetteeError(.io, "cannot open database at \(path): \(String(cString: strerror(errno)))")
    }
    if (info.st_mode & S_IFMT) == S_IFDIR {
      throw SetteeError(.io, "cannot open database at \(path): it is a directory")
    }
    if info.st_size == 0 && walSize(path) == 0 { return true }
    if info.st_size > 0 {
      let header = try readHeader(path)
      guard header.elementsEqual(Array("SQLite format 3\0".utf8)) else {
        throw SetteeError(
          .notSetteeDatabase,
          "\(path) is not a Settee database: it is not a SQLite file; Settee left it untouched")
      }
    }
    return false
  }

  /// What a SQLite file holding these tables is; throws for another application's.
  private static func state(_ path: String, tables: [String]) throws -> State {
    // GRDB's migrations table alone: another opener is creating the file right now (its
    // migrator records itself before Settee's tables commit), so this one migrates too,
    // under the same lock, and finds the work done (an opener refused such a file as
    // another application's under load).
    if tables.isEmpty || tables == ["grdb_migrations"] { return .empty }
    if setteeTables.isSubset(of: tables) { return .settee }
    let shown = tables.sorted().prefix(5).map { JSONWriter.string(.string($0)) }
    throw SetteeError(
      .notSetteeDatabase,
      "\(path) is not a Settee database: it is a SQLite database with other tables (\(shown.joined(separator: ", "))\(tables.count > 5 ? ", …" : "")); Settee left it untouched"
    )
  }

  /// Opens the Settee file at `path` for reading only. A read-only open writes nothing, so
  /// the file is looked at through the connections that then serve the reads (a separate
  /// look first cost a connection and a reading of the schema: a tenth of `settee find`).
  ///
  /// - Parameter queue: one connection for everything, rather than a pool (whose writer
  ///   connection a read-only open never writes through).
  /// - Throws: as ``inspect(_:configuration:)``, `notFound` when there is no Settee
  ///   database to read, `readOnly` when it needs migrations.
  static func openSetteeReadOnly(
    _ path: String, configuration: GRDB.Configuration, queue: Bool = false
  ) throws -> any DatabaseWriter {
    func notFound() -> SetteeError {
      SetteeError(
        .notFound,
        "no Settee database at \(path): opened read-only, nothing creates one (a write such as put or import does)"
      )
    }
    if try isMissingOrNotSQLite(path) { throw notFound() }
    let (writer, tables) = try SetteeError.wrapping("cannot read database at \(path)") {
      try openReadOnly(path, configuration: configuration, queue: queue)
    }
    guard try state(path, tables: tables) == .settee else { throw notFound() }
    try checkMigrated(writer, path: path)
    return writer
  }

  /// Opens a SQLite file for reading only; returns it with the names of its tables.
  ///
  /// SQLite reads a WAL database through its `-shm` file, which it must create when it is
  /// missing; in a directory the process cannot write, with no `-wal` file (so no write is
  /// pending and no writer is at work), the file is opened as immutable instead.
  ///
  /// - Parameter queue: a single connection rather than a pool (for a quick look).
  static func openReadOnly(_ path: String, configuration: GRDB.Configuration, queue: Bool = false)
    throws -> (writer: any DatabaseWriter, tables: [String])
  {
    func open(_ location: String) throws -> (writer: any DatabaseWriter, tables: [String]) {
      let writer: any DatabaseWriter =
        queue
        ? try DatabaseQueue(path: location, configuration: configuration)
        : try DatabasePool(path: location, configuration: configuration)
      let tables = try writer.read { db in
        try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table'")
      }
      return (writer, tables)
    }
    do {
      return try open(path)
    } catch let error as DatabaseError
      where error.resultCode == .SQLITE_READONLY || error.resultCode == .SQLITE_CANTOPEN
    {
      guard walSize(path) == 0 else {
        throw SetteeError(
          .readOnly,
          "cannot read \(path): its directory cannot be written and it has a write-ahead log (\(path)-wal) that SQLite cannot read without its -shm file; open it once where it can be written",
          cause: error.message, underlyingError: error)
      }
      return try open(immutableURI(path))
    }
  }

  /// Throws unless every migration of ``Schema`` has run on the file (a read-only open
  /// cannot run them).
  static func checkMigrated(_ writer: any DatabaseWriter, path: String) throws {
    let migrated = try SetteeError.wrapping("cannot read database at \(path)") {
      try writer.read { db in
        let applied = try Schema.migrator.appliedIdentifiers(db)
        return Set(Schema.migrator.migrations).subtracting(applied)
          .isSubset(of: Schema.readerOptional)
      }
    }
    guard migrated else {
      throw SetteeError(
        .readOnly,
        "the database at \(path) was written by an earlier version of Settee and must be upgraded, which a read-only open cannot do: open it once for writing"
      )
    }
  }

  /// `file:PATH?immutable=1`, with the characters a URI gives meaning to escaped.
  static func immutableURI(_ path: String) -> String {
    var escaped = ""
    for character in path.unicodeScalars {
      switch character {
      case "%": escaped += "%25"
      case "?": escaped += "%3f"
      case "#": escaped += "%23"
      default: escaped.unicodeScalars.append(character)
      }
    }
    return "file:\(escaped)?immutable=1"
  }

  /// The size of the `-wal` file beside `path` (0 when there is none).
  static func walSize(_ path: String) -> Int {
    var info = stat()
    return stat(path + "-wal", &info) == 0 ? Int(info.st_size) : 0
  }

  static func readHeader(_ path: String) throws -> [UInt8] {
    let descriptor = open(path, O_RDONLY)
    guard descriptor >= 0 else {
      let reason = String(cString: strerror(errno))
      throw SetteeError(
        .io, "cannot open database at \(path): \(reason)")
    }
    defer { close(descriptor) }
    var header = [UInt8](repeating: 0, count: 16)
    let count = header.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, 16) }
    return Array(header.prefix(max(count, 0)))
  }
}

extension Database {
  /// Whether a database is at `path`: not for a missing file, nor for an empty one (which
  /// a write would make a database), as every read-only open answers `notFound` for both.
  package static func exists(atPath path: String) throws -> Bool {
    try DatabaseFile.inspect(path, configuration: Configuration()) != .missing
  }
}
