import Foundation
import HTTPTypes
import Hummingbird
import Settee
import SetteeCore
import SetteeJavaScript

/// What replicators read: `_bulk_get`, `_revs_diff`, `_missing_revs`, and the database
/// settings they meet (`_revs_limit`, `_purge`, `_security`).
extension CouchHandler {
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
      /// Another user's document in `_users`, reduced to the public fields (CouchDB's
      /// `after_doc_read`): the revision asked for, else every leaf.
      case publicly(id: String, rev: String?, fields: [String])
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
    // In `_users`, one who does not administer it reads only their own document: the
    // others are answered one by one as CouchDB's `after_doc_read` answers them.
    let user = request.user
    var readsAll = db.name != UsersDatabase.name
    if !readsAll { readsAll = try await isDatabaseAdmin(db, user) }
    for entry in docs {
      guard case .object(let asked) = entry, let id = asked["id"]?.stringValue else {
        entries.append(
          .answered([
            "id": .null, "docs": [failure(nil, nil, "bad_request", "document id missed")],
          ]))
        continue
      }
      let rev = asked["rev"]?.stringValue
      if let rev, (try? RevisionID(parsing: rev)) == nil {
        // CouchDB's words for a revision it cannot read, per document.
        entries.append(
          .answered([
            "id": .string(id), "docs": [failure(id, rev, "bad_request", "Invalid rev format")],
          ]))
        continue
      }
      do {
        if !readsAll, let fields = try await readableMembers(db, id, request) {
          entries.append(.publicly(id: id, rev: rev, fields: fields))
          continue
        }
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
      case .publicly(let id, let rev, let fields):
        let documents: [JSONObject] =
          if let rev {
            try await db.document(id, RevisionReadOptions(rev: try RevisionID(parsing: rev)))
              .map { [$0] } ?? []
          } else {
            try await db.openRevisions(id, options: RevisionReadOptions()).compactMap {
              if case .found(let document) = $0 { document } else { nil }
            }
          }
        let shown = documents.compactMap {
          UsersDatabase.publicMembers(of: $0, fields, keepingIdentity: true)
        }
        let answers =
          shown.isEmpty
          ? [failure(id, rev ?? "undefined", "not_found", "missing")]
          : shown.map { ["ok": .object($0)] as JSON }
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
