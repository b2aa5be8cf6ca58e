import ArgumentParser
import Settee
import SetteeCore

struct GetCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "get", abstract: "Print a document as JSON.")

  @OptionGroup var local: GlobalOptions
  @ParentCommand var root: SetteeCommand
  var options: GlobalOptions { local.merged(with: root.options) }
  @Argument(help: "The document id.") var id: String

  func run() throws {
    let collection = try options.openCollection(readOnly: true)
    guard let document = try collection.getRevision(id) else {
      throw SetteeError(
        .notFound, "missing: no document \(JSON.string(id)) in \(JSON.string(collection.name))",
        documentID: id)
    }
    if document.isDeleted {
      throw SetteeError(
        .notFound, "deleted: document \(JSON.string(id)) was deleted at revision \(document.rev!)",
        documentID: id)
    }
    Console.outJSON(.object(document.json))
  }
}

struct PutCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "put",
    abstract: "Create or update a document.",
    discussion:
      "Updating an existing document needs its current \"_rev\" (or --upsert); a document without \"_id\" gets a new one. Prints {\"ok\":true,\"id\":…,\"rev\":…}."
  )

  @OptionGroup var local: GlobalOptions
  @ParentCommand var root: SetteeCommand
  var options: GlobalOptions { local.merged(with: root.options) }
  @Argument(help: "The document as JSON, or - to read it from standard input.") var json: String
  @Flag(help: "Create or replace whatever revision is current, without naming one (an upsert).")
  var upsert = false

  func run() throws {
    // The input is checked before the database is opened: bad input touches no file.
    let limits = Database.Configuration().limits
    let value = try parseJSONArgument(json, maxDepth: limits.maxNestingDepth)
    let document = try Document(validating: value, limits: limits)
    let collection = try options.openCollection(readOnly: false)
    let result = try upsert ? collection.upsert(document.json) : collection.put(document)
    Console.outJSON(result.couchJSON)
  }
}

struct DeleteCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "delete", abstract: "Delete a document (it leaves a tombstone revision).")

  @OptionGroup var local: GlobalOptions
  @ParentCommand var root: SetteeCommand
  var options: GlobalOptions { local.merged(with: root.options) }
  @Argument(help: "The document id.") var id: String
  @Option(help: "The document's current revision.") var rev: String

  func run() throws {
    let revision = try RevisionID(parsing: rev)
    try Document.validateID(id)
    let result = try options.openCollection(readOnly: false).delete(id, rev: revision)
    Console.outJSON(result.couchJSON)
  }
}

struct ChangesCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "changes",
    abstract: "Print the changes feed (CouchDB's _changes shape).")

  @OptionGroup var local: GlobalOptions
  @ParentCommand var root: SetteeCommand
  var options: GlobalOptions { local.merged(with: root.options) }
  @Option(help: "Only changes after this sequence number.") var since: Int64 = 0
  @Option(help: "The most changes to print (0 for all).") var limit: Int = 0

  func run() throws {
    let collection = try options.openCollection(readOnly: true)
    let changes = try collection.changes(since: since, limit: limit == 0 ? nil : limit)
    let results: [JSON] = changes.map { change in
      var entry: JSONObject = [
        "seq": .int(change.seq), "id": .string(change.id),
        "changes": [["rev": .string(change.rev.description)]],
      ]
      if change.isDeleted { entry["deleted"] = true }
      return .object(entry)
    }
    let lastSeq = changes.last?.seq ?? since
    Console.outJSON(["results": .array(results), "last_seq": .int(lastSeq)])
  }
}

extension WriteResult {
  /// `{"ok":true,"id":…,"rev":…}`, as CouchDB answers a write.
  var couchJSON: JSON {
    ["ok": true, "id": .string(id), "rev": .string(rev.description)]
  }
}

extension JSON {
  /// A string as a JSON literal, for quoting user input in messages.
  static func string(_ text: String) -> String { JSONWriter.string(.string(text)) }
}
