import Foundation
import HTTPTypes
import Hummingbird
import Settee
import SetteeCore

extension CouchHandler {
  // MARK: - Databases

  func databaseEndpoint(_ db: DocumentCollection, _ request: CouchRequest) async throws
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
      if db.name == UsersDatabase.name { try await UsersDatabase.ensureAuthDesign(in: database) }
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
      body = try await requireValid(db, body, request)
      let result = try await db.put(body)
      try await syncDesignDocuments(db, [result.id])
      return CouchResponse.written(
        result, location: "/\(Self.escape(db.name))/\(Self.escape(result.id))", etag: false)
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

  /// `POST /{db}/_ensure_full_commit`: every write is durable when it is answered.
  func ensureFullCommit(_ db: DocumentCollection, _ request: CouchRequest) async throws
    -> Response
  {
    try allow(request, "POST")
    try await requireDatabase(db)
    return CouchResponse.json(["ok": true, "instance_start_time": "0"], status: .created)
  }

  /// `POST /{db}/_compact`: replaced revisions' bodies and attachments are cleared
  /// (``DocumentCollection/compact()``) before the answer, so a client that waits for
  /// `compact_running` to be false finds them gone; SQLite reuses the freed pages.
  /// `POST /{db}/_compact/{ddoc}` compacts that design document's views, which have
  /// nothing to compact here: it answers as CouchDB does and leaves the documents alone.
  /// Both take only JSON, as CouchDB's do (`415`).
  func compact(_ db: DocumentCollection, _ request: CouchRequest, _ rest: [String]) async throws
    -> Response
  {
    try allow(request, "POST")
    try await requireDatabase(db)
    try request.requireJSONType()
    guard let design = rest.first else {
      try await db.compact()
      return CouchResponse.json(["ok": true], status: .accepted)
    }
    guard rest.count == 1, try await db.get("_design/" + design) != nil else {
      throw CouchError(.notFound, "not_found", "missing")
    }
    return CouchResponse.json(["ok": true], status: .accepted)
  }

  /// `POST /{db}/_view_cleanup`: accepted; views are cleaned as their design documents
  /// change.
  func viewCleanup(_ db: DocumentCollection, _ request: CouchRequest) async throws -> Response {
    try allow(request, "POST")
    try await requireDatabase(db)
    try request.requireJSONType()
    return CouchResponse.json(["ok": true], status: .accepted)
  }
}
