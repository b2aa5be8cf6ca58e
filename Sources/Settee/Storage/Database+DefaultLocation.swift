import Foundation
import SetteeCore

extension Database {
  /// The file an app's database lives in when it names none (NTJsonStore's default store):
  /// `name` in the platform's place for an app's own data, created if missing.
  ///
  /// - Apple platforms: a folder named by the app's bundle identifier (`settee` without one)
  ///   in its Application Support directory (in a sandboxed app, its container's). Not
  ///   Caches, where NTJsonStore put it: the system may empty Caches, and a database must
  ///   never lose data.
  /// - Linux and others: `$XDG_DATA_HOME/settee`, or `~/.local/share/settee` (the XDG
  ///   base directory rule).
  ///
  /// - Throws: ``SetteeError`` with code `invalidArgument` for an empty name or one with a
  ///   `/`, `io` when the directory cannot be made.
  public static func defaultPath(named name: String = "settee.db") throws -> String {
    guard !name.isEmpty, !name.contains("/"), name != ".", name != ".." else {
      throw SetteeError(
        .invalidArgument, "a default database's name is a file name, not \(JSON.string(name))")
    }
    let directory: URL
    #if canImport(Darwin)
      let support = try SetteeError.wrapping("cannot find the Application Support directory") {
        try FileManager.default.url(
          for: .applicationSupportDirectory, in: .userDomainMask, appropriateFor: nil,
          create: true)
      }
      // Apple's rule: an app's files in a folder named by its bundle identifier.
      directory = support.appendingPathComponent(Bundle.main.bundleIdentifier ?? "settee")
    #else
      let environment = ProcessInfo.processInfo.environment
      if let data = environment["XDG_DATA_HOME"], data.hasPrefix("/") {
        directory = URL(fileURLWithPath: data).appendingPathComponent("settee")
      } else {
        directory = FileManager.default.homeDirectoryForCurrentUser
          .appendingPathComponent(".local/share/settee")
      }
    #endif
    do {
      try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    } catch {
      throw SetteeError(
        .io, "cannot make the directory \(directory.path) for the default database",
        cause: "\(error)", underlyingError: error)
    }
    return directory.appendingPathComponent(name).path
  }

  /// Opens (or creates) the database at ``defaultPath(named:)``.
  ///
  /// ```swift
  /// let db = try Database(named: "notes.db")   // ~/Library/Application Support/notes.db, …
  /// ```
  public convenience init(named name: String, configuration: Configuration = Configuration())
    throws
  {
    try self.init(path: Database.defaultPath(named: name), configuration: configuration)
  }
}
