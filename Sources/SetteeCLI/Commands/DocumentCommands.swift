import ArgumentParser
import Foundation
import Settee
import SetteeCore

struct GetCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "get", abstract: "Print a document as JSON.",
    discussion:
      #"With --rev, any leaf revision (a losing one of a conflicted document too), or a replaced one until compaction. --revs adds "_revisions", --revs-info "_revs_info", --conflicts "_conflicts", --deleted-conflicts "_deleted_conflicts" (CouchDB's GET /{db}/{docid}). --open-revs all (or a JSON array of revisions) prints CouchDB's open_revs answer: [{"ok":{…}} or {"missing":rev}, …]."#
  )

  @OptionGroup var local: GlobalOptions
  @ParentCommand var root: SetteeCommand
  var options: GlobalOptions { local.merged(with: root.options) }
  @Argument(help: "The document id.") var id: String
  @Option(
    help:
      "The revision to read: the winner by default, any leaf, or a replaced one until compaction.")
  var rev: String?
  @Flag(help: "Add the revision's ancestry, \"_revisions\".") var revs = false
  @Flag(help: "Add each ancestor's status, \"_revs_info\".") var revsInfo = false
  @Flag(help: "Add the other live leaves, \"_conflicts\".") var conflicts = false
  @Flag(help: "Add the other deleted leaves, \"_deleted_conflicts\".")
  var deletedConflicts = false
  @Flag(help: "--conflicts, --deleted-conflicts and --revs-info together.") var meta = false
  @Option(help: "all, or a JSON array of revisions: print those leaves (CouchDB's open_revs).")
  var openRevs: String?
  @Flag(help: "With --open-revs: an ancestor answers with the leaves descending from it.")
  var latest = false
  @Flag(help: "Give attachments' data (base64) instead of stubs.") var attachments = false
  @Option(help: "A JSON array of revisions: data only for attachments written after them.")
  var attsSince: String?

  func run() throws {
    let revision = try rev.map { try RevisionID(parsing: $0) }
    let asked = try openRevs.map { try Self.parseRevisions($0, "--open-revs", allowsAll: true) }
    let since = try attsSince.map { try Self.parseRevisions($0, "--atts-since", allowsAll: false) }
    let readOptions = RevisionReadOptions(
      rev: revision, revs: revs, revsInfo: revsInfo || meta, conflicts: conflicts || meta,
      deletedConflicts: deletedConflicts || meta, attachments: attachments,
      attachmentsSince: (since ?? nil) ?? [])
    let collection = try options.openCollection(readOnly: true)
    if let asked {
      let answers = try collection.openRevisions(
        id, asked, latest: latest, options: readOptions)
      Console.outJSON(.array(answers.map { .object($0.json) }))
      return
    }
    if let document = try collection.document(id, readOptions) {
      Console.outJSON(.object(document))
      return
    }
    guard let winner = try collection.getRevision(id) else {
      throw SetteeError(
        .notFound, "missing: no document \(JSON.string(id)) in \(JSON.string(collection.name))",
        documentID: id)
    }
    if let revision {
      throw SetteeError(
        .notFound,
        "missing: document \(JSON.string(id)) has no revision \(revision) with a body (leaves keep theirs, replaced revisions until compaction)",
        documentID: id)
    }
    throw SetteeError(
      .notFound, "deleted: document \(JSON.string(id)) was deleted at revision \(winner.rev!)",
      documentID: id)
  }

  /// A JSON array of revisions, or `all` (nil: every leaf) where it is allowed.
  static func parseRevisions(_ text: String, _ option: String, allowsAll: Bool) throws
    -> [RevisionID]?
  {
    if allowsAll && text == "all" { return nil }
    guard case .array(let items) = try JSONParser.parse(text) else {
      throw SetteeError(
        .invalidArgument,
        "\(option) takes \(allowsAll ? "all or " : "")a JSON array of revisions, not \(text)")
    }
    return try items.map { item in
      guard case .string(let rev) = item else {
        throw SetteeError(.invalidArgument, "\(option) lists revisions as strings")
      }
      return try RevisionID(parsing: rev)
    }
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
  @Option(
    help:
      "false: store the document's own _rev (and _revisions ancestry) as a peer sent it, as CouchDB's new_edits=false does."
  )
  var newEdits = true

  func validate() throws {
    if upsert && !newEdits {
      throw ValidationError("--upsert and --new-edits=false exclude each other")
    }
  }

  func run() throws {
    // The input is checked before the database is opened: bad input touches no file.
    let limits = Database.Configuration().limits
    let value = try parseJSONArgument(json, maxDepth: limits.maxNestingDepth)
    if !newEdits {
      _ = try Document.replicated(validating: value, limits: limits)
      guard case .object(let object) = value else { return }
      Console.outJSON(
        try options.openCollection(readOnly: false).put(object, newEdits: false).couchJSON)
      return
    }
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

struct ChangesCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "changes",
    abstract: "Print the changes feed (CouchDB's _changes shape).",
    discussion:
      #"--feed normal (the default) prints {"results":[…],"last_seq":N}. --feed continuous prints one JSON line per change, {"seq":N,"id":…,"changes":[{"rev":…}]}, the existing ones and then each new one as it is committed (by any process), until interrupted. --feed longpoll waits for the first change after --since (at most --timeout milliseconds) and prints it as the normal feed does."#
  )

  enum Feed: String, ExpressibleByArgument {
    case normal, continuous, longpoll
  }

  enum Style: String, ExpressibleByArgument {
    case mainOnly = "main_only"
    case allDocs = "all_docs"
  }

  @OptionGroup var local: GlobalOptions
  @ParentCommand var root: SetteeCommand
  var options: GlobalOptions { local.merged(with: root.options) }
  @Option(help: "Only changes after this sequence number.") var since: Int64 = 0
  @Option(help: "The most changes to print (0 for all).") var limit: Int = 0
  @Option(help: "normal, continuous or longpoll.") var feed: Feed = .normal
  @Option(help: "For longpoll: how long to wait for a change, in milliseconds.")
  var timeout: Int = 60_000
  @Option(help: "main_only (the winning revision) or all_docs (every leaf, the winner first).")
  var style: Style = .mainOnly

  func validate() throws {
    guard limit >= 0 else { throw ValidationError("--limit must be 0 or more") }
    guard timeout >= 0 else { throw ValidationError("--timeout must be 0 or more") }
  }

  func run() async throws {
    let collection = try options.openCollection(readOnly: true)
    switch feed {
    case .normal:
      print(try await collection.changes(since: since, limit: limit == 0 ? nil : limit))
    case .longpoll:
      print(
        try await collection.waitForChanges(
          since: since, timeout: Double(timeout) / 1000, limit: limit == 0 ? nil : limit))
    case .continuous:
      var printed = 0
      for try await change in collection.changesFeed(since: since) {
        Console.outJSON(change.couchJSON(allLeaves: style == .allDocs))
        printed += 1
        if limit > 0 && printed >= limit { break }
      }
    }
  }

  private func print(_ changes: [Change]) {
    let lastSeq = changes.last?.seq ?? since
    Console.outJSON([
      "results": .array(changes.map { $0.couchJSON(allLeaves: style == .allDocs) }),
      "last_seq": .int(lastSeq),
    ])
  }
}

extension Change {
  /// CouchDB's shape of one change: `{"seq", "id", "changes": [{"rev"}], "deleted"}`;
  /// with `allLeaves` (`style=all_docs`), `changes` lists every leaf, the winner first.
  func couchJSON(allLeaves: Bool = false) -> JSON {
    let revs = allLeaves ? leaves : [rev]
    var entry: JSONObject = [
      "seq": .int(seq), "id": .string(id),
      "changes": .array(revs.map { ["rev": .string($0.description)] }),
    ]
    if isDeleted { entry["deleted"] = true }
    return .object(entry)
  }
}

/// Runs synchronous work on a thread of its own and awaits its result: an async command's
/// long blocking work (the benchmark's timed workloads) stays off Swift's cooperative
/// threads, which the async work beside it needs, and no task waits on a semaphore.
package func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws
  -> T
{
  try await withCheckedThrowingContinuation { continuation in
    Thread { continuation.resume(with: Result { try body() }) }.start()
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
