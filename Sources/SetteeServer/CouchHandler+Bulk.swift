import Foundation
import HTTPTypes
import Hummingbird
import Settee
import SetteeCore
import SetteeJavaScript

/// `_bulk_docs`: a body read as it arrives, checked whole, written in batches.
extension CouchHandler {
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
}
