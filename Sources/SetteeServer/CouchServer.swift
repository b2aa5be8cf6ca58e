import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import Settee
import SetteeCore
import SetteeReplication

/// How ``CouchServer`` listens and what it accepts.
public struct ServerConfiguration: Sendable {
  /// The address to listen on: loopback by default.
  public var host: String
  /// The port; 0 picks a free one (``CouchServer/run(onListening:)`` tells which).
  public var port: Int
  /// The largest request body read, in bytes (CouchDB's `max_http_request_size`); a
  /// larger one is answered `413 too_large` before it is read whole. Attachments are
  /// streamed to disk, bounded by ``maxAttachmentBytes`` instead.
  public var maxRequestBytes: Int
  /// The largest attachment stored, in bytes as it is decoded (CouchDB's `[couchdb]
  /// max_attachment_size`), whether it arrives alone, gzip-encoded or in a multipart
  /// document; a larger one is answered `413 attachment_too_large` naming it, and nothing
  /// is written. 256 MiB by default.
  public var maxAttachmentBytes: Int
  /// How much is logged to standard error: one line per request at `.info`.
  public var logLevel: LogLevel
  /// The origins browsers may call from (CORS): `["*"]` for any; empty: CORS is off.
  public var corsOrigins: [String]
  /// Seconds a connection may stay idle, or send a request this slowly, before it is
  /// closed (a response being written, such as a continuous feed, is not idle).
  public var idleTimeout: Double
  /// Bytes a second a request body must average over each ``idleTimeout`` while the server
  /// waits for it; a slower body is cut, answered `408 request_timeout` and its connection
  /// closed. 500 by default (Apache's `mod_reqtimeout` asks the same).
  public var minimumBodyRate: Int
  /// How many replications run at once and how failing ones wait (CouchDB's
  /// `[replicator]` `max_jobs`, `interval`, `max_churn`; ``ReplicationScheduler``).
  public var replicationLimits: ReplicationScheduler.Limits
  /// Seconds one call into a design document's JavaScript may run (a view's batch, a
  /// filter's page, a `validate_doc_update`) before it is stopped and its request answered
  /// with an error: CouchDB's `os_process_timeout`, 5 by default.
  public var javaScriptTimeLimit: Double
  /// The members of a user document in `_users` that every user may read of another's
  /// (CouchDB's `[chttpd_auth] public_fields`): a user reads `_id`, `_rev` and these of
  /// another user's document, and the document is `404` when it has none of them. Empty
  /// (the default): a user reads only their own document.
  public var usersPublicFields: [String]
  /// Whether every user may list `_users` (`_all_docs`, its documents reduced to
  /// ``usersPublicFields``): CouchDB's `[chttpd_auth] users_db_public`, off by default.
  public var usersDatabaseIsPublic: Bool

  /// What the server logs.
  public enum LogLevel: String, Sendable, CaseIterable {
    /// Nothing.
    case none
    /// Requests answered with a server error (5xx).
    case error
    /// One line per request: method, path, status, milliseconds.
    case info
  }

  /// A configuration; the defaults listen on 127.0.0.1:5984.
  public init(
    host: String = "127.0.0.1", port: Int = 5984, maxRequestBytes: Int = 64 << 20,
    maxAttachmentBytes: Int = 256 << 20, logLevel: LogLevel = .info, idleTimeout: Double = 60,
    minimumBodyRate: Int = 500,
    corsOrigins: [String] = [],
    replicationLimits: ReplicationScheduler.Limits = ReplicationScheduler.Limits(),
    javaScriptTimeLimit: Double = 5, usersPublicFields: [String] = [],
    usersDatabaseIsPublic: Bool = false
  ) {
    self.javaScriptTimeLimit = javaScriptTimeLimit
    self.usersPublicFields = usersPublicFields
    self.usersDatabaseIsPublic = usersDatabaseIsPublic
    self.replicationLimits = replicationLimits
    self.corsOrigins = corsOrigins
    self.idleTimeout = idleTimeout
    self.minimumBodyRate = minimumBodyRate
    self.host = host
    self.port = port
    self.maxRequestBytes = maxRequestBytes
    self.maxAttachmentBytes = maxAttachmentBytes
    self.logLevel = logLevel
  }
}

/// CouchDB's HTTP API over one Settee database: each collection is a CouchDB database.
///
/// ```swift
/// let server = CouchServer(database: try Database(path: "app.db"))
/// try await server.run()   // until SIGINT or SIGTERM
/// ```
public struct CouchServer: Sendable {
  /// The database served.
  public let database: Database
  /// How the server listens.
  public let configuration: ServerConfiguration

  /// A server for `database`; it listens when ``run(onListening:)`` is called.
  public init(database: Database, configuration: ServerConfiguration = ServerConfiguration()) {
    self.database = database
    self.configuration = configuration
  }

  /// Stores an administrator in the database file: its name and a PBKDF2-SHA-256 hash of
  /// its password (never the password). Once a file has one, the server asks every
  /// request but `/_up` for credentials (Basic, or a cookie from `POST /_session`).
  ///
  /// - Throws: ``SetteeError`` with code `invalidArgument` for an empty name or password,
  ///   or a name holding `:`.
  public static func setAdmin(_ name: String, password: String, in database: Database)
    async throws
  {
    try await Authenticator.storeAdmin(name, password: password, in: database)
  }

  /// Whether `host` names a loopback address.
  public static func isLoopback(_ host: String) -> Bool {
    ["127.0.0.1", "::1", "localhost"].contains(host) || host.hasPrefix("127.")
  }

  /// Serves until the process gets SIGINT or SIGTERM: then it stops accepting
  /// connections, finishes the requests in flight and returns.
  ///
  /// - Parameter onListening: called once with the port listened on.
  /// - Throws: ``SetteeError`` with code `io` when the address cannot be listened on (a
  ///   port in use, an address this machine does not have), `invalidArgument` for an
  ///   address other than loopback when the file has no administrator.
  public func run(onListening: @escaping @Sendable (Int) async -> Void = { _ in }) async throws {
    let authenticator = try await Authenticator.load(database)
    // As CouchDB does when it opens its users database; a file opened read-only keeps
    // what it has.
    try? await UsersDatabase.ensureAuthDesign(in: database)
    guard authenticator.isEnabled || Self.isLoopback(configuration.host) else {
      throw SetteeError(
        .invalidArgument,
        "serving \(configuration.host) needs an administrator (settee serve --admin NAME): only loopback addresses are served without authentication"
      )
    }
    let database = database
    let replicatorDatabase = ReplicatorDatabase(
      database: database, scheduler: ReplicationScheduler(limits: configuration.replicationLimits)
    ) { name in
      do { return try CouchHandler.collection(named: name, in: database) } catch let error
        as CouchError
      {
        throw SetteeError(.invalidArgument, error.reason)
      }
    }
    let watchdog = BodyWatchdog(
      window: .milliseconds(Int64(max(0.001, configuration.idleTimeout) * 1000)),
      minimumRate: configuration.minimumBodyRate)
    let handler = CouchHandler(
      database: database, configuration: configuration, authenticator: authenticator,
      replicatorDatabase: replicatorDatabase, bodyWatchdog: watchdog)
    let watching = Task { await watchdog.run() }
    // The `_replicator` database's replications, started again with the server.
    let following = Task { await replicatorDatabase.follow() }
    defer {
      watching.cancel()
      following.cancel()
      replicatorDatabase.scheduler.stopAll()
    }
    var logger = Logger(label: "settee.serve")
    logger.logLevel = .critical
    let app = Application(
      responder: CouchResponder(handler: handler, middleware: serverMiddleware(handler)),
      server: .http1(
        configuration: HTTP1Channel.Configuration(
          additionalChannelHandlers: [HTTPRefusals()],
          idleTimeout: TimeAmount.milliseconds(Int64(max(0.001, configuration.idleTimeout) * 1000)))
      ),
      configuration: ApplicationConfiguration(
        address: .hostname(configuration.host, port: configuration.port), serverName: "Settee"),
      onServerRunning: { channel in await onListening(channel.localAddress?.port ?? 0) },
      logger: logger)
    do {
      try await app.runService()
    } catch {
      throw SetteeError(
        .io,
        "cannot listen on \(configuration.host):\(configuration.port): \(error)")
    }
  }
}

extension CouchServer {
  /// The benchmark's floor (`settee bench --server`): a Hummingbird server like the real
  /// one, answering `GET /?bytes=N` with N bytes and nothing else, so that a request's
  /// cost can be compared with what the HTTP layer alone costs for the same answer.
  package static func runFloor(
    maxBytes: Int, onListening: @escaping @Sendable (Int) async -> Void
  ) async throws {
    let body = [UInt8](repeating: UInt8(ascii: "x"), count: maxBytes)
    var logger = Logger(label: "settee.floor")
    logger.logLevel = .critical
    let app = Application(
      responder: CallbackResponder<BasicRequestContext> { request, _ in
        let count = min(maxBytes, request.uri.queryParameters["bytes"].flatMap { Int($0) } ?? 0)
        // The body is drained as the real server reads it.
        for try await _ in request.body {}
        return Response(
          status: .ok, headers: [.contentType: "application/json"],
          body: ResponseBody(byteBuffer: ByteBuffer(bytes: body[0..<count])))
      },
      configuration: ApplicationConfiguration(
        address: .hostname("127.0.0.1", port: 0), serverName: "Settee"),
      onServerRunning: { channel in await onListening(channel.localAddress?.port ?? 0) },
      logger: logger)
    try await app.runService(gracefulShutdownSignals: [])
  }
}
