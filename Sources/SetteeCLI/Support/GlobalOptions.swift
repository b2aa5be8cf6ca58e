import Foundation
import ArgumentParser
import Settee
import SetteeCore

/// The options every command that opens a database takes.
package struct GlobalOptions: ParsableArguments {
  package init() {}

  @Option(name: .long, help: "The database file (default: ./settee.db).")
  package var db: String?

  @Option(name: .long, help: "The collection to use (default: _default).")
  package var collection: String?

  @Option(
    name: .long,
    help: ArgumentHelp(
      "How long a write waits for another process's write lock, in seconds (default: 10).",
      valueName: "seconds"))
  package var busyTimeout: Double?

  @Option(
    name: .long,
    help: ArgumentHelp(
      "The longest a query may run, in seconds (default: 60; 0 for no limit).",
      valueName: "seconds"))
  package var queryTimeLimit: Double?

  package var databasePath: String { db ?? "./settee.db" }
  package var collectionName: String { collection ?? Database.defaultCollectionName }

  /// These options, with any the parent command was given filling the gaps.
  package func merged(with parent: GlobalOptions) -> GlobalOptions {
    var merged = self
    merged.db = db ?? parent.db
    merged.collection = collection ?? parent.collection
    merged.busyTimeout = busyTimeout ?? parent.busyTimeout
    merged.queryTimeLimit = queryTimeLimit ?? parent.queryTimeLimit
    return merged
  }

  /// Opens the database: for writing (creating it if needed) or, for commands that only
  /// read, read-only, so that they write nothing and work on read-only files and mounts;
  /// a command reads on one thread, so a read-only open makes one connection. What design
  /// documents' JavaScript logs goes to standard error (`log: _design/d: message`, where
  /// CouchDB writes it to its log) unless `logsJavaScript` is false.
  package func openDatabase(readOnly: Bool, logsJavaScript: Bool = true) throws -> Database {
    var configuration = Database.Configuration(readOnly: readOnly)
    if logsJavaScript {
      configuration.javaScriptLog = { design, message in
        FileHandle.standardError.write(Data("log: \(design): \(message)\n".utf8))
      }
    }
    if readOnly { configuration.maximumReaderCount = 1 }
    if let busyTimeout {
      let most = Database.Configuration.maxBusyTimeout
      guard busyTimeout.isFinite, (0...most).contains(busyTimeout) else {
        throw SetteeError(
          .invalidArgument,
          "--busy-timeout must be a number of seconds from 0 to \(Int(most)), not \(busyTimeout)")
      }
      configuration.busyTimeout = busyTimeout
    }
    if let queryTimeLimit {
      guard queryTimeLimit.isFinite, queryTimeLimit >= 0 else {
        throw SetteeError(
          .invalidArgument,
          "--query-time-limit must be a number of seconds (0 for no limit), not \(queryTimeLimit)")
      }
      configuration.queryTimeLimit = queryTimeLimit == 0 ? nil : queryTimeLimit
    }
    return try Database(path: databasePath, configuration: configuration)
  }

  package func openCollection(readOnly: Bool) throws -> DocumentCollection {
    try openDatabase(readOnly: readOnly).collection(collectionName)
  }
}
