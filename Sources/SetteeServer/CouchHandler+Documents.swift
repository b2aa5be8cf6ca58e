import Foundation
import HTTPTypes
import Hummingbird
import Settee
import SetteeCore
import SetteeJavaScript
import SetteeReplication

extension CouchHandler {
  // MARK: - Documents

  func document(_ db: DocumentCollection, _ id: String, _ request: CouchRequest) async throws
    -> Response
  {
    try allow(request, "GET,HEAD,PUT,DELETE,COPY")
    // A read that finds the document needs no separate check that the database exists
    // (one trip to the database less): reads check it when they find nothing.
    if request.method != .get && request.method != .head { try await requireDatabase(db) }
    switch request.method {
    case Self.copy:
      return try await copyDocument(db, id, request)
    case .put:
      let body: JSONObject
      if let type = request.headers[.contentType], type.lowercased().hasPrefix("multipart/related")
      {
        guard let boundary = Multipart.boundary(ofContentType: type) else {
          throw CouchError(.badRequest, "bad_request", "multipart/related without a boundary")
        }
        // Read as it arrives: the attachments wait in a temporary file, and the engine
        // stores them from there a chunk at a time.
        let upload = try await MultipartUpload.read(
          request, boundary: boundary, maxDocumentBytes: configuration.maxRequestBytes,
          maxAttachmentBytes: configuration.maxAttachmentBytes)
        defer { upload.close() }
        return try await putDocument(db, id, upload.document, request, upload.sources)
      } else {
        body = try await request.jsonObjectBody(requiresJSONType: false)
      }
      return try await putDocument(db, id, body, request)
    case .delete:
      guard let rev = try request.revision() else {
        throw CouchError(.conflict, "conflict", "Document update conflict.")
      }
      try await requireValid(
        db, ["_id": .string(id), "_rev": .string(rev.description), "_deleted": true], request)
      let result = try await db.delete(id, rev: rev)
      try await syncDesignDocuments(db, [id])
      return CouchResponse.written(result, status: .ok)
    default:
      return try await readDocument(db, id, request)
    }
  }

  /// `PUT /{db}/{docid}` with the document read: its attachments' data inline, or
  /// following in `sources` (a `multipart/related` body).
  private func putDocument(
    _ db: DocumentCollection, _ id: String, _ body: JSONObject, _ request: CouchRequest,
    _ sources: [String: AttachmentSource] = [:]
  ) async throws -> Response {
    var body = body
    // The URL names the document; an _id in the body that is not a string is refused,
    // as CouchDB refuses it.
    if let given = body["_id"], given.stringValue == nil {
      throw CouchError(.badRequest, "illegal_docid", "Document id must be a string")
    }
    body["_id"] = .string(id)
    if let rev = try request.revision() {
      if let given = body["_rev"], given != .string(rev.description) {
        throw CouchError(
          .badRequest, "bad_request", "Document rev and etag have different values")
      }
      body["_rev"] = .string(rev.description)
    }

    try requireWellFormedDesign(body)
    let location = "/\(Self.escape(db.name))/\(Self.escape(id))"
    let newEdits = try request.bool("new_edits", default: true)
    body = try await requireValid(db, body, newEdits: newEdits, request)
    // A document written without `_attachments` has none, as in CouchDB (only stubs keep
    // the attachments of the revision edited).
    if sources.isEmpty && body["_attachments"] == nil { body["_attachments"] = [:] }
    let result =
      sources.isEmpty
      ? try await (newEdits ? db.put(body) : db.put(body, newEdits: false))
      : try await db.put(body, newEdits: newEdits, attachmentSources: sources)
    try await syncDesignDocuments(db, [id])
    if newEdits && request.query["batch"] == "ok" {
      return CouchResponse.json(["ok": true, "id": .string(id)], status: .accepted)
    }
    return CouchResponse.written(result, location: location)
  }

  private func readDocument(_ db: DocumentCollection, _ id: String, _ request: CouchRequest)
    async throws -> Response
  {
    if let fields = try await readableMembers(db, id, request) {
      // Another user's document, reduced to the public fields: the revision asked for,
      // nothing more of it.
      guard
        let document = try await db.document(
          id, RevisionReadOptions(rev: try request.revision(ifMatch: false))),
        let shown = UsersDatabase.publicMembers(of: document, fields, keepingIdentity: true)
      else { throw CouchError(.notFound, "not_found", "missing") }
      return CouchResponse.json(.object(shown))
    }
    // The winner with no options: its stored text, with no JSON values made.
    if request.query.isEmpty, let (text, rev) = try await db.winnerText(id) {
      let etag = "\"\(rev)\""
      if let unchanged = notModified(request, etag) { return unchanged }
      return CouchResponse.jsonBytes(text, headers: [.eTag: etag])
    }
    let meta = request.flag("meta")
    if let text = request.query["rev"], text.hasSuffix("-"),
      text.dropLast().allSatisfy(\.isASCII), Int(text.dropLast()) != nil
    {
      // `N-` is a revision CouchDB reads (with an empty hash) and never holds.
      throw CouchError(.notFound, "not_found", "missing")
    }
    let rev = try request.revision(ifMatch: false)
    var options = RevisionReadOptions(
      rev: rev, revs: request.flag("revs"), revsInfo: request.flag("revs_info") || meta,
      conflicts: request.flag("conflicts") || meta,
      deletedConflicts: request.flag("deleted_conflicts") || meta,
      attachments: request.flag("attachments"),
      attachmentsSince: try revisions(request.jsonParameter("atts_since"), "atts_since") ?? [],
      attachmentEncodingInfo: request.flag("att_encoding_info"))
    options.localSeq = request.flag("local_seq")
    let latest = request.flag("latest")
    // CouchDB adds a document's meta members (`_revs_info`, `_conflicts`,
    // `_deleted_conflicts`, `_local_seq`) when it opens the winner (`latest` opens the
    // winner too); a given revision and `open_revs` come without them.
    if request.query["open_revs"] != nil || (rev != nil && !latest) {
      options.revsInfo = false
      options.conflicts = false
      options.deletedConflicts = false
      options.localSeq = false
    }
    if let openRevs = request.query["open_revs"] {
      let asked: [RevisionID]? =
        openRevs == "all" ? nil : try revisions(request.jsonParameter("open_revs"), "open_revs")
      let multipart = accepts(request, "multipart/mixed")
      if multipart {
        // CouchDB's multipart answer always carries the attachments' data (those after
        // atts_since), as stored: its replicator asks without attachments=true and
        // counts on every attachment it lacks following the JSON.
        options.attachments = true
        options.encodedAttachmentData = true
      }
      let answers = Self.inCouchDBOrder(
        try await db.openRevisions(id, asked, latest: latest, options: options))
      if asked == nil && answers.isEmpty {
        try await requireDatabase(db)
        throw CouchError(.notFound, "not_found", "missing")
      }
      if multipart {
        let boundary = Multipart.boundary()
        return Response(
          status: .ok,
          headers: [.contentType: "multipart/mixed; boundary=\"\(boundary)\""],
          body: ResponseBody(
            byteBuffer: ByteBuffer(bytes: Multipart.mixed(answers.map(\.json), boundary: boundary)))
        )
      }
      return CouchResponse.json(.array(answers.map { .object($0.json) }))
    }
    let related = options.attachments && accepts(request, "multipart/related")
    // A multipart answer carries attachments as stored, as CouchDB's does.
    if related { options.encodedAttachmentData = true }
    // CouchDB 3.5's `latest` with a `rev` opens the winning revision whatever the `rev`
    // (chttpd drops the `rev`; a deleted winner is not found), not the leaf the `rev`
    // leads to as its documentation says: the recording shows the winner.
    if latest { options.rev = nil }
    let found = try await db.document(id, options)
    if let document = found {
      // As CouchDB: an ETag only for a document without meta members.
      let metaMembers = ["_revs_info", "_conflicts", "_deleted_conflicts", "_local_seq"]
      let etag =
        metaMembers.contains { document[$0] != nil }
        ? nil : document["_rev"]?.stringValue.map { "\"\($0)\"" }
      if let etag, let unchanged = notModified(request, etag) { return unchanged }
      if related {
        let boundary = Multipart.boundary()
        if let related = Multipart.related(document, boundary: boundary) {
          var headers: HTTPFields = [.contentType: "multipart/related; boundary=\"\(boundary)\""]
          if let etag { headers[.eTag] = etag }
          return Response(
            status: .ok, headers: headers,
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: related)))
        }
      }
      return CouchResponse.json(
        .object(document), headers: etag.map { [.eTag: $0] } ?? [:])
    }
    try await requireDatabase(db)
    if rev == nil, let winner = try await db.getRevision(id), winner.isDeleted {
      throw CouchError(.notFound, "not_found", "deleted")
    }
    throw CouchError(.notFound, "not_found", "missing")
  }

  /// CouchDB's `etag_respond`: a 304 with the ETag when `If-None-Match` names it (one of a
  /// comma-separated list), `nil` otherwise.
  func notModified(_ request: CouchRequest, _ etag: String) -> Response? {
    guard let tags = request.headers[.ifNoneMatch],
      tags.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces) == etag }
      )
    else { return nil }
    return Response(status: .notModified, headers: [.eTag: etag])
  }

  /// WebDAV's `COPY`, which CouchDB takes for documents.
  static let copy = HTTPRequest.Method("COPY")!

  /// CouchDB's `COPY /{db}/{id}`: the document (the winner, or `?rev=`) with its
  /// attachments, written as the id the `Destination` header names, a new document or
  /// (with `?rev=` in the header) a new revision of an existing one.
  private func copyDocument(_ db: DocumentCollection, _ id: String, _ request: CouchRequest)
    async throws -> Response
  {
    guard let destination = request.headers[HTTPField.Name("Destination")!], !destination.isEmpty
    else {
      throw CouchError(.badRequest, "bad_request", "Destination header is mandatory for COPY.")
    }
    let parts = destination.split(separator: "?", maxSplits: 1)
    let target = String(parts[0]).removingPercentEncoding ?? String(parts[0])
    var targetRev: String?
    if parts.count == 2 {
      for pair in parts[1].split(separator: "&") where pair.hasPrefix("rev=") {
        targetRev = String(pair.dropFirst(4)).removingPercentEncoding
      }
    }
    // Attachments go as stored, so that the copy keeps their encodings and digests.
    guard
      var body = try await db.document(
        id,
        RevisionReadOptions(
          rev: try request.revision(ifMatch: false), attachments: true,
          encodedAttachmentData: true))
    else {
      throw CouchError(.notFound, "not_found", "missing")
    }
    body["_id"] = .string(target)
    body["_rev"] = targetRev.map(JSON.string)
    // The copy replaces the destination whole: it has the source's attachments, not the
    // ones the destination's revision had.
    if body["_attachments"] == nil { body["_attachments"] = [:] }
    body = try await requireValid(db, body, request)
    let result = try await db.put(body)
    try await syncDesignDocuments(db, [target])
    return CouchResponse.written(
      result, location: "/\(Self.escape(db.name))/\(Self.escape(target))")
  }

  /// Whether the request's `Accept-Encoding` takes gzip (`gzip` or `*`, not refused with
  /// `q=0`).
  func acceptsGzip(_ request: CouchRequest) -> Bool {
    guard let header = request.headers[.acceptEncoding] else { return false }
    for item in header.lowercased().split(separator: ",") {
      let parts = item.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
      guard let coding = parts.first, coding == "gzip" || coding == "x-gzip" || coding == "*"
      else { continue }
      let refused = parts.dropFirst().contains { parameter in
        parameter.replacingOccurrences(of: " ", with: "").hasPrefix("q=")
          && Double(parameter.split(separator: "=").last ?? "") == 0
      }
      if !refused { return true }
    }
    return false
  }

  /// Whether the request's `Accept` header names `type`.
  func accepts(_ request: CouchRequest, _ type: String) -> Bool {
    (request.headers[.accept] ?? "").lowercased().contains(type)
  }

  /// A JSON array of revisions given as a parameter or member.
  func revisions(_ json: JSON?, _ name: String) throws -> [RevisionID]? {
    guard let json else { return nil }
    guard case .array(let items) = json else {
      throw CouchError(.badRequest, "bad_request", "\(name) must be a JSON array of revisions")
    }
    return try items.map { item in
      guard let text = item.stringValue, let rev = try? RevisionID(parsing: text) else {
        throw CouchError(.badRequest, "bad_request", "Invalid rev format in \(name)")
      }
      return rev
    }
  }

  // MARK: - Local documents

  func localDocument(_ db: DocumentCollection, _ id: String, _ request: CouchRequest)
    async throws -> Response
  {
    try allow(request, "GET,HEAD,PUT,DELETE")
    try await requireDatabase(db)
    switch request.method {
    case .put:
      var body = try await request.jsonObjectBody(requiresJSONType: false)
      body["_id"] = .string(id)
      if let rev = request.query["rev"], body["_rev"] == nil { body["_rev"] = .string(rev) }
      let stored = try await db.putLocal(body)
      return CouchResponse.json(
        ["ok": true, "id": .string(stored.id), "rev": .string(stored.rev)], status: .created,
        headers: [
          .eTag: "\"\(stored.rev)\"",
          .location: "/\(Self.escape(db.name))/\(Self.escape(stored.id))",
        ])
    case .delete:
      try await db.deleteLocal(id, rev: request.query["rev"])
      return CouchResponse.json(
        ["ok": true, "id": .string(id), "rev": "0-0"], headers: [.eTag: "\"0-0\""])
    default:
      guard let stored = try await db.localDocument(id) else {
        throw CouchError(.notFound, "not_found", "missing")
      }
      var json = stored.json
      // `revs=true`: CouchDB's `_revisions` of a local document, `{"start": 0, "ids": [N]}`
      // for its revision `0-N`.
      if request.flag("revs"), let number = stored.rev.split(separator: "-").last {
        json["_revisions"] = ["start": 0, "ids": [.string(String(number))]]
      }
      return CouchResponse.json(.object(json), headers: [.eTag: "\"\(stored.rev)\""])
    }
  }

  func localDocs(_ db: DocumentCollection, _ request: CouchRequest) async throws -> Response {
    try allow(request, "GET,HEAD,POST")
    try await requireDatabase(db)
    var documents = try await db.localDocuments()
    if try request.bool("descending") { documents.reverse() }
    documents = Array(documents.dropFirst(try request.integer("skip") ?? 0))
    if let limit = try request.integer("limit") { documents = Array(documents.prefix(limit)) }
    let includeDocs = try request.bool("include_docs")
    let rows: [JSON] = documents.map { local in
      var row: JSONObject = [
        "id": .string(local.id), "key": .string(local.id), "value": ["rev": .string(local.rev)],
      ]
      if includeDocs { row["doc"] = .object(local.json) }
      return .object(row)
    }
    return CouchResponse.json(["total_rows": .null, "offset": .null, "rows": .array(rows)])
  }
}
