import Foundation
import HTTPTypes
import Hummingbird
import Settee
import SetteeCore
import SetteeJavaScript

extension CouchHandler {
  // MARK: - _find, _explain

  /// The request's query, in CouchDB's dialect, and its body.
  private func findQuery(_ request: CouchRequest) async throws -> (FindQuery, JSON) {
    var body = try await request.jsonBody(lastDuplicateWins: true)
    if case .object(var members) = body {
      try Self.checkMangoRequest(members)
      // `stale` is CouchDB's older spelling of `update`/`stable`: nothing to do here.
      members["stale"] = nil
      body = .object(members)
    }
    do { return (try FindQuery(json: body, dialect: .couchDB), body) } catch let error
      as SetteeError
    {
      throw CouchError(.badRequest, error.couchDBError ?? error.code.name, error.message)
    }
  }

  /// The members of a `_find` or `_explain` request CouchDB takes, in the order its Mango
  /// checks them (`mango_opts`).
  static let mangoRequestMembers = [
    "selector", "use_index", "bookmark", "limit", "skip", "sort", "fields", "partition", "r",
    "conflicts", "update", "stable", "stale", "execution_stats", "allow_fallback",
  ]

  /// Refuses a `_find`/`_explain` request's shape as CouchDB's Mango refuses it, with its
  /// error names: no `selector` (`missing_required_key`), one that is not an object
  /// (`invalid_selector_json`), a `limit` or `skip` that is not a count
  /// (`invalid_non_neg_integer`), a `sort` that is not a list (`invalid_sort_json`), a
  /// member it does not know (`invalid_key`). What is inside the selector is the query's
  /// to judge.
  static func checkMangoRequest(_ body: JSONObject) throws {
    func refuse(_ error: String, _ reason: String) -> CouchError {
      CouchError(.badRequest, error, reason)
    }
    guard let selector = body["selector"] else {
      throw refuse("missing_required_key", "Missing required key: selector")
    }
    guard selector.objectValue != nil else {
      throw refuse(
        "invalid_selector_json",
        "Selector must be a JSON object, not: \(JSONWriter.string(selector))")
    }
    for name in ["limit", "skip"] {
      guard let value = body[name] else { continue }
      guard let count = value.int64Value, count >= 0, case .int = value else {
        throw refuse(
          "invalid_non_neg_integer",
          "\(JSONWriter.string(value)) is not an integer greater than or equal to zero")
      }
    }
    if let sort = body["sort"], sort.arrayValue == nil {
      throw refuse(
        "invalid_sort_json", "Sort must be an array of sort specs, not: \(JSONWriter.string(sort))")
    }
    if let unknown = body.first(where: { !mangoRequestMembers.contains($0.key) }) {
      throw refuse("invalid_key", "Invalid key \(unknown.key) for this request.")
    }
  }

  func find(_ db: DocumentCollection, _ request: CouchRequest) async throws -> Response {
    try allow(request, "POST")
    var (query, body) = try await findQuery(request)
    if db.name == UsersDatabase.name, try await !isDatabaseAdmin(db, request.user),
      case .object(var members) = body, let selector = members["selector"]
    {
      members["selector"] = Self.usersSelector(selector, request.user)
      query = try FindQuery(json: .object(members), dialect: .couchDB)
    }
    let page = try await db.findPage(query)
    if page.documents.isEmpty { try await requireDatabase(db) }
    return CouchResponse.json(page.json)
  }

  func explain(_ db: DocumentCollection, _ request: CouchRequest) async throws -> Response {
    try allow(request, "POST")
    try await requireDatabase(db)
    let (query, body) = try await findQuery(request)
    return try await explainCouchDB(db, query, body.objectValue ?? [:])
  }

  // MARK: - _index

  func index(_ db: DocumentCollection, _ request: CouchRequest, _ rest: [String]) async throws
    -> Response
  {
    try await requireDatabase(db)
    if rest == ["_bulk_delete"] {
      try allow(request, "POST")
      let body = try await request.jsonObjectBody()
      guard let names = body["docids"]?.arrayValue else {
        throw CouchError(
          .badRequest, "bad_request", "`docids` must be an array of design document ids")
      }
      let indexes = try await db.indexes()
      var success: [JSON] = []
      var failures: [JSON] = []
      for name in names.compactMap(\.stringValue) {
        let ddoc = IndexDefinition.designDocumentID(name)
        let matching = indexes.filter { $0.designDocumentID == ddoc }
        if matching.isEmpty {
          failures.append(["id": .string(ddoc), "error": "not_found"])
          continue
        }
        for index in matching {
          try await db.deleteIndex(named: index.name)
          try await updateDesignDocument(db, ddoc, removing: index.name)
        }
        success.append(["id": .string(ddoc), "ok": true])
      }
      return CouchResponse.json(["success": .array(success), "fail": .array(failures)])
    }
    if !rest.isEmpty {
      // DELETE /{db}/_index/{ddoc}/json/{name} (the ddoc with or without `_design/`).
      try allow(request, "DELETE")
      var parts = rest
      if parts.first == "_design" { parts.removeFirst() }
      guard parts.count == 3 else {
        throw CouchError(
          .badRequest, "bad_request", "an index is deleted at /{db}/_index/{ddoc}/json/{name}")
      }
      let ddoc = IndexDefinition.designDocumentID(parts[0])
      // Any type may be named; only the index's own finds it (CouchDB: 404 otherwise).
      guard
        let index = try await db.indexes().first(where: {
          $0.name == parts[2] && $0.designDocumentID == ddoc && $0.kind.rawValue == parts[1]
        })
      else {
        throw CouchError(.notFound, "not_found", "Index not found")
      }
      try await db.deleteIndex(named: index.name)
      try await updateDesignDocument(db, ddoc, removing: index.name)
      return CouchResponse.ok()
    }
    try allow(request, "GET,HEAD,POST")
    if request.method == .post {
      var body = try await request.jsonObjectBody()
      // Unnamed: the name (and design document) CouchDB would give it, a digest of the
      // request (``ErlangTerm/mangoIndexName(_:)``).
      if body["name"] == nil || body["ddoc"] == nil {
        let generated = ErlangTerm.mangoIndexName(body)
        if body["name"] == nil { body["name"] = .string(generated) }
        if body["ddoc"] == nil { body["ddoc"] = .string("_design/" + generated) }
      }
      try Self.checkIndexDirections(body)
      let definition: IndexDefinition
      do {
        definition = try IndexDefinition(json: .object(body))
      } catch let error as SetteeError {
        throw CouchError(.badRequest, error.code.name, error.message)
      }
      let existed = try await db.indexes().contains(definition)
      _ = try await db.ensureIndexed(definition)
      // As CouchDB (and Cloudant, for text): the index is kept as a design document too,
      // so it replicates.
      try await updateDesignDocument(
        db, definition.designDocumentID, adding: definition, given: body["index"])
      return CouchResponse.json([
        "result": existed ? "exists" : "created", "id": .string(definition.designDocumentID),
        "name": .string(definition.name),
      ])
    }
    // CouchDB lists them by design document, then name, each with `partitioned`.
    let indexes = try await db.indexes().sorted {
      ($0.designDocumentID, $0.name) < ($1.designDocumentID, $1.name)
    }
    let listed = [IndexDefinition.allDocsListing] + indexes.map(Self.listedWithPartitioned)
    let (skip, limit) = try Self.indexListingRange(request, count: listed.count)
    return CouchResponse.json([
      "total_rows": .int(Int64(listed.count)),
      "indexes": .array(Array(listed.dropFirst(skip).prefix(limit))),
    ])
  }

  /// `GET _index?skip=…&limit=…`: as CouchDB's Mango, a limit under 1 or a negative skip
  /// is `invalid_list_index_params`, which CouchDB answers with 500 and its own test suite
  /// expects so; a skip past the end lists nothing.
  static func indexListingRange(_ request: CouchRequest, count: Int) throws -> (Int, Int) {
    func parameter(_ name: String) throws -> Int? {
      guard let text = request.query[name] else { return nil }
      guard let value = Int(text) else {
        throw CouchError(
          .badRequest, "invalid_non_neg_integer",
          "\(text) is not an integer greater than or equal to zero")
      }
      return value
    }
    let limit = try parameter("limit") ?? count
    let skip = try parameter("skip") ?? 0
    guard limit >= 1, skip >= 0 else {
      throw CouchError(
        .internalServerError, "invalid_list_index_params",
        "Index parameter ranges: limit > 1, skip > 0")
    }
    return (min(skip, count), limit)
  }

  /// An index's fields sorted in more than one direction, refused as CouchDB's
  /// `mango_sort` refuses them.
  static func checkIndexDirections(_ body: JSONObject) throws {
    guard case .array(let fields)? = body["index"]?["fields"] else { return }
    let directions = Set(
      fields.compactMap { field -> String? in
        // A bare name sorts ascending, as CouchDB's `mango_sort` reads it.
        if case .string = field { return "asc" }
        guard case .object(let sorted) = field, sorted.count == 1 else { return nil }
        return sorted[0].value.stringValue
      })
    if directions.count > 1 {
      throw CouchError(
        .badRequest, "unsupported_mixed_sort",
        "Sorts currently only support a single direction for all fields.")
    }
  }

  // MARK: - Views

  /// `_design/{d}/_view/{v}` runs the design document's JavaScript view `v` (on
  /// JavaScriptCore, see SetteeJavaScript), else queries the view `{d}/{v}` that a
  /// `"language": "settee"` design document defines, else the collection's view named `v`
  /// (declarative, or a Swift view registered in this process).
  func view(_ db: DocumentCollection, _ ddoc: String, _ name: String, _ request: CouchRequest)
    async throws -> Response
  {
    try allow(request, "GET,HEAD,POST")
    try await requireDatabase(db)
    // A view of a "language": "settee" design document first, then the collection's own.
    let views = try await db.views()
    let qualified = String(ddoc.dropFirst("_design/".count)) + "/" + name
    let view: View
    if let design = try await db.get(ddoc),
      design.json["views"]?[name]?["map"]?.stringValue != nil,
      design.json["language"]?.stringValue ?? "javascript" == "javascript"
    {
      // A JavaScript map function, run on JavaScriptCore.
      do {
        view = try await db.designView(qualified, timeLimit: configuration.javaScriptTimeLimit)
      } catch let error as SetteeError {
        throw CouchError(
          .badRequest,
          error.message.hasPrefix("compilation_error") ? "compilation_error" : "bad_request",
          error.message)
      }
    } else {
      let name = views.contains(where: { $0.name == qualified }) ? qualified : name
      guard views.contains(where: { $0.name == name }) else {
        throw CouchError(.notFound, "not_found", "missing_named_view")
      }
      view = db.view(named: name)
    }
    var options = try await requestedViewOptions(request)
    if options["keys"] != nil {
      // CouchDB fetches by `keys` alone when they are given.
      for bound in ["key", "startkey", "endkey"] { options[bound] = nil }
    }
    if options["key"] != nil || options["keys"] != nil, options["endkey_docid"] == nil,
      options["inclusive_end"] == false || options["inclusive_end"] == "false"
    {
      // A key's range both starts and ends at it, and CouchDB excludes its end: no rows.
      options["limit"] = 0
    }
    var query: ViewQuery
    do { query = try ViewQuery(json: .object(options)) } catch let error as SetteeError {
      throw CouchError(.badRequest, "query_parse_error", error.message)
    }
    // CouchDB gives every view answer its offset.
    if options["include_offset"] == nil { query.includeOffset = true }
    let result: ViewResult
    do { result = try await view.query(query) } catch let error as SetteeError
      where error.code == .invalidQuery
    {
      var refusal = CouchError(.badRequest, "query_parse_error", error.message)
      if error.message.hasPrefix(ViewQuery.reversedRange) {
        refusal.ref = Int64(error.message.utf8.reduce(5381) { ($0 &* 33 &+ Int($1)) & 0x7fff_ffff })
      }
      throw refusal
    }
    guard case .object(var json) = result.json else { return CouchResponse.json(result.json) }
    if options["update_seq"] == true || options["update_seq"] == "true" {
      json["update_seq"] = .string(try await db.sequenceString(result.updateSeq))
    }
    if query.includeDocs, options["conflicts"] == true || options["conflicts"] == "true",
      case .array(let rows)? = json["rows"]
    {
      json["rows"] = .array(try await withConflicts(rows, db, query.attachments))
    }
    return CouchResponse.json(.object(json))
  }
}
