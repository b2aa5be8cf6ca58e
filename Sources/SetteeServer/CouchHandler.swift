import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import Settee
import SetteeCore
import SetteeJavaScript
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
  /// Each database's `validate_doc_update` functions, compiled.
  let validations = DesignValidationCache()

  /// The API level Settee answers as, in `GET /`.
  static let couchDBVersion = "3.3.3"
  static let setteeVersion = SetteeVersion.string

  /// Answers `raw` from `client` (its address, for the failed-login lockout), whom
  /// ``Authentication`` identified, on `channel` (closed when the body comes too slowly;
  /// `nil` for a request made in-process).
  func handle(
    _ raw: Request, identity: Authenticator.Identity? = nil, client: String? = nil,
    channel: (any Channel)? = nil
  ) async throws -> Response {
    var request = try CouchRequest(
      raw, maxBodyBytes: configuration.maxRequestBytes,
      bodyPace: bodyWatchdog.flatMap { watchdog in
        channel.map { BodyPace(watchdog: watchdog, channel: $0) }
      })
    // An administrator, a user of `_users`, or anonymous; without an administrator, every
    // client on loopback is one ("admin party"), as CouchDB's session says.
    if let identity {
      request.user = UserContext(name: identity.name, roles: identity.roles)
    } else if !authenticator.isEnabled {
      request.user = .administrator
    }
    if request.segments == ["_session"] {
      return try await session(request, identity, client: client)
    }
    return try await route(request)
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
        || name == UsersDatabase.name || Self.isValidDatabaseName(name)
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

  /// A name for a `Location` header, percent-encoded as a path segment.
  static func escape(_ name: String) -> String {
    var allowed = CharacterSet.urlPathAllowed
    allowed.remove("/")
    return name.addingPercentEncoding(withAllowedCharacters: allowed) ?? name
  }
}
