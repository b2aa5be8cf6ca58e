import Foundation
import Hummingbird
import Settee
import SetteeCore
import SetteeReplication

extension CouchHandler {
  // MARK: - Server

  /// `GET /`: CouchDB's welcome.
  func welcome() async throws -> Response {
    CouchResponse.json([
      "couchdb": "Welcome", "version": .string(Self.couchDBVersion), "git_sha": "settee",
      "uuid": .string(try await database.uuid()),
      "features": ["access-ready"],
      "vendor": ["name": "Settee", "version": .string(Self.setteeVersion)],
    ])
  }

  /// `GET /_up`.
  func up(_ request: CouchRequest, _ rest: [String]) async throws -> Response {
    try only(rest, [], request, "GET,HEAD")
    return CouchResponse.json(["status": "ok", "seeds": [:]])
  }

  /// `GET /_all_dbs`.
  func allDatabases(_ request: CouchRequest, _ rest: [String]) async throws -> Response {
    try only(rest, [], request, "GET,HEAD")
    return CouchResponse.json(.array(try await databaseNames(request).map { .string($0) }))
  }

  /// `GET /_dbs_info` (every database) or `POST /_dbs_info` with `keys`.
  func databasesInfo(_ request: CouchRequest, _ rest: [String]) async throws -> Response {
    try only(rest, [], request, "GET,HEAD,POST")
    let names: [String]
    if request.method == .post {
      let body = try await request.jsonObjectBody()
      guard let keys = body["keys"]?.arrayValue else {
        throw CouchError(.badRequest, "bad_request", "`keys` member must exist.")
      }
      names = try keys.map {
        guard let name = $0.stringValue else {
          throw CouchError(.badRequest, "bad_request", "`keys` must be an array of strings")
        }
        return name
      }
    } else {
      names = try await databaseNames(request)
    }
    var answers: [JSON] = []
    for name in names {
      if let db = try? collection(named: name), let info = try await databaseInfo(db) {
        answers.append(["key": .string(name), "info": info])
      } else {
        answers.append(["key": .string(name), "error": "not_found"])
      }
    }
    return CouchResponse.json(.array(answers))
  }

  /// `GET /_uuids?count=N` (at most 1,000).
  func uuids(_ request: CouchRequest, _ rest: [String]) async throws -> Response {
    try only(rest, [], request, "GET,HEAD")
    let count = try request.integer("count") ?? 1
    guard count <= 1000 else {
      throw CouchError(.badRequest, "bad_request", "count parameter too large")
    }
    return CouchResponse.json(
      ["uuids": .array((0..<count).map { _ in .string(Document.generateID()) })])
  }

  /// `/_scheduler/jobs` and `/_scheduler/docs[/_replicator[/{docid}]]`.
  func scheduler(_ request: CouchRequest, _ rest: [String]) async throws -> Response {
    switch (rest.first, rest.count) {
    case ("jobs"?, 1):
      try allow(request, "GET,HEAD")
      return CouchResponse.json(schedulerJobs())
    case ("docs"?, 1...3):
      try allow(request, "GET,HEAD")
      return try await schedulerDocuments(Array(rest.dropFirst()))
    default:
      throw CouchError.illegalDatabaseName("_scheduler")
    }
  }

  /// The collections served as databases, in CouchDB's `_all_dbs` order and options.
  private func databaseNames(_ request: CouchRequest) async throws -> [String] {
    var names = try await database.collectionNames().filter {
      $0 == Database.defaultCollectionName || $0 == ReplicatorDatabase.databaseName
        || Self.isValidDatabaseName($0)
    }
    if let start = try request.jsonParameter("startkey") ?? request.jsonParameter("start_key"),
      let start = start.stringValue
    {
      names = names.filter { $0 >= start }
    }
    if let end = try request.jsonParameter("endkey") ?? request.jsonParameter("end_key"),
      let end = end.stringValue
    {
      names = names.filter { $0 <= end }
    }
    if try request.bool("descending") { names.reverse() }
    names = Array(names.dropFirst(try request.integer("skip") ?? 0))
    if let limit = try request.integer("limit") { names = Array(names.prefix(limit)) }
    return names
  }
}
