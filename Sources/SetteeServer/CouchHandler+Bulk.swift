import Foundation
import HTTPTypes
import Hummingbird
import Settee
import SetteeCore
import SetteeJavaScript

extension CouchHandler {
  // MARK: - _all_docs

  func allDocs(_ db: DocumentCollection, _ request: CouchRequest, designOnly: Bool = false)
    async throws -> Response
  {
    try allow(request, "GET,HEAD,POST")
    var options = try viewOptions(request)
    if request.method == .post {
      for member in try await request.jsonObjectBody() { options[member.key] = member.value }
    }
    // CouchDB's all-documents ranges: `key` wins over `startkey` and `endkey`, and a
    // document id bound (`startkey_docid`) stands for a missing key bound, since a row's
    // key is its id.
    Self.canonicalize(&options)
    try Self.requireKeysArray(options, request)
    if options["key"] != nil {
      for bound in ["startkey", "endkey", "startkey_docid", "endkey_docid"] { options[bound] = nil }
    }
    for (key, id) in [("startkey", "startkey_docid"), ("endkey", "endkey_docid")] {
      if options[key] == nil, let bound = options[id] { options[key] = bound }
      options[id] = nil
    }
    let descending = options["descending"] == true || options["descending"] == "true"
    if designOnly {
      let (low, high): (JSON, JSON) = ("_design/", "_design0")
      if options["startkey"] == nil { options["startkey"] = descending ? high : low }
      if options["endkey"] == nil { options["endkey"] = descending ? low : high }
    }
    // A reversed range matches nothing; CouchDB answers it with no rows (a view's is a
    // 400), the offset where the range starts.
    var reversed = false
    if let start = options["startkey"]?.stringValue, let end = options["endkey"]?.stringValue,
      descending ? start.utf8.lexicographicallyPrecedes(end.utf8)
        : end.utf8.lexicographicallyPrecedes(start.utf8)
    {
      reversed = true
      options["endkey"] = nil
      options["limit"] = 0
    }
    var query: ViewQuery
    do { query = try ViewQuery(json: .object(options)) } catch let error as SetteeError {
      throw CouchError(.badRequest, "query_parse_error", error.message)
    }
    if options["include_offset"] == nil { query.includeOffset = true }
    var result = try await db.allDocuments(query)
    if result.rows.isEmpty { try await requireDatabase(db) }
    if reversed { result.rows = [] }
    if designOnly {
      // CouchDB counts the design documents, and gives their count as the offset too.
      let designs = try await db.designRevisions().count
      result.totalRows = designs
      result.offset = designs
    }
    guard case .object(var json) = result.json else { return CouchResponse.json(result.json) }
    // By `keys`, CouchDB gives no offset; `update_seq` adds the collection's sequence.
    if query.keys != nil { json["offset"] = .null }
    if options["update_seq"] == true || options["update_seq"] == "true" {
      json["update_seq"] = .string(try await db.sequenceString(result.updateSeq))
    }
    if query.includeDocs, options["conflicts"] == true, case .array(let rows)? = json["rows"] {
      json["rows"] = .array(try await withConflicts(rows, db, query.attachments))
    }
    return CouchResponse.json(.object(json))
  }

  /// `conflicts=true` with `include_docs`: the documents of list rows (`_all_docs`, views)
  /// that have conflicts, read again with their `_conflicts` (found by the collection's
  /// index of conflicted documents: most have none).
  func withConflicts(_ rows: [JSON], _ db: DocumentCollection, _ attachments: AttachmentListing)
    async throws -> [JSON]
  {
    let conflicted = Set(try await db.conflictedDocumentIDs())
    guard !conflicted.isEmpty else { return rows }
    var rows = rows
    for (index, row) in rows.enumerated() {
      guard case .object(var object) = row, let id = object["doc"]?["_id"]?.stringValue,
        conflicted.contains(id),
        let document = try await db.document(
          id,
          RevisionReadOptions(
            conflicts: true, attachments: attachments.data,
            attachmentEncodingInfo: attachments.encodingInfo))
      else { continue }
      object["doc"] = .object(document)
      rows[index] = .object(object)
    }
    return rows
  }

  /// Spells CouchDB's aliases of view parameters one way (`start_key` as `startkey`, …).
  static func canonicalize(_ options: inout JSONObject) {
    let aliases = [
      "start_key": "startkey", "end_key": "endkey", "start_key_doc_id": "startkey_docid",
      "end_key_doc_id": "endkey_docid",
    ]
    for (alias, name) in aliases where options[alias] != nil {
      if options[name] == nil { options[name] = options[alias] }
      options[alias] = nil
    }
  }

  /// Refuses `keys` that are not an array, as CouchDB does (`bad_request`).
  static func requireKeysArray(_ options: JSONObject, _ request: CouchRequest) throws {
    guard let keys = options["keys"], keys.arrayValue == nil else { return }
    throw CouchError(
      .badRequest, "bad_request",
      request.method == .post
        ? "`keys` body member must be an array." : "`keys` parameter must be an array.")
  }

  /// A view request's query parameters as the JSON object ``ViewQuery`` reads: values are
  /// JSON, but for those CouchDB takes as plain strings.
  func viewOptions(_ request: CouchRequest) throws -> JSONObject {
    let plain: Set<String> = [
      "startkey_docid", "start_key_doc_id", "endkey_docid", "end_key_doc_id", "stale", "update",
    ]
    var options = JSONObject()
    for (name, text) in request.query.sorted(by: { $0.key < $1.key }) {
      if plain.contains(name) {
        options[name] = .string(text)
        continue
      }
      do { options[name] = try JSONParser.parse(text) } catch {
        // CouchDB: a key that is not JSON is a bad request; any other value a query's.
        let keys: Set<String> = ["key", "keys", "startkey", "start_key", "endkey", "end_key"]
        throw CouchError(
          .badRequest, keys.contains(name) ? "bad_request" : "query_parse_error",
          "Invalid JSON value for the parameter \(name): \(text)")
      }
    }
    return options
  }

  // MARK: - _bulk_docs

  func bulkDocs(_ db: DocumentCollection, _ request: CouchRequest) async throws -> Response {
    try allow(request, "POST")
    try request.requireJSONType()
    try await requireDatabase(db)
    // The body is read as it arrives and checked whole before anything is written (a
    // broken body writes nothing, as CouchDB's does): the first megabytes of documents are
    // kept parsed, the rest spooled to a temporary file as their JSON text and written in
    // batches after, so that no body is held whole in memory, parsed or not.
    var scanner = BulkDocsScanner()
    let limits = db.database.configuration.limits
    var newEdits: Bool?
    var sawDocs = false
    var held: [BulkDocument] = []
    var heldBytes = 0
    var spool: DocumentSpool?
    defer { spool?.remove() }
    try await request.forEachBodyChunk { chunk in
      try scanner.feed(chunk) { event in
        switch event {
        case .docsBegin: sawDocs = true
        case .member("new_edits", let value):
          guard case .bool(let flag) = value else {
            throw CouchError(.badRequest, "bad_request", "`new_edits` must be a boolean")
          }
          newEdits = flag
        case .member: break
        case .document(let text):
          let document = try Self.bulkDocument(text, limits: limits)
          if newEdits == false { try Self.requireRevision(document) }
          if spool == nil && heldBytes + text.count <= Self.heldBulkBytes {
            held.append(document)
            heldBytes += text.count
          } else {
            if spool == nil { spool = try DocumentSpool() }
            try spool!.append(text)
          }
        }
      }
    }
    try scanner.finish()
    guard sawDocs else {
      throw CouchError(.badRequest, "bad_request", "POST body must include `docs` parameter.")
    }
    let writesNew = newEdits ?? true
    // A `new_edits: false` document without its revision refuses the whole request, as
    // CouchDB refuses it (checked as they arrive once `new_edits` is read, which comes
    // first from every replicator; the held ones again here).
    if !writesNew { for document in held { try Self.requireRevision(document) } }
    var answers = try await writeBulk(db, held, newEdits: writesNew, request)
    if var spool {
      try spool.rewind()
      while let batch = try spool.next(Self.spooledBatch) {
        answers += try await writeBulk(
          db, try batch.map { try Self.bulkDocument($0[...], limits: limits) },
          newEdits: writesNew, request)
      }
    }
    return CouchResponse.json(.array(answers), status: .created)
  }

  /// What refuses a whole `_bulk_docs` batch, as CouchDB refuses it before writing any of
  /// it: a malformed document (its id, revision, special members or attachments) and a
  /// stub naming nothing held. Conflicts and `validate_doc_update` refusals are per
  /// document.
  static let refusingWholeBatch: Set<SetteeError.Code> = [
    .invalidID, .invalidRevision, .reservedField, .invalidDocument, .missingStub,
  ]

  /// Refuses a `new_edits: false` document that names no revision (the whole request).
  static func requireRevision(_ document: BulkDocument) throws {
    guard document.namesItsRevision else {
      throw CouchError(
        .badRequest, "bad_request",
        "When `new_edits: false`, the document needs `_rev` or `_revisions` specified")
    }
  }

  /// How many bytes of documents a `_bulk_docs` request keeps parsed in memory (written in
  /// one transaction); beyond, documents are spooled and written `spooledBatch` at a time.
  static let heldBulkBytes = 4 << 20
  static let spooledBatch = 1_000

  /// One element of `docs`, which must be a JSON object: read into its stored form when
  /// its text allows, parsed otherwise (see `BulkDocument`).
  static func bulkDocument(_ text: ArraySlice<UInt8>, limits: DocumentLimits) throws
    -> BulkDocument
  {
    do { return try BulkDocument(text: Array(text), limits: limits) } catch let error
      as SetteeError
    {
      if error.code == .invalidDocument {
        throw CouchError(.badRequest, "bad_request", "Document must be a JSON object")
      }
      throw BulkDocsScanner.invalid(error.message)
    }
  }

  /// Writes one batch of `_bulk_docs`; CouchDB's answer for each document.
  private func writeBulk(
    _ db: DocumentCollection, _ documents: [BulkDocument], newEdits: Bool,
    _ request: CouchRequest
  ) async throws -> [JSON] {
    guard !documents.isEmpty else { return [] }
    // validate_doc_update judges each document; those it refuses are answered with its
    // error and the others written.
    var documents = documents
    // Who may write what comes first: design documents are for the database's admins,
    // and `_users` takes user documents only, each password stored as its hash.
    var refused = [CouchError?](repeating: nil, count: documents.count)
    let users = db.name == UsersDatabase.name
    if users || !request.user.isServerAdmin {
      for index in documents.indices {
        let id = documents[index].idAndRev.id?.stringValue ?? ""
        guard users || Document.isDesignID(id), let object = documents[index].object else {
          continue
        }
        do {
          let admitted = try await admit(db, object, request)
          if users { documents[index] = .object(admitted) }
        } catch { refused[index] = CouchError(error) }
      }
    }
    for index in documents.indices where refused[index] == nil {
      guard let id = documents[index].idAndRev.id?.stringValue, Document.isDesignID(id),
        let object = documents[index].object
      else { continue }
      do { try requireWellFormedDesign(object) } catch { refused[index] = CouchError(error) }
    }
    var refusals = [ValidationRefusal?](repeating: nil, count: documents.count)
    if documents.contains(where: {
      DesignValidation.judges(documentID: $0.idAndRev.id?.stringValue ?? "")
    }),
      let rules = try await validation(db)
    {
      // A document without `_id` gets its id before the functions see it, as in CouchDB.
      for index in documents.indices where documents[index].idAndRev.id == nil {
        if var object = documents[index].object {
          object["_id"] = .string(Document.generateID())
          documents[index] = .object(object)
        }
      }
      refusals = try await validate(
        db, documents.map { $0.object ?? [:] }, newEdits: newEdits, request, by: rules)
    }
    for index in documents.indices where refused[index] == nil {
      refused[index] = refusals[index].map(CouchError.init)
    }
    // Local documents (`_local/…`) are written as `PUT /{db}/_local/…` writes them, outside
    // revision control, as CouchDB's `_bulk_docs` writes them.
    var locals: [Int: JSON] = [:]
    for index in documents.indices where refused[index] == nil {
      guard let id = documents[index].idAndRev.id?.stringValue,
        id.hasPrefix(LocalDocument.idPrefix), let object = documents[index].object
      else { continue }
      do {
        let stored = try await db.putLocal(object)
        locals[index] = ["ok": true, "id": .string(stored.id), "rev": .string(stored.rev)]
      } catch {
        let couch = CouchError(error)
        locals[index] = [
          "id": .string(id), "error": .string(couch.error), "reason": .string(couch.reason),
        ]
      }
    }
    // Written in id order, as CouchDB writes a batch (its sequence numbers, and so the
    // changes feed, follow it); a document without `_id` is given one first.
    for index in documents.indices
    where refused[index] == nil && locals[index] == nil && documents[index].idAndRev.id == nil {
      if var object = documents[index].object {
        object["_id"] = .string(Document.generateID())
        documents[index] = .object(object)
      }
    }
    let ids = documents.map { Array(($0.idAndRev.id?.stringValue ?? "").utf8) }
    let accepted = documents.indices.filter { refused[$0] == nil && locals[$0] == nil }
      .sorted { ids[$0] == ids[$1] ? $0 < $1 : ids[$0].lexicographicallyPrecedes(ids[$1]) }
    // The engine writes a batch whole and goes document by document only when one is
    // refused.
    // A replicated revision with a stub the target lacks refuses the request, 412
    // missing_stub, nothing written: CouchDB's replicator then sends the document again
    // with its attachments' data.
    let written =
      accepted.isEmpty
      ? []
      : try await db.putEach(
        prepared: accepted.map { documents[$0] },
        newEdits: newEdits, refusingWhole: Self.refusingWholeBatch)
    var outcomes = documents.indices.map { index in
      refused[index].map { Result<WriteResult, any Error>.failure($0) }
    }
    for (index, outcome) in zip(accepted, written) {
      outcomes[index] = outcome.mapError { $0 as any Error }
    }
    var designIDs: [String] = []
    var answers: [JSON] = []
    for (index, (document, outcome)) in zip(documents, outcomes).enumerated() {
      if let local = locals[index] {
        if newEdits || local["error"] != nil { answers.append(local) }
        continue
      }
      guard let outcome else { continue }
      switch outcome {
      case .success(let written):
        if Document.isDesignID(written.id) { designIDs.append(written.id) }
        // With new_edits=false CouchDB lists only the documents it refused.
        if newEdits {
          answers.append([
            "ok": true, "id": .string(written.id), "rev": .string(written.rev.description),
          ])
        }
      case .failure(let error):
        let couch = CouchError(error)
        let (id, rev) = document.idAndRev
        if let id = id?.stringValue, Document.isDesignID(id) { designIDs.append(id) }
        // CouchDB's order: id, rev, error, reason.
        var answer: JSONObject = ["id": id ?? .null]
        if let rev { answer["rev"] = rev }
        answer["error"] = .string(couch.error)
        answer["reason"] = .string(couch.reason)
        answers.append(.object(answer))
      }
    }
    try await syncDesignDocuments(db, designIDs)
    return answers
  }

  // MARK: - _bulk_get

  func bulkGet(_ db: DocumentCollection, _ request: CouchRequest) async throws -> Response {
    // Cloudant Sync probes with GET: 405 (not 404) says the endpoint exists.
    try allow(request, "POST")
    try await requireDatabase(db)
    let body = try await request.jsonObjectBody()
    guard let docs = body["docs"]?.arrayValue else {
      throw CouchError(.badRequest, "bad_request", "Missing JSON list of 'docs'.")
    }
    let revs = try request.bool("revs")
    let attachments = try request.bool("attachments")
    let latest = try request.bool("latest")
    // Each entry is an answer already (an error), a revision to read with the others in
    // one read of the engine (what replicators ask), or a winner to read on its own.
    enum Entry {
      case answered(JSON)
      case revision(id: String, rev: String, request: Int)
      /// No `rev`: every leaf, tombstones included (CouchDB's replicator and PouchDB count
      /// on it).
      case leaves(id: String, RevisionReadOptions)
    }
    func failure(_ id: String?, _ rev: String?, _ error: String, _ reason: String) -> JSON {
      [
        "error": [
          "id": id.map(JSON.string) ?? .null, "rev": rev.map(JSON.string) ?? .null,
          "error": .string(error), "reason": .string(reason),
        ]
      ]
    }
    var entries: [Entry] = []
    var requests: [RevisionsRequest] = []
    for entry in docs {
      guard case .object(let asked) = entry, let id = asked["id"]?.stringValue else {
        entries.append(
          .answered([
            "id": .null, "docs": [failure(nil, nil, "bad_request", "document id missed")],
          ]))
        continue
      }
      let rev = asked["rev"]?.stringValue
      do {
        let since = try revisions(asked["atts_since"], "atts_since") ?? []
        let options = RevisionReadOptions(
          revs: revs, attachments: attachments, attachmentsSince: since)
        if let rev {
          requests.append(RevisionsRequest(id, [try RevisionID(parsing: rev)], options: options))
          entries.append(.revision(id: id, rev: rev, request: requests.count - 1))
        } else {
          entries.append(.leaves(id: id, options))
        }
      } catch {
        let couch = CouchError(error)
        entries.append(
          .answered(["id": .string(id), "docs": [failure(id, rev, couch.error, couch.reason)]]))
      }
    }
    // The revisions come as text (a plain one copied from its stored body, not parsed and
    // printed again), and the answer is written around them.
    let found = try await db.openRevisionTexts(requests, latest: latest)
    var bytes = Array(#"{"results":["#.utf8)
    for (number, entry) in entries.enumerated() {
      if number > 0 { bytes.append(UInt8(ascii: ",")) }
      switch entry {
      case .answered(let result): JSONWriter.write(result, into: &bytes)
      case .revision(let id, let rev, let index):
        bytes += Array(#"{"id":"#.utf8)
        JSONWriter.write(.string(id), into: &bytes)
        bytes += Array(#","docs":["#.utf8)
        for (position, answer) in found[index].enumerated() {
          if position > 0 { bytes.append(UInt8(ascii: ",")) }
          switch answer {
          case .found(let text):
            bytes += Array(#"{"ok":"#.utf8)
            bytes += text
            bytes.append(UInt8(ascii: "}"))
          case .missing:
            JSONWriter.write(failure(id, rev, "not_found", "missing"), into: &bytes)
          }
        }
        bytes += Array("]}".utf8)
      case .leaves(let id, let options):
        let leaves = try await db.openRevisions(id, options: options)  // in tree order
        // A document it does not hold: CouchDB names the revision "undefined".
        let answers =
          leaves.isEmpty
          ? [failure(id, "undefined", "not_found", "missing")] : leaves.map { JSON.object($0.json) }
        JSONWriter.write(["id": .string(id), "docs": .array(answers)], into: &bytes)
      }
    }
    bytes += Array("]}".utf8)
    return CouchResponse.jsonBytes(bytes)
  }

  /// `GET /{db}/{id}?open_revs=…` answers in CouchDB's order: the revisions found by
  /// generation, then digest, then those missing, as asked. (`_bulk_get` keeps the
  /// engine's order, CouchDB's revision-tree order there.)
  static func inCouchDBOrder(_ answers: [OpenRevision]) -> [OpenRevision] {
    func rev(_ answer: OpenRevision) -> RevisionID? {
      guard case .found(let document) = answer, let text = document["_rev"]?.stringValue else {
        return nil
      }
      return try? RevisionID(parsing: text)
    }
    let found = answers.compactMap { answer in rev(answer).map { ($0, answer) } }
      .sorted { $0.0 < $1.0 }.map(\.1)
    return found + answers.filter { rev($0) == nil }
  }

  // MARK: - _revs_diff, _missing_revs

  private func offered(_ request: CouchRequest) async throws -> [String: [RevisionID]] {
    let body = try await request.jsonObjectBody()
    var offered: [String: [RevisionID]] = [:]
    offered.reserveCapacity(body.count)
    for member in body {
      offered[member.key] = try revisions(member.value, member.key) ?? []
    }
    return offered
  }

  /// The offered documents with revisions the database lacks, by id.
  private func missing(_ db: DocumentCollection, _ request: CouchRequest) async throws
    -> [(id: String, difference: RevisionDifference)]
  {
    try allow(request, "POST")
    try await requireDatabase(db)
    return try await db.revsDiff(try await offered(request)).sorted { $0.key < $1.key }
      .filter { !$0.value.missing.isEmpty }.map { ($0.key, $0.value) }
  }

  func revsDiff(_ db: DocumentCollection, _ request: CouchRequest) async throws -> Response {
    // Printed as it is read: an answer to a replicator holds a member for each document of
    // its batch, and a JSONObject of them was made only to be printed.
    var bytes = [UInt8(ascii: "{")]
    for (index, entry) in try await missing(db, request).enumerated() {
      if index > 0 { bytes.append(UInt8(ascii: ",")) }
      JSONWriter.writeString(entry.id, into: &bytes)
      bytes.append(UInt8(ascii: ":"))
      entry.difference.write(into: &bytes)
    }
    bytes.append(UInt8(ascii: "}"))
    return CouchResponse.jsonBytes(bytes)
  }

  func missingRevs(_ db: DocumentCollection, _ request: CouchRequest) async throws -> Response {
    let missing = JSONObject(
      try await missing(db, request).map { entry -> (String, JSON) in
        (entry.id, .array(entry.difference.missing.map { .string($0.description) }))
      })
    return CouchResponse.json(["missing_revs": .object(missing)])
  }

  // MARK: - _revs_limit, _purge, _security

  func revsLimit(_ db: DocumentCollection, _ request: CouchRequest) async throws -> Response {
    try allow(request, "GET,HEAD,PUT")
    try await requireDatabase(db)
    if request.method == .put {
      guard case .int(let limit) = try await request.jsonBody(requiresJSONType: false),
        limit > 0, limit <= Int64(Int32.max)
      else {
        throw CouchError(.badRequest, "bad_request", "The revs_limit must be a positive integer")
      }
      try await db.setRevsLimit(Int(limit))
      return CouchResponse.ok()
    }
    return CouchResponse.json(.int(Int64(try await db.revsLimit())))
  }

  func purge(_ db: DocumentCollection, _ request: CouchRequest) async throws -> Response {
    try allow(request, "POST")
    try await requireDatabase(db)
    let purged = try await db.purge(try await offered(request))
    var answer = JSONObject()
    for (id, revs) in purged.sorted(by: { $0.key < $1.key }) {
      answer[id] = .array(revs.map { .string($0.description) })
    }
    return CouchResponse.json(
      ["purge_seq": .null, "purged": .object(answer)], status: .created)
  }

  /// The metadata key of a database's `_security` object.
  static func securityKey(_ name: String) -> String { "couchdb:security:\(name)" }

  /// `_security` is kept as the database's metadata under `couchdb:security:{db}`; a
  /// database without one answers CouchDB 3's admin-only default, which is what governs it.
  func security(_ db: DocumentCollection, _ request: CouchRequest) async throws -> Response {
    try allow(request, "GET,HEAD,PUT")
    try await requireDatabase(db)
    if request.method == .put {
      let body = try await request.jsonObjectBody(requiresJSONType: false)
      try SecurityObject.validate(body)
      try await database.setMetadata(.object(body), forKey: Self.securityKey(db.name))
      return CouchResponse.ok()
    }
    return CouchResponse.json(.object(try await effectiveSecurity(db)))
  }
}
