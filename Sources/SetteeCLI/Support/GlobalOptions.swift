import ArgumentParser
import Settee

/// The options every command that opens a database takes.
struct GlobalOptions: ParsableArguments {
  @Option(name: .long, help: "The database file (default: ./settee.db).")
  var db: String?

  @Option(name: .long, help: "The collection to use (default: _default).")
  var collection: String?

  var databasePath: String { db ?? "./settee.db" }
  var collectionName: String { collection ?? Database.defaultCollectionName }

  /// These options, with any the parent command was given filling the gaps.
  func merged(with parent: GlobalOptions) -> GlobalOptions {
    var merged = self
    merged.db = db ?? parent.db
    merged.collection = collection ?? parent.collection
    return merged
  }

  func openDatabase() throws -> Database {
    try Database(path: databasePath)
  }

  func openCollection() throws -> DocumentCollection {
    try openDatabase().collection(collectionName)
  }
}
