import Foundation
import HTTPTypes
import Hummingbird
import Settee
import SetteeCore
import SetteeJavaScript

/// `_all_docs` and `_design_docs`, and the view parameters they share with views.
extension CouchHandler {
  // MARK: - _all_docs

  func allDocs(_ db: DocumentCollection, _ request: CouchRequest, designOnly: Bool = false)
    async throws -> Response
  {
    try allow(request, "GET,HEAD,POST")
    var options = try await requestedViewOptions(request)
    // CouchDB's all-documents ranges: `key` wins over `startkey` and `endkey`, and a
    // document id bound (`startkey_docid`) stands for a missing key bound, since a row's
    // key is its id.
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
      descending
        ? start.utf8.lexicographicallyPrecedes(end.utf8)
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
    if query.includeDocs, db.name == UsersDatabase.name, case .array(let rows)? = json["rows"],
      try await !isDatabaseAdmin(db, request.user)
    {
      // `users_db_public`: each document reduced to the public fields, `_id` and `_rev`
      // only when they are named (CouchDB's `filtered_view_cb`).
      json["rows"] = .array(
        rows.map { row in
          guard case .object(var object) = row, case .object(let document)? = object["doc"] else {
            return row
          }
          object["doc"] = .object(
            UsersDatabase.publicMembers(
              of: document, configuration.usersPublicFields, keepingIdentity: false) ?? [:])
          return .object(object)
        })
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
  /// A view or `_all_docs` request's options: the query string's, then a POST body's
  /// members over them, in CouchDB's spellings, `keys` checked to be an array.
  func requestedViewOptions(_ request: CouchRequest) async throws -> JSONObject {
    var options = try viewOptions(request)
    if request.method == .post {
      for member in try await request.jsonObjectBody() { options[member.key] = member.value }
    }
    Self.canonicalize(&options)
    try Self.requireKeysArray(options, request)
    return options
  }

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
}
