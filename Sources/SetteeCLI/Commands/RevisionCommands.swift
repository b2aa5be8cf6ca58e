import ArgumentParser
import Foundation
import Settee
import SetteeCore

struct ConflictsCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "conflicts",
    abstract: "List the conflicted documents: those with more than one live leaf.",
    discussion:
      #"Prints {"count":N,"ids":[…]} (in id order), read from an index of them. With --leaves, each id comes with its leaves: {"count":N,"documents":[{"id":…,"leaves":[{…}, …]}]}, the winner first."#
  )

  @OptionGroup var local: GlobalOptions
  @ParentCommand var root: SetteeCommand
  var options: GlobalOptions { local.merged(with: root.options) }
  @Flag(help: "Print every live leaf of each conflicted document with its body.") var leaves = false

  func run() throws {
    let collection = try options.openCollection(readOnly: true)
    let ids = try collection.conflictedDocumentIDs()
    guard leaves else {
      Console.outJSON(["count": .int(Int64(ids.count)), "ids": .array(ids.map { .string($0) })])
      return
    }
    var documents: [JSON] = []
    for id in ids {
      let live = try collection.leaves(of: id).filter { !$0.isDeleted }
      documents.append(["id": .string(id), "leaves": .array(live.map { .object($0.json) })])
    }
    Console.outJSON(["count": .int(Int64(ids.count)), "documents": .array(documents)])
  }
}

struct ResolveCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "resolve",
    abstract: "Resolve a conflicted document: keep one leaf or write a merged body.",
    discussion:
      #"--keep REV keeps that live leaf; --merge JSON writes the body as a new revision of the winner. Every other live leaf is deleted in the same transaction. Prints {"ok":true,"id":…,"rev":…} (the only live leaf now), or {"ok":true,"id":…,"resolved":false} when the document had nothing to resolve."#
  )

  @OptionGroup var local: GlobalOptions
  @ParentCommand var root: SetteeCommand
  var options: GlobalOptions { local.merged(with: root.options) }
  @Argument(help: "The document id.") var id: String
  @Option(help: "The live leaf revision to keep.") var keep: String?
  @Option(help: "A merged body as JSON (or - to read it from standard input).") var merge: String?

  func validate() throws {
    guard (keep == nil) != (merge == nil) else {
      throw ValidationError("give exactly one of --keep REV and --merge JSON")
    }
  }

  func run() throws {
    let resolution: ConflictResolution
    if let keep {
      resolution = .keep(try RevisionID(parsing: keep))
    } else {
      let limits = Database.Configuration().limits
      guard case .object(let body) = try parseJSONArgument(merge!, maxDepth: limits.maxNestingDepth)
      else {
        throw SetteeError(.invalidDocument, "--merge takes a JSON object")
      }
      resolution = .merged(body)
    }
    try Document.validateID(id)
    let collection = try options.openCollection(readOnly: false)
    if let result = try collection.resolveConflicts(of: id, { _ in resolution }) {
      Console.outJSON(result.couchJSON)
    } else {
      Console.outJSON(["ok": true, "id": .string(id), "resolved": false])
    }
  }
}

struct RevsLimitCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "revs-limit",
    abstract: "Print or set how many revisions of each branch the collection keeps.",
    discussion:
      #"Without a value prints the limit (1000 until set, as CouchDB's _revs_limit); with one sets it and prints {"ok":true}. Longer histories are stemmed by their next write; leaves, and so winners, always stay."#
  )

  @OptionGroup var local: GlobalOptions
  @ParentCommand var root: SetteeCommand
  var options: GlobalOptions { local.merged(with: root.options) }
  @Argument(help: "The new limit (1 or more).") var limit: Int?

  func run() throws {
    guard let limit else {
      Console.outJSON(.int(Int64(try options.openCollection(readOnly: true).revsLimit())))
      return
    }
    try options.openCollection(readOnly: false).setRevsLimit(limit)
    Console.outJSON(["ok": true])
  }
}

struct LocalCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "local",
    abstract: "Read and write local documents (_local/…): never replicated, listed or queried.",
    subcommands: [
      LocalGetCommand.self, LocalPutCommand.self, LocalDeleteCommand.self, LocalListCommand.self,
    ])
}

struct LocalGetCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "get", abstract: "Print a local document (not_found when there is none).")

  @OptionGroup var local: GlobalOptions
  @ParentCommand var root: SetteeCommand
  @Argument(help: "The id, _local/<name> or the name alone.") var id: String

  func run() throws {
    let collection = try local.merged(with: root.options).openCollection(readOnly: true)
    guard let document = try collection.localDocument(id) else {
      throw SetteeError(.notFound, "missing: no local document \(JSON.string(id))", documentID: id)
    }
    Console.outJSON(.object(document.json))
  }
}

struct LocalPutCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "put",
    abstract: "Write a local document (its revision is the given \"_rev\" 0-N plus one).",
    discussion: #"Prints {"ok":true,"id":"_local/…","rev":"0-N"}."#)

  @OptionGroup var local: GlobalOptions
  @ParentCommand var root: SetteeCommand
  @Argument(help: "The document as JSON with \"_id\", or - to read it from standard input.")
  var json: String

  func run() throws {
    let limits = Database.Configuration().limits
    guard case .object(let object) = try parseJSONArgument(json, maxDepth: limits.maxNestingDepth)
    else {
      throw SetteeError(.invalidDocument, "a local document is a JSON object")
    }
    let stored = try local.merged(with: root.options).openCollection(readOnly: false)
      .putLocal(object)
    Console.outJSON(["ok": true, "id": .string(stored.id), "rev": .string(stored.rev)])
  }
}

struct LocalDeleteCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "delete", abstract: "Remove a local document.")

  @OptionGroup var local: GlobalOptions
  @ParentCommand var root: SetteeCommand
  @Argument(help: "The id, _local/<name> or the name alone.") var id: String
  @Option(help: "Its revision, 0-N (accepted and ignored, as CouchDB does).") var rev: String?

  func run() throws {
    try local.merged(with: root.options).openCollection(readOnly: false).deleteLocal(id, rev: rev)
    Console.outJSON(["ok": true, "id": .string(id), "rev": "0-0"])
  }
}

struct LocalListCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "list",
    abstract: "List the local documents (CouchDB's _local_docs shape).",
    discussion:
      #"Prints {"rows":[{"id":…,"key":…,"value":{"rev":…}},…]}; --include-docs adds "doc"."#)

  @OptionGroup var local: GlobalOptions
  @ParentCommand var root: SetteeCommand
  @Flag(help: "Add each document.") var includeDocs = false

  func run() throws {
    let documents = try local.merged(with: root.options).openCollection(readOnly: true)
      .localDocuments()
    Console.outJSON([
      "rows": .array(
        documents.map { document in
          var row: JSONObject = [
            "id": .string(document.id), "key": .string(document.id),
            "value": ["rev": .string(document.rev)],
          ]
          if includeDocs { row["doc"] = .object(document.json) }
          return .object(row)
        })
    ])
  }
}

struct BackupCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "backup",
    abstract: "Copy the database, as one consistent snapshot, into a new file.",
    discussion:
      "Other processes may read and write meanwhile. A restored copy is told apart from the original by replication (sequence tokens), so peers do not skip changes. Prints {\"ok\":true}."
  )

  @OptionGroup var local: GlobalOptions
  @ParentCommand var root: SetteeCommand
  @Argument(help: "The new file (it must not exist).") var target: String

  func run() throws {
    try local.merged(with: root.options).openDatabase(readOnly: true).backup(to: target)
    Console.outJSON(["ok": true])
  }
}

struct RevsDiffCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "revs-diff",
    abstract: "Which of a peer's revisions the collection lacks (CouchDB's _revs_diff).",
    discussion:
      #"Takes {"id":["rev",…],…} and prints {"id":{"missing":[…],"possible_ancestors":[…]},…} for the documents with anything missing."#
  )

  @OptionGroup var local: GlobalOptions
  @ParentCommand var root: SetteeCommand
  @Argument(help: "The revisions by document id as JSON, or - to read them from standard input.")
  var json: String

  func run() throws {
    let asked = try PurgeCommand.revisionsByID(json, "revs-diff")
    let answer = try local.merged(with: root.options).openCollection(readOnly: true)
      .revsDiff(asked)
    Console.outJSON(
      .object(JSONObject(answer.sorted { $0.key < $1.key }.map { ($0.key, $0.value.json) })))
  }
}

struct CompactCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "compact",
    abstract: "Clear the bodies and attachments replaced revisions keep (CouchDB's _compact).",
    discussion:
      #"Until then `get --rev` reads an older revision whole. Prints {"ok":true,"cleared":N}, N the replaced revisions cleared. Between compactions a collection keeps at most about as many replaced bodies as it has documents (at least 1,000)."#
  )

  @OptionGroup var local: GlobalOptions
  @ParentCommand var root: SetteeCommand
  var options: GlobalOptions { local.merged(with: root.options) }

  func run() throws {
    let cleared = try options.openCollection(readOnly: false).compact()
    Console.outJSON(["ok": true, "cleared": .int(Int64(cleared))])
  }
}

struct PurgeCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "purge",
    abstract: "Remove leaf revisions for good (CouchDB's _purge; no tombstone, not replicated).",
    discussion:
      #"Takes {"id":["rev",…],…} and prints {"purge_seq":N,"purged":{"id":["rev",…]}}. A document left without leaves disappears from the changes feed and every index."#
  )

  @OptionGroup var local: GlobalOptions
  @ParentCommand var root: SetteeCommand
  @Argument(help: "The revisions by document id as JSON, or - to read them from standard input.")
  var json: String

  /// `{"id": ["rev", …], …}` read from an argument (or standard input).
  static func revisionsByID(_ json: String, _ command: String) throws -> [String: [RevisionID]] {
    let limits = Database.Configuration().limits
    guard case .object(let object) = try parseJSONArgument(json, maxDepth: limits.maxNestingDepth)
    else {
      throw SetteeError(.invalidArgument, "\(command) takes an object of revision lists by id")
    }
    var asked: [String: [RevisionID]] = [:]
    for member in object {
      guard case .array(let revs) = member.value else {
        throw SetteeError(
          .invalidArgument,
          "\(command) lists revisions in an array for \(JSON.string(member.key))")
      }
      asked[member.key] = try revs.map { rev in
        guard case .string(let text) = rev else {
          throw SetteeError(.invalidArgument, "\(command) lists revisions as strings")
        }
        return try RevisionID(parsing: text)
      }
    }
    return asked
  }

  func run() throws {
    let asked = try Self.revisionsByID(json, "purge")
    let collection = try local.merged(with: root.options).openCollection(readOnly: false)
    let purged = try collection.purge(asked)
    Console.outJSON([
      "purge_seq": .int(try collection.purgeSequence()),
      "purged": .object(
        JSONObject(
          purged.sorted { $0.key < $1.key }.map {
            ($0.key, .array($0.value.map { .string($0.description) }))
          })),
    ])
  }
}
