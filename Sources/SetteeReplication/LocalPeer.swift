import Settee
import SetteeJavaScript
import SetteeCore

/// A collection of a Settee file as a replication peer: the engine's own calls (its async
/// forms), no HTTP.
struct LocalPeer: ReplicationPeer {
  let collection: DocumentCollection
  /// The filter's selector, parsed once by the replicator (a source's; `nil` without one).
  let selector: Selector?
  /// The target's `validate_doc_update` functions, compiled once per state of its design
  /// documents.
  private let validations = DesignValidationCache()

  /// A peer for `collection`, filtering by `selector` when it is a source with one.
  init(collection: DocumentCollection, selector: Selector? = nil) {
    self.collection = collection
    self.selector = selector
  }

  var label: String { Self.label(of: collection) }
  var bulkGetCounts: BulkGetCounts { BulkGetCounts() }

  /// How errors and progress name a collection: `FILE#COLLECTION`.
  static func label(of collection: DocumentCollection) -> String {
    "\(collection.database.path ?? "memory")#\(collection.name)"
  }

  func identity() async throws -> String {
    "settee:\(try await collection.database.uuid())/\(collection.name)"
  }

  func exists() async throws -> Bool {
    try await collection.database.collectionExists(collection.name)
  }

  func create() async throws {
    if try await !exists() { try await collection.database.createCollection(collection.name) }
  }

  func localDocument(_ id: String) async throws -> JSONObject? {
    try await collection.localDocument(id)?.json
  }

  func putLocalDocument(_ document: JSONObject) async throws {
    _ = try await collection.putLocal(document)
  }

  func changes(since: JSON, limit: Int, filter: ReplicationFilter, wait: Duration?)
    async throws -> ChangesPage
  {
    var after = try await sequence(since)
    var rows: [ChangeRow] = []
    var kept: [Change] = []
    var feedEnded = false
    // Filtered: read on until `limit` changes pass, or the feed ends.
    while kept.count < limit {
      var page = try await collection.changes(since: after, limit: limit)
      if page.isEmpty, let wait, kept.isEmpty {
        page = try await collection.waitForChanges(
          since: after, timeout: Double(wait.components.seconds), limit: limit)
      }
      guard let last = page.last else {
        feedEnded = true
        break
      }
      kept += try await passing(page, filter)
      after = last.seq
      if page.count < limit {
        feedEnded = true
        break
      }
    }
    let strings = try await collection.sequenceStrings(kept.map(\.seq) + [after])
    for (change, seq) in zip(kept, strings) {
      rows.append(
        ChangeRow(
          id: change.id, seq: .string(seq), revs: change.leaves, deleted: change.isDeleted))
    }
    // Exact, and cheap from page to page (the engine counts from the last count).
    let pending = feedEnded ? 0 : try await collection.changeCount(since: after)
    return ChangesPage(rows: rows, lastSeq: .string(strings.last!), pending: pending)
  }

  /// Where a peer's sequence (a string, a number or `0`) continues in this collection.
  private func sequence(_ since: JSON) async throws -> Int64 {
    switch since {
    case .string(let text): return try await collection.sequence(since: text)
    case .int(let number): return try await collection.sequence(since: String(number))
    default: return 0
    }
  }

  private func passing(_ changes: [Change], _ filter: ReplicationFilter) async throws -> [Change] {
    switch filter {
    case .none: return changes
    case .documentIDs(let ids):
      let wanted = Set(ids)
      return changes.filter { wanted.contains($0.id) }
    case .selector(let json):
      let selector = try selector ?? FindQuery(json: ["selector": .object(json)]).selector
      let live = changes.filter { !$0.isDeleted }
      var documents: [String: JSON] = [:]
      for document in try await collection.get(live.map(\.id)) {
        if let document { documents[document.id] = .object(document.json) }
      }
      return try live.filter { change in
        try documents[change.id].map { try Matcher.matches(selector, $0) } ?? false
      }
    case .design(let name, let parameters):
      // Run here, on JavaScriptCore, as CouchDB runs a source's filter: every change, a
      // deleted document as its tombstone, the parameters as req.query.
      let filter = try await collection.designFilter(
        named: name, view: parameters["view"]?.stringValue,
        timeLimit: DesignFunctions.defaultTimeLimit)
      var documents: [String: JSON] = [:]
      for document in try await collection.get(changes.filter { !$0.isDeleted }.map(\.id)) {
        if let document { documents[document.id] = .object(document.json) }
      }
      let given: [JSON] = changes.map { $0.filtered(documents[$0.id]) }
      // The replication runs as the file's owner: an administrator.
      let kept = try await filter.keeps(
        given,
        request: FilterRequest(
          database: collection.name, query: parameters, user: .administrator))
      return zip(changes, kept).filter(\.1).map(\.0)
    }
  }

  func revsDiff(_ offered: [String: [RevisionID]]) async throws -> [String: RevisionDifference] {
    try await collection.revsDiff(offered)
  }

  func documents(_ wanted: [WantedRevisions], withData: Bool) async throws -> [BulkDocument] {
    let requests = wanted.map { item in
      RevisionsRequest(
        item.id, item.revs,
        options: RevisionReadOptions(
          revs: true, attachments: withData,
          attachmentsSince: withData ? item.attachmentsSince : []))
    }
    // As text (a plain revision is copied from its stored body): passed on as it is to a
    // server, read into its stored form only by a file target (``prepare(_:)``).
    var documents: [BulkDocument] = []
    for answers in try await collection.openRevisionTexts(requests, latest: true) {
      for case .found(let text) in answers { documents.append(.text(text)) }
    }
    return documents
  }

  func prepare(_ documents: [BulkDocument]) throws -> [BulkDocument] {
    try documents.readTexts(limits: collection.database.configuration.limits)
  }

  func write(_ documents: [BulkDocument]) async throws -> [WriteFailure] {
    // The target's validate_doc_update functions judge each revision, as CouchDB's do on
    // a replication's writes; a refused one is a failure, and the others are written.
    var failures = try await refusals(documents.map { ($0.id, $0.object ?? [:]) })
    let refused = Set(failures.map(\.index))
    let accepted = documents.indices.filter { !refused.contains($0) }.map { documents[$0] }
    guard !accepted.isEmpty else { return failures.map(\.failure) }
    var written: [WriteFailure] = []
    for (document, outcome) in zip(
      accepted, try await collection.putEach(prepared: accepted, newEdits: false))
    {
      if case .failure(let error) = outcome {
        written.append(
          WriteFailure(id: document.id, error: error.code.name, reason: error.message))
      }
    }
    failures.sort { $0.index < $1.index }
    return failures.map(\.failure) + written
  }

  /// The documents the target's `validate_doc_update` functions refuse (by index), as
  /// failures named as CouchDB names them (`forbidden`, `unauthorized`, the exception's
  /// name; `compilation_error` for every document when a function does not compile).
  private func refusals(_ documents: [(id: String, object: JSONObject)]) async throws
    -> [(index: Int, failure: WriteFailure)]
  {
    let rules: DesignValidation?
    do { rules = try await validations.validation(for: collection) } catch let error
      as SetteeError where error.code == .invalidArgument
    {
      return documents.enumerated().map { index, document in
        (index, WriteFailure(id: document.id, error: "compilation_error", reason: error.message))
      }
    }
    guard let rules else { return [] }
    // The replication runs as the file's owner: an administrator.
    let refusals = try await rules.check(
      documents.map(\.object), in: collection, newEdits: false, as: .administrator)
    return refusals.enumerated().compactMap { index, refusal in
      refusal.map {
        (index, WriteFailure(id: documents[index].id, error: $0.error, reason: $0.reason))
      }
    }
  }

  func spool(_ wanted: WantedRevisions) async throws -> [SpooledDocument] {
    let answers = try await collection.openRevisions(
      wanted.id, wanted.revs, latest: true, options: RevisionReadOptions(revs: true))
    var spooled: [SpooledDocument] = []
    for case .found(var document) in answers {
      guard let text = document["_rev"]?.stringValue, let rev = try? RevisionID(parsing: text),
        case .object(var attachments)? = document["_attachments"]
      else { continue }
      let held = BulkDocument.heldGeneration(
        rev, document["_revisions"], id: wanted.id, since: wanted.attachmentsSince)
      spooled.append(
        try await SpoolWriter().spool { writer in
          var parts: [String: SpooledDocument.Part] = [:]
          for member in attachments {
            guard case .object(let stub) = member.value,
              BulkDocument.writtenAt(.object(stub)) > held
            else { continue }
            // Its bytes as stored: gzip-encoded ones pass on encoded, as CouchDB's do.
            let offset = writer.offset
            guard
              let stored = try await collection.readStoredAttachment(
                member.key, of: wanted.id, rev: rev, { try writer.append($0) })
            else { continue }
            let length = Int(writer.offset - offset)
            parts[member.key] = SpooledDocument.Part(offset: offset, length: length)
            var following: JSONObject = [:]
            for key in ["content_type", "revpos", "digest"] {
              if let value = stub[key] { following[key] = value }
            }
            following["length"] = .int(stored.length)
            following["follows"] = true
            if let encoding = stored.encoding {
              following["encoding"] = .string(encoding)
              following["encoded_length"] = .int(Int64(length))
            }
            attachments[member.key] = .object(following)
          }
          document["_attachments"] = .object(attachments)
          return (document, parts)
        })
    }
    return spooled
  }

  func write(_ document: SpooledDocument) async throws -> WriteFailure? {
    if let refused = try await refusals([(document.id, document.document)]).first {
      return refused.failure
    }
    var sources: [String: AttachmentSource] = [:]
    for name in document.parts.keys { sources[name] = document.source(name) }
    do {
      _ = try await collection.put(document.document, newEdits: false, attachmentSources: sources)
      return nil
    } catch let error as SetteeError
      where ![.io, .busy, .storage, .corruption].contains(error.code)
    {
      return WriteFailure(id: document.id, error: error.code.name, reason: error.message)
    }
  }

  func ensureFullCommit() async throws {}
}
