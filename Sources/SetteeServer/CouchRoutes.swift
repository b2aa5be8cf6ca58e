import Foundation
import Hummingbird
import Settee
import SetteeCore
import SetteeReplication

/// CouchDB's endpoints and who answers each, in one place, as `chttpd_httpd_handlers`
/// keeps them: server endpoints by their first segment (`/_all_dbs`), database endpoints
/// by their second (`/{db}/_find`), design-document endpoints by their third
/// (`/{db}/_design/{d}/_view`). What no table names is a database, a document or an
/// attachment. The handlers are in the files of their area (`CouchHandler+Server`,
/// `+Session`, `+Databases`, `+Documents`, `+Bulk`, `+Changes`, `+Query`,
/// `+DesignDocuments`, `+Replicate`).
extension CouchHandler {
  /// An endpoint of the server: the request and the segments after its name.
  typealias ServerEndpoint =
    @Sendable (CouchHandler, CouchRequest, [String]) async throws ->
    Response
  /// An endpoint of a database: the database, the request, the segments after its name.
  typealias DatabaseEndpoint =
    @Sendable (
      CouchHandler, DocumentCollection, CouchRequest, [String]
    ) async throws -> Response
  /// An endpoint of a design document: the database, the document's id, the request, the
  /// segments after its name.
  typealias DesignEndpoint =
    @Sendable (
      CouchHandler, DocumentCollection, String, CouchRequest, [String]
    ) async throws -> Response

  static let serverEndpoints: [String: ServerEndpoint] = [
    "_up": { handler, request, rest in try await handler.up(request, rest) },
    "_utils": { handler, request, rest in try await handler.console(request, rest) },
    "_all_dbs": { handler, request, rest in try await handler.allDatabases(request, rest) },
    "_dbs_info": { handler, request, rest in try await handler.databasesInfo(request, rest) },
    "_uuids": { handler, request, rest in try await handler.uuids(request, rest) },
    "_active_tasks": { handler, request, rest in
      try handler.only(rest, [], request, "GET,HEAD")
      return CouchResponse.json(handler.activeTasks())
    },
    "_scheduler": { handler, request, rest in try await handler.scheduler(request, rest) },
    "_membership": { handler, request, rest in try await handler.membership(request, rest) },
    "_node": { handler, request, rest in try await handler.node(request, rest) },
    "_replicate": { handler, request, rest in
      try handler.only(rest, [], request, "POST")
      return try await handler.replicate(request)
    },
  ]

  static let databaseEndpoints: [String: DatabaseEndpoint] = [
    "_all_docs": { handler, db, request, _ in try await handler.allDocs(db, request) },
    "_design_docs": { handler, db, request, _ in
      try await handler.allDocs(db, request, designOnly: true)
    },
    "_local_docs": { handler, db, request, _ in try await handler.localDocs(db, request) },
    "_bulk_docs": { handler, db, request, _ in try await handler.bulkDocs(db, request) },
    "_bulk_get": { handler, db, request, _ in try await handler.bulkGet(db, request) },
    "_changes": { handler, db, request, _ in try await handler.changes(db, request) },
    "_revs_diff": { handler, db, request, _ in try await handler.revsDiff(db, request) },
    "_missing_revs": { handler, db, request, _ in try await handler.missingRevs(db, request) },
    "_revs_limit": { handler, db, request, _ in try await handler.revsLimit(db, request) },
    "_ensure_full_commit": { handler, db, request, _ in
      try await handler.ensureFullCommit(db, request)
    },
    "_find": { handler, db, request, _ in try await handler.find(db, request) },
    "_explain": { handler, db, request, _ in try await handler.explain(db, request) },
    "_index": { handler, db, request, rest in try await handler.index(db, request, rest) },
    "_purge": { handler, db, request, _ in try await handler.purge(db, request) },
    "_compact": { handler, db, request, rest in try await handler.compact(db, request, rest) },
    "_view_cleanup": { handler, db, request, _ in try await handler.viewCleanup(db, request) },
    "_security": { handler, db, request, _ in try await handler.security(db, request) },
    "_local": { handler, db, request, rest in
      guard let name = rest.first, rest.count == 1 else {
        throw CouchError(.badRequest, "bad_request", "a local document is /{db}/_local/{id}")
      }
      return try await handler.localDocument(db, LocalDocument.idPrefix + name, request)
    },
    "_design": { handler, db, request, rest in
      guard let name = rest.first else {
        throw CouchError(.badRequest, "bad_request", "a design document is /{db}/_design/{name}")
      }
      return try await handler.designEndpoint(
        db, "_design/" + name, Array(rest.dropFirst()), request)
    },
  ]

  static let designEndpoints: [String: DesignEndpoint] = [
    "_view": { handler, db, id, request, rest in
      guard rest.count == 1 else { throw CouchError(.notFound, "not_found", "missing view name") }
      return try await handler.view(db, id, rest[0], request)
    },
    "_info": { handler, db, id, request, _ in try await handler.designInfo(db, id, request) },
  ]

  /// Design functions CouchDB runs and Settee does not.
  static let unsupportedDesignEndpoints: Set<String> = [
    "_show", "_list", "_update", "_rewrite", "_search", "_search_info", "_geo",
  ]

  /// The handler of `request`, by the tables above.
  func route(_ request: CouchRequest) async throws -> Response {
    try await authorize(request)
    let segments = request.segments
    guard let first = segments.first else {
      try allow(request, "GET,HEAD")
      return try await welcome()
    }
    if first.hasPrefix("_") && first != Database.defaultCollectionName
      && first != ReplicatorDatabase.databaseName && first != UsersDatabase.name
    {
      guard let endpoint = Self.serverEndpoints[first] else {
        throw CouchError.illegalDatabaseName(first)
      }
      return try await endpoint(self, request, Array(segments.dropFirst()))
    }
    let db = try collection(named: first)
    guard segments.count > 1 else { return try await databaseEndpoint(db, request) }
    let second = segments[1]
    let rest = Array(segments.dropFirst(2))
    if let endpoint = Self.databaseEndpoints[second] {
      return try await endpoint(self, db, request, rest)
    }
    if second.hasPrefix(LocalDocument.idPrefix) {
      guard rest.isEmpty else {
        throw CouchError(.badRequest, "bad_request", "local documents have no attachments")
      }
      return try await localDocument(db, second, request)
    }
    if Document.isDesignID(second) { return try await designEndpoint(db, second, rest, request) }
    if second.hasPrefix("_") {
      // CouchDB: reading an endpoint it does not have is a 404; writing such an id a 400.
      if request.method == .get || request.method == .head {
        throw CouchError(.notFound, "not_found", "missing")
      }
      throw CouchError(
        .badRequest, "illegal_docid", "Only reserved document ids may start with underscore.")
    }
    if rest.isEmpty { return try await document(db, second, request) }
    return try await attachment(db, second, rest.joined(separator: "/"), request)
  }

  /// `/{db}/_design/{name}` and what follows it: the document, an endpoint of the design
  /// document, or an attachment of it.
  func designEndpoint(
    _ db: DocumentCollection, _ id: String, _ rest: [String], _ request: CouchRequest
  ) async throws -> Response {
    guard let next = rest.first else { return try await document(db, id, request) }
    if let endpoint = Self.designEndpoints[next] {
      return try await endpoint(self, db, id, request, Array(rest.dropFirst()))
    }
    if Self.unsupportedDesignEndpoints.contains(next) {
      throw CouchError(
        .badRequest, "bad_request",
        "Settee stores JavaScript design functions but never runs them: \(next) is not supported")
    }
    return try await attachment(db, id, rest.joined(separator: "/"), request)
  }

  /// Refuses a path that goes on past a server endpoint's name where it takes nothing
  /// (CouchDB's `illegal_database_name` for the first segment), then a method the endpoint
  /// does not take (`405`).
  func only(_ rest: [String], _ expected: [String], _ request: CouchRequest, _ methods: String)
    throws
  {
    guard rest == expected else { throw CouchError.illegalDatabaseName(request.segments[0]) }
    try allow(request, methods)
  }
}
