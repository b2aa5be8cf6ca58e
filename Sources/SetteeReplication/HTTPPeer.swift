import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import Settee
import SetteeCore

/// A database at a URL as a replication peer (CouchDB 3.x, another `settee serve`), spoken
/// to with CouchDB's HTTP API through AsyncHTTPClient.
///
/// Credentials in the URL (`http://name:password@host/db`) become a Basic `Authorization`
/// header and are removed from the URL: they never appear in a label, a replication id, a
/// checkpoint or an error.
struct HTTPPeer: ReplicationPeer {
  /// The database's URL without credentials, ending without `/`.
  let base: String
  /// The `Authorization` header the URL's credentials make, if it had any.
  let authorization: String?
  /// How long an ordinary request may take; a long poll gets its wait on top.
  let requestTimeout: Duration
  /// The longest answer read (a `_bulk_get` of a batch with attachments).
  static let maxAnswerBytes = 1 << 30

  /// Whether documents are read with `_bulk_get` (else by `open_revs`).
  let usesBulkGet: Bool

  init(url: URL, requestTimeout: Duration = .seconds(60), usesBulkGet: Bool = true) throws {
    self.usesBulkGet = usesBulkGet
    guard var parts = URLComponents(url: url, resolvingAgainstBaseURL: false),
      let scheme = parts.scheme?.lowercased(), ["http", "https"].contains(scheme),
      parts.host != nil
    else {
      throw SetteeError(.invalidArgument, "a replication peer is an http(s) URL of a database")
    }
    if let user = parts.user {
      let password = parts.password ?? ""
      let decoded =
        (user.removingPercentEncoding ?? user) + ":"
        + (password.removingPercentEncoding ?? password)
      authorization = "Basic " + Data(decoded.utf8).base64EncodedString()
    } else {
      authorization = nil
    }
    parts.user = nil
    parts.password = nil
    parts.query = nil
    parts.fragment = nil
    var text = parts.string ?? url.absoluteString
    while text.hasSuffix("/") { text.removeLast() }
    guard parts.path.split(separator: "/").count >= 1 else {
      throw SetteeError(
        .invalidArgument, "\(text) names a server, not a database: add the database's name")
    }
    base = text
    self.requestTimeout = requestTimeout
  }

  var label: String { base }
  var bulkGetCounts: BulkGetCounts { bulkGets.withLock { $0 } }
  private let bulkGets = Locked(BulkGetCounts())

  func identity() async throws -> String { base }

  func exists() async throws -> Bool {
    let answer = try await send(.GET, "")
    if answer.status == 404 { return false }
    try check(answer)
    return true
  }

  func create() async throws {
    let answer = try await send(.PUT, "")
    if answer.status == 412 { return }  // file_exists: made meanwhile
    try check(answer)
  }

  func localDocument(_ id: String) async throws -> JSONObject? {
    let answer = try await send(.GET, "/" + Self.escapeID(id))
    if answer.status == 404 { return nil }
    try check(answer)
    return try answer.object()
  }

  func putLocalDocument(_ document: JSONObject) async throws {
    let id = document["_id"]?.stringValue ?? ""
    try check(try await send(.PUT, "/" + Self.escapeID(id), body: .object(document)))
  }

  func changes(since: JSON, limit: Int, filter: ReplicationFilter, wait: Duration?)
    async throws -> ChangesPage
  {
    var query = [
      ("style", "all_docs"), ("since", Self.sequenceParameter(since)), ("limit", String(limit)),
    ]
    if let wait {
      query += [("feed", "longpoll"), ("timeout", String(wait.components.seconds * 1000))]
    }
    var body: JSON?
    switch filter {
    case .none: break
    case .documentIDs(let ids):
      query.append(("filter", "_doc_ids"))
      body = ["doc_ids": .array(ids.map(JSON.string))]
    case .selector(let selector):
      query.append(("filter", "_selector"))
      body = ["selector": .object(selector)]
    case .design(let name, let parameters):
      // The source runs it; its parameters travel as the query string's, as CouchDB's
      // replicator sends them.
      query.append(("filter", name))
      for member in parameters where !["filter", "since", "limit", "style", "feed", "timeout"].contains(member.key) {
        query.append((member.key, member.value.stringValue ?? JSONWriter.string(member.value)))
      }
    }
    let answer = try await send(
      body == nil ? .GET : .POST, "/_changes", query: query, body: body,
      timeout: requestTimeout + (wait ?? .zero))
    try check(answer)
    let object = try answer.object()
    guard case .array(let results)? = object["results"], let lastSeq = object["last_seq"] else {
      throw malformed("_changes answered without results and last_seq")
    }
    var rows: [ChangeRow] = []
    for result in results {
      guard let id = result["id"]?.stringValue, let seq = result["seq"],
        case .array(let changes)? = result["changes"]
      else { throw malformed("a _changes row without id, seq or changes") }
      let revs = try changes.map { change in
        guard let text = change["rev"]?.stringValue, let rev = try? RevisionID(parsing: text)
        else { throw malformed("a _changes row with a malformed rev") }
        return rev
      }
      rows.append(ChangeRow(id: id, seq: seq, revs: revs, deleted: result["deleted"] == true))
    }
    return ChangesPage(rows: rows, lastSeq: lastSeq, pending: object["pending"]?.intValue)
  }

  func revsDiff(_ offered: [String: [RevisionID]]) async throws -> [String: RevisionDifference] {
    // Printed as it is made (a member for each document of the batch).
    var body = [UInt8(ascii: "{")]
    for (index, (id, revs)) in offered.enumerated() {
      if index > 0 { body.append(UInt8(ascii: ",")) }
      JSONWriter.writeString(id, into: &body)
      body.append(UInt8(ascii: ":"))
      revs.writeJSON(into: &body)
    }
    body.append(UInt8(ascii: "}"))
    let answer = try await send(.POST, "/_revs_diff", rawBody: body)
    try check(answer)
    var differences: [String: RevisionDifference] = [:]
    differences.reserveCapacity(offered.count)
    for member in try answer.object() {
      differences[member.key] = RevisionDifference(
        missing: try revisions(member.value["missing"]),
        possibleAncestors: try revisions(member.value["possible_ancestors"]))
    }
    return differences
  }

  func documents(_ wanted: [WantedRevisions], withData: Bool) async throws -> [BulkDocument] {
    guard usesBulkGet else {
      return try await openRevisions(wanted, withData: withData).map(BulkDocument.object)
    }
    // `{"docs":[{"id":…,"rev":…[,"atts_since":[…]]},…]}`, printed as it is made.
    var body = Array(#"{"docs":["#.utf8)
    var first = true
    for item in wanted {
      for rev in item.revs {
        if !first { body.append(UInt8(ascii: ",")) }
        first = false
        body += #"{"id":"#.utf8
        JSONWriter.writeString(item.id, into: &body)
        body += #","rev":"#.utf8
        JSONWriter.writeString(rev.description, into: &body)
        if withData && !item.attachmentsSince.isEmpty {
          body += #","atts_since":"#.utf8
          item.attachmentsSince.writeJSON(into: &body)
        }
        body.append(UInt8(ascii: "}"))
      }
    }
    body += "]}".utf8
    let answer = try await send(
      .POST, "/_bulk_get",
      query: [("revs", "true"), ("latest", "true")] + (withData ? [("attachments", "true")] : []),
      rawBody: body)
    // A peer without _bulk_get: each document by open_revs.
    if [400, 404, 405, 501].contains(answer.status) {
      return try await openRevisions(wanted, withData: withData).map(BulkDocument.object)
    }
    try check(answer)
    // The documents are kept as the text the peer sent: passed on to a peer as it is (the
    // peer checks it), or read into its stored form by a file target before its write.
    guard let read = BulkGetAnswer(Array(buffer: answer.body)) else {
      throw malformed("_bulk_get answered without results")
    }
    let asked = wanted.reduce(0) { $0 + $1.revs.count }
    bulkGets.withLock {
      $0.attempts += asked
      $0.docs += read.documents.count
    }
    if let error = read.errors.first {
      throw ReplicationError(
        peer: label, status: nil, error: error["error"]?.stringValue ?? "bad_response",
        reason:
          "\(error["id"]?.stringValue ?? "?") \(error["rev"]?.stringValue ?? ""): \(error["reason"]?.stringValue ?? "")"
      )
    }
    return read.documents.map(BulkDocument.text)
  }

  /// The fallback of ``documents(_:)``: `GET /{db}/{id}?open_revs=[…]`, the revision list
  /// split so that each URL stays under 7,000 bytes.
  private func openRevisions(_ wanted: [WantedRevisions], withData: Bool) async throws
    -> [JSONObject]
  {
    var documents: [JSONObject] = []
    for item in wanted {
      var groups: [[RevisionID]] = [[]]
      var length = 0
      for rev in item.revs {
        let size = rev.description.utf8.count + 8
        if length + size > 6_000 && !groups[groups.count - 1].isEmpty {
          groups.append([])
          length = 0
        }
        groups[groups.count - 1].append(rev)
        length += size
      }
      for group in groups {
        var query = [
          ("revs", "true"), ("latest", "true"),
          ("open_revs", JSONWriter.string(.array(group.map { .string($0.description) }))),
        ]
        if withData { query.append(("attachments", "true")) }
        if withData && !item.attachmentsSince.isEmpty {
          query.append(
            (
              "atts_since",
              JSONWriter.string(.array(item.attachmentsSince.map { .string($0.description) }))
            ))
        }
        // As CouchDB's replicator asks: attachments as bytes in a part of their own, not
        // base64 inside the JSON. A peer may still answer JSON.
        let answer = try await send(
          .GET, "/" + Self.escapeID(item.id), query: query,
          headers: [("Accept", "multipart/mixed")])
        try check(answer)
        if let type = answer.contentType, type.lowercased().hasPrefix("multipart/mixed") {
          guard let boundary = Multipart.boundary(ofContentType: type) else {
            throw malformed("open_revs answered multipart/mixed without a boundary")
          }
          do {
            documents += try Multipart.documents(
              fromMixed: Array(buffer: answer.body), boundary: boundary)
          } catch {
            throw malformed("open_revs answered a \(error)")
          }
          continue
        }
        guard case .array(let entries) = try answer.json() else {
          throw malformed("open_revs answered without a JSON array")
        }
        for entry in entries {
          if case .object(let document)? = entry["ok"] { documents.append(document) }
        }
      }
    }
    return documents
  }

  func prepare(_ documents: [BulkDocument]) throws -> [BulkDocument] { documents }

  func write(_ documents: [BulkDocument]) async throws -> [WriteFailure] {
    // As CouchDB's replicator writes: a document whose attachments would swell a
    // `_bulk_docs` request (base64 inside JSON, held whole by the peer) goes on its own as
    // `multipart/related`, its attachments as bytes.
    var batched: [BulkDocument] = []
    var failures: [WriteFailure] = []
    for document in documents {
      if let alone = document.sentAlone {
        if let failure = try await put(alone) { failures.append(failure) }
      } else {
        batched.append(document)
      }
    }
    return try await failures + writeBatch(batched)
  }

  /// `PUT /{db}/{id}?new_edits=false` of one document as `multipart/related`: `nil` when
  /// written, the target's refusal otherwise. An answer that may pass on a retry (5xx,
  /// 429, 408, 401) fails the batch instead.
  private func put(_ document: JSONObject) async throws -> WriteFailure? {
    let id = document["_id"]?.stringValue ?? ""
    let boundary = Multipart.boundary()
    guard let body = Multipart.related(document, boundary: boundary) else {
      return try await writeBatch([.object(document)]).first
    }
    let answer = try await send(
      .PUT, "/" + Self.escapeID(id), query: [("new_edits", "false")], rawBody: body,
      contentType: "multipart/related; boundary=\"\(boundary)\"")
    return try refusal(answer, of: id)
  }

  /// A single document write's answer: `nil` when written, the target's refusal
  /// otherwise. An answer that may pass on a retry (5xx, 429, 408, 401) fails the batch
  /// instead.
  func refusal(_ answer: Answer, of id: String) throws -> WriteFailure? {
    do { try check(answer) } catch let refusal as ReplicationError {
      if refusal.isTransient || answer.status == 401 { throw refusal }
      return WriteFailure(id: id, error: refusal.error, reason: refusal.reason)
    }
    return nil
  }

  /// `_bulk_docs` with `new_edits: false`, halved on 413.
  private func writeBatch(_ documents: [BulkDocument]) async throws -> [WriteFailure] {
    guard !documents.isEmpty else { return [] }
    // The documents' texts, as the source sent them when it was a peer.
    var body = Array(#"{"new_edits":false,"docs":["#.utf8)
    for (index, document) in documents.enumerated() {
      if index > 0 { body.append(UInt8(ascii: ",")) }
      body += document.text
    }
    body += Array("]}".utf8)
    let answer = try await send(.POST, "/_bulk_docs", rawBody: body)
    if answer.status == 413 {
      // Too large for the peer: CouchDB's replicator halves the batch, and a document too
      // large alone is counted as a failure while the others go on.
      guard documents.count > 1 else {
        return [
          WriteFailure(
            id: documents[0].id, error: "too_large",
            reason: "the target refuses a request of \(body.count) bytes (413)")
        ]
      }
      let half = documents.count / 2
      return try await writeBatch(Array(documents[..<half]))
        + writeBatch(Array(documents[half...]))
    }
    if answer.status == 412, let refusal = try? answer.json(),
      refusal["error"]?.stringValue == "missing_stub"
    {
      // CouchDB refuses a whole batch for one stub it lacks and writes none of it. The
      // documents that name attachments by stubs are read again with their data (the
      // replicator's answer to missing_stub); the others are written again as they are.
      var stubbed: [BulkDocument] = []
      var plain: [BulkDocument] = []
      for document in documents {
        if Self.namesStubs(document.text) { stubbed.append(document) } else { plain.append(document) }
      }
      if !stubbed.isEmpty {
        let reason = refusal["reason"]?.stringValue ?? ""
        return try await writeBatch(plain)
          + stubbed.map { WriteFailure(id: $0.id, error: "missing_stub", reason: reason) }
      }
    }
    try check(answer)
    if answer.body.withUnsafeReadableBytes(BulkDocsAnswer.refusesNothing) { return [] }
    guard case .array(let results) = try answer.json() else {
      throw malformed("_bulk_docs answered without a JSON array")
    }
    return results.compactMap { result in
      guard let error = result["error"]?.stringValue else { return nil }
      return WriteFailure(
        id: result["id"]?.stringValue ?? "", error: error,
        reason: result["reason"]?.stringValue ?? "")
    }
  }

  /// Whether a document's text may name an attachment by a stub (`"stub":true`, as
  /// printers write it, with or without a space); a body member of that name only costs a
  /// read again.
  static func namesStubs(_ text: [UInt8]) -> Bool {
    for pattern in [Array(#""stub":true"#.utf8), Array(#""stub": true"#.utf8)]
    where text.withUnsafeBytes({ $0.firstIndex(of: pattern, from: 0) }) != nil {
      return true
    }
    return false
  }

  func ensureFullCommit() async throws {
    try check(try await send(.POST, "/_ensure_full_commit", body: [:]))
  }

  private func revisions(_ json: JSON?) throws -> [RevisionID] {
    try (json?.arrayValue ?? []).map { item in
      guard let text = item.stringValue, let rev = try? RevisionID(parsing: text) else {
        throw malformed("a malformed revision in _revs_diff")
      }
      return rev
    }
  }
}
