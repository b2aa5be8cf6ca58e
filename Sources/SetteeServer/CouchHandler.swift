import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import Settee
import SetteeCore
import SetteeReplication

/// Routes CouchDB's endpoints to Settee's calls. Every call is an async form of the engine
/// (a task waits for a connection; no cooperative thread blocks on SQLite).
struct CouchHandler: Sendable {
  let database: Database
  let configuration: ServerConfiguration
  let authenticator: Authenticator
  /// The `_replicator` database's documents, their replications' states, and the
  /// scheduler that runs them and `POST /_replicate`'s.
  let replicatorDatabase: ReplicatorDatabase
  /// The replications running: started by `POST /_replicate` or by `_replicator` documents.
  var scheduler: ReplicationScheduler { replicatorDatabase.scheduler }
  /// The pace request bodies must keep (``BodyWatchdog``); `nil` in-process.
  var bodyWatchdog: BodyWatchdog? = nil

  /// The API level Settee answers as, in `GET /`.
  static let couchDBVersion = "3.3.3"
  static let setteeVersion = "0.1.0"

  /// Answers `raw`, from `client` (its address, for the failed-login lockout) on `channel`
  /// (closed when the body comes too slowly; `nil` for a request made in-process).
  func handle(_ raw: Request, client: String? = nil, channel: (any Channel)? = nil)
    async throws -> Response
  {
    let request = try CouchRequest(
      raw, maxBodyBytes: configuration.maxRequestBytes,
      bodyPace: bodyWatchdog.flatMap { watchdog in
        channel.map { BodyPace(watchdog: watchdog, channel: $0) }
      })
    var identity: Authenticator.Identity?
    if authenticator.isEnabled {
      identity = try await authenticator.identify(request.headers, client: client)
      // Open to anyone: /_up, and /_session (to log in, out, or ask who one is).
      let open = request.segments == ["_up"] || request.segments == ["_session"]
      // No WWW-Authenticate challenge (CouchDB sends one only with require_valid_user):
      // Foundation's URLSession on Linux waits forever on a challenge it has no delegate
      // for, and browsers would show their own login dialog over the app's.
      if identity == nil && !open {
        throw CouchError(.unauthorized, "unauthorized", "Authentication required.")
      }
    }
    if request.segments == ["_session"] {
      return try await session(request, identity, client: client)
    }
    var response = try await route(request)
    if let cookie = identity?.renewedCookie { response.headers[.setCookie] = cookie }
    return response
  }

  private func route(_ request: CouchRequest) async throws -> Response {
    let segments = request.segments
    guard let first = segments.first else {
      try allow(request, "GET,HEAD")
      return try await welcome()
    }
    if first.hasPrefix("_") && first != Database.defaultCollectionName
      && first != ReplicatorDatabase.databaseName
    {
      return try await serverEndpoint(first, request)
    }
    let db = try collection(named: first)
    guard segments.count > 1 else { return try await databaseEndpoint(db, request) }
    let second = segments[1]
    let rest = Array(segments.dropFirst(2))
    switch second {
    case "_all_docs": return try await allDocs(db, request)
    case "_bulk_docs": return try await bulkDocs(db, request)
    case "_bulk_get": return try await bulkGet(db, request)
    case "_changes": return try await changes(db, request)
    case "_revs_diff": return try await revsDiff(db, request)
    case "_missing_revs": return try await missingRevs(db, request)
    case "_ensure_full_commit":
      try allow(request, "POST")
      try await requireDatabase(db)
      return CouchResponse.json(
        ["ok": true, "instance_start_time": "0"], status: .created)
    case "_revs_limit": return try await revsLimit(db, request)
    case "_find": return try await find(db, request)
    case "_explain": return try await explain(db, request)
    case "_index": return try await index(db, request, rest)
    case "_local_docs": return try await localDocs(db, request)
    case "_design_docs": return try await allDocs(db, request, designOnly: true)
    case "_purge": return try await purge(db, request)
    case "_compact", "_view_cleanup":
      try allow(request, "POST")
      try await requireDatabase(db)
      return CouchResponse.json(["ok": true], status: .accepted)
    case "_security": return try await security(db, request)
    case "_local":
      guard let name = rest.first, rest.count == 1 else {
        throw CouchError(.badRequest, "bad_request", "a local document is /{db}/_local/{id}")
      }
      return try await localDocument(db, LocalDocument.idPrefix + name, request)
    case "_design":
      guard let name = rest.first else {
        throw CouchError(.badRequest, "bad_request", "a design document is /{db}/_design/{name}")
      }
      return try await designEndpoint(db, "_design/" + name, Array(rest.dropFirst()), request)
    default:
      if second.hasPrefix(LocalDocument.idPrefix) {
        guard rest.isEmpty else {
          throw CouchError(.badRequest, "bad_request", "local documents have no attachments")
        }
        return try await localDocument(db, second, request)
      }
      if Document.isDesignID(second) {
        return try await designEndpoint(db, second, rest, request)
      }
      if second.hasPrefix("_") {
        throw CouchError(
          .badRequest, "bad_request", "Only reserved document ids may start with underscore.")
      }
      if rest.isEmpty { return try await document(db, second, request) }
      return try await attachment(db, second, rest.joined(separator: "/"), request)
    }
  }

  private func designEndpoint(
    _ db: DocumentCollection, _ id: String, _ rest: [String], _ request: CouchRequest
  ) async throws -> Response {
    guard let next = rest.first else { return try await document(db, id, request) }
    switch next {
    case "_view":
      guard rest.count == 2 else {
        throw CouchError(.notFound, "not_found", "missing view name")
      }
      return try await view(db, id, rest[1], request)
    case "_info":
      return try await designInfo(db, id, request)
    case "_show", "_list", "_update", "_rewrite", "_search", "_search_info", "_geo":
      throw CouchError(
        .badRequest, "bad_request",
        "Settee stores JavaScript design functions but never runs them: \(next) is not supported")
    default:
      return try await attachment(db, id, rest.joined(separator: "/"), request)
    }
  }

  // MARK: - Names and methods

  /// CouchDB's rule for database names; Settee's default collection is reached as
  /// `_default`, as CouchDB's system databases are named with `_`.
  func collection(named name: String) throws -> DocumentCollection {
    try Self.collection(named: name, in: database)
  }

  /// The collection `name` of `database`, for a name CouchDB allows.
  static func collection(named name: String, in database: Database) throws -> DocumentCollection {
    guard
      name == Database.defaultCollectionName || name == ReplicatorDatabase.databaseName
        || Self.isValidDatabaseName(name)
    else {
      throw CouchError.illegalDatabaseName(name)
    }
    return database.collection(name)
  }

  static func isValidDatabaseName(_ name: String) -> Bool {
    guard let first = name.utf8.first, (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(first)
    else { return false }
    return name.utf8.allSatisfy { byte in
      (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
        || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
        || "_$()+/-".utf8.contains(byte)
    }
  }

  /// Refuses a method the endpoint does not take (`405`, with `Allow`).
  func allow(_ request: CouchRequest, _ methods: String) throws {
    let allowed = methods.split(separator: ",").map(String.init)
    guard !allowed.contains(request.method.rawValue) else { return }
    throw CouchError(
      .methodNotAllowed, "method_not_allowed", "Only \(methods) allowed")
  }

  /// 404 unless the database exists.
  func requireDatabase(_ db: DocumentCollection) async throws {
    guard try await database.collectionExists(db.name) else {
      throw CouchError(.notFound, "not_found", "Database does not exist.")
    }
  }

  // MARK: - Server

  private func welcome() async throws -> Response {
    CouchResponse.json([
      "couchdb": "Welcome", "version": .string(Self.couchDBVersion), "git_sha": "settee",
      "uuid": .string(try await database.uuid()),
      "features": ["access-ready"],
      "vendor": ["name": "Settee", "version": .string(Self.setteeVersion)],
    ])
  }

  private func serverEndpoint(_ name: String, _ request: CouchRequest) async throws -> Response {
    let rest = request.segments.dropFirst()
    switch (name, rest.count) {
    case ("_up", 0):
      try allow(request, "GET,HEAD")
      return CouchResponse.json(["status": "ok", "seeds": [:]])
    case ("_all_dbs", 0):
      try allow(request, "GET,HEAD")
      return CouchResponse.json(.array(try await databaseNames(request).map { .string($0) }))
    case ("_dbs_info", 0):
      try allow(request, "GET,HEAD,POST")
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
    case ("_uuids", 0):
      try allow(request, "GET,HEAD")
      let count = try request.integer("count") ?? 1
      guard count <= 1000 else {
        throw CouchError(.badRequest, "bad_request", "count parameter too large")
      }
      return CouchResponse.json(
        ["uuids": .array((0..<count).map { _ in .string(Document.generateID()) })])
    case ("_active_tasks", 0):
      try allow(request, "GET,HEAD")
      return CouchResponse.json(activeTasks())
    case ("_scheduler", 1) where rest.first == "jobs":
      try allow(request, "GET,HEAD")
      return CouchResponse.json(schedulerJobs())
    case ("_scheduler", 1...3) where rest.first == "docs":
      try allow(request, "GET,HEAD")
      return try await schedulerDocuments(Array(rest.dropFirst()))
    case ("_replicate", 0):
      return try await replicate(request)
    default:
      throw CouchError.illegalDatabaseName(name)
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

  /// `/_session`: who is asking (GET), a login setting an `AuthSession` cookie (POST, JSON
  /// or form-encoded `name` and `password`), a logout clearing it (DELETE).
  private func session(
    _ request: CouchRequest, _ identity: Authenticator.Identity?, client: String?
  ) async throws -> Response {
    try allow(request, "GET,HEAD,POST,DELETE")
    let handlers: JSON = ["cookie", "default"]
    switch request.method {
    case .delete:
      return CouchResponse.json(
        ["ok": true],
        headers: [.setCookie: "AuthSession=; Version=1; Path=/; HttpOnly; Max-Age=0"])
    case .post:
      let (name, password) = try await credentials(request)
      guard authenticator.isEnabled,
        try await authenticator.authenticate(name, password, client: client)
      else {
        throw CouchError(.unauthorized, "unauthorized", "Name or password is incorrect.")
      }
      let token = authenticator.makeToken(name, now: Int64(Date().timeIntervalSince1970))
      return CouchResponse.json(
        ["ok": true, "name": .string(name), "roles": ["_admin"]],
        headers: [.setCookie: Authenticator.setCookie(token)])
    default:
      guard authenticator.isEnabled else {
        // No administrator: every client on loopback is one (CouchDB's "admin party").
        return CouchResponse.json([
          "ok": true, "userCtx": ["name": .null, "roles": ["_admin"]],
          "info": ["authentication_handlers": handlers, "authenticated": "default"],
        ])
      }
      guard let identity else {
        return CouchResponse.json([
          "ok": true, "userCtx": ["name": .null, "roles": []],
          "info": ["authentication_handlers": handlers],
        ])
      }
      var response = CouchResponse.json([
        "ok": true, "userCtx": ["name": .string(identity.name), "roles": ["_admin"]],
        "info": ["authentication_handlers": handlers, "authenticated": .string(identity.method)],
      ])
      if let cookie = identity.renewedCookie { response.headers[.setCookie] = cookie }
      return response
    }
  }

  /// `name` (or `username`) and `password` from a JSON or form-encoded body.
  private func credentials(_ request: CouchRequest) async throws -> (String, String) {
    let type = (request.headers[.contentType] ?? "").lowercased()
    var fields: [String: String] = [:]
    if type.hasPrefix("application/x-www-form-urlencoded") {
      let text = String(decoding: try await request.bodyBytes(), as: UTF8.self)
      for pair in text.split(separator: "&") {
        let parts = pair.split(separator: "=", maxSplits: 1).map {
          $0.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? ""
        }
        if parts.count == 2 { fields[parts[0]] = parts[1] }
      }
    } else {
      for member in try await request.jsonObjectBody() {
        if let value = member.value.stringValue { fields[member.key] = value }
      }
    }
    // CouchDB takes `username` as well (Cloudant's session authenticator sends it).
    guard let name = fields["username"] ?? fields["name"], let password = fields["password"] else {
      throw CouchError(.badRequest, "bad_request", "a login needs name and password")
    }
    return (name, password)
  }

  // MARK: - Databases

  private func databaseEndpoint(_ db: DocumentCollection, _ request: CouchRequest) async throws
    -> Response
  {
    try allow(request, "GET,HEAD,PUT,DELETE,POST")
    switch request.method {
    case .put:
      guard try await database.createCollection(db.name) else {
        throw CouchError(
          .preconditionFailed, "file_exists",
          "The database could not be created, the file already exists.")
      }
      return CouchResponse.json(
        ["ok": true], status: .created, headers: [.location: "/\(Self.escape(db.name))"])
    case .delete:
      guard request.query["rev"] == nil else {
        throw CouchError(
          .badRequest, "bad_request",
          "You tried to DELETE a database with a ?=rev parameter. Did you mean to DELETE a document instead?"
        )
      }
      do { try await database.deleteCollection(db.name) } catch let error as SetteeError
        where error.code == .notFound
      {
        throw CouchError(.notFound, "not_found", "Database does not exist.")
      }
      // Its _security object goes with it.
      try await database.setMetadata(nil, forKey: Self.securityKey(db.name))
      return CouchResponse.json(["ok": true])
    case .post:
      try await requireDatabase(db)
      var body = try await request.jsonObjectBody()
      if body["_id"] == nil { body["_id"] = .string(Document.generateID()) }
      let result = try await db.put(body)
      try await syncDesignDocuments(db, [result.id])
      return CouchResponse.written(
        result, location: "/\(Self.escape(db.name))/\(Self.escape(result.id))")
    default:
      guard let info = try await databaseInfo(db) else {
        throw CouchError(.notFound, "not_found", "Database does not exist.")
      }
      return CouchResponse.json(info)
    }
  }

  /// CouchDB's `GET /{db}` answer, from one read; `nil` when the database does not exist.
  func databaseInfo(_ db: DocumentCollection) async throws -> JSON? {
    guard let statistics = try await db.statistics() else { return nil }
    // The file and its write-ahead log, which all collections share.
    let size = [database.path, database.path.map { $0 + "-wal" }].compactMap { $0 }.reduce(0) {
      $0 + ((try? FileManager.default.attributesOfItem(atPath: $1)[.size] as? Int) ?? 0)
    }
    return [
      "db_name": .string(db.name),
      "purge_seq": .string(String(statistics.purgeSequence)),
      "update_seq": .string(statistics.sequence),
      "sizes": [
        "file": .int(Int64(size)), "external": .int(Int64(size)), "active": .int(Int64(size)),
      ],
      "props": [:],
      "doc_del_count": .int(Int64(statistics.deletedCount)),
      "doc_count": .int(Int64(statistics.count)),
      "disk_format_version": 8,
      "compact_running": false,
      "cluster": ["q": 1, "n": 1, "w": 1, "r": 1],
      "instance_start_time": "0",
    ]
  }

  /// A name for a `Location` header, percent-encoded as a path segment.
  static func escape(_ name: String) -> String {
    var allowed = CharacterSet.urlPathAllowed
    allowed.remove("/")
    return name.addingPercentEncoding(withAllowedCharacters: allowed) ?? name
  }
}
