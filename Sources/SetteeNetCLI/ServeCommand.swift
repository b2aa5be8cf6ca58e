import ArgumentParser
import Foundation
import Settee
import SetteeCLI
import SetteeCore
import SetteeReplication
import SetteeServer

#if canImport(Glibc)
  import Glibc
#endif

struct ServeCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "serve",
    abstract: NetworkCommands.serveAbstract,
    discussion:
      #"Each collection is a CouchDB database (the default collection is /_default). Listens on 127.0.0.1 unless --bind says otherwise, which needs an administrator (--admin); --port 0 picks a free port. Prints {"ok":true,"url":…,"console":…} on standard output once listening (console: the web console's address), one log line per request on standard error, and stops cleanly on Ctrl-C or SIGTERM (requests in flight finish first)."#
  )

  @OptionGroup var local: GlobalOptions
  @ParentCommand var root: SetteeCommand
  @Option(help: "The port to listen on (0: any free port).") var port: Int = 5984
  @Option(help: "The address to listen on.") var bind: String = "127.0.0.1"
  @Option(help: "none, error or info (one line per request).")
  var logLevel: String = "info"
  @Option(help: "The largest request body read, in bytes (attachments are streamed).")
  var maxRequestSize: Int = 64 << 20
  @Option(
    help: "The largest attachment stored, in bytes as decoded (CouchDB's max_attachment_size).")
  var maxAttachmentSize: Int = 256 << 20
  @Option(
    help: "Seconds before an idle connection, or one sending a request too slowly, is closed.")
  var idleTimeout: Double = 60
  @Option(
    help:
      "Bytes a second a request body must average over each idle timeout; a slower one is cut (408)."
  )
  var minBodyRate: Int = 500
  @Option(
    help:
      "Store this administrator (its password from SETTEE_ADMIN_PASSWORD, or asked) in the file; from then on the server answers as CouchDB 3 does: a database is its administrators' until its _security names members, and users sign up and log in through _users."
  )
  var admin: String?
  @Option(help: "Browser origins allowed to call (CORS), comma-separated, or *.") var cors: String?
  @Option(help: "How many replications run at once (CouchDB's max_jobs); others wait their turn.")
  var maxJobs = 500
  @Option(
    help:
      "Seconds a design document's JavaScript may run per call before it is stopped (CouchDB's os_process_timeout)."
  )
  var osProcessTimeout: Double = 5
  @Option(
    help:
      "Members of user documents every user may read of another's, comma-separated (CouchDB's public_fields)."
  )
  var usersPublicFields: String?
  @Flag(
    help:
      "Let every user list _users, documents reduced to --users-public-fields (CouchDB's users_db_public)."
  )
  var usersDbPublic = false

  /// A server lives long and sees bodies of many sizes: glibc's allocator raises its mmap
  /// threshold each time a large block is freed, up to 32 MiB, and keeps what is freed
  /// below it in its heaps, so memory taken by a large body never went back (issue 44:
  /// 42 MB to 300 MB over the probe's bodies). A fixed threshold (256 KiB) and trim
  /// threshold (1 MiB) hand large blocks back when they are freed: twelve 20-50 MB bodies
  /// peak at 84 MB instead of 186 MB and leave 84 MB instead of 147 MB.
  /// (`mallopt` is looked up at run time: Swift's Glibc module leaves out `malloc.h`, and
  /// other C libraries have no such call. -1 and -3 are `M_TRIM_THRESHOLD` and
  /// `M_MMAP_THRESHOLD` in glibc's `malloc.h`.)
  static func returnFreedMemory() {
    #if os(Linux)
      typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
      guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallopt") else { return }
      let mallopt = unsafeBitCast(symbol, to: Mallopt.self)
      _ = mallopt(-3, 256 << 10)
      _ = mallopt(-1, 1 << 20)
    #endif
  }

  func validate() throws {
    guard (0...65535).contains(port) else { throw ValidationError("--port must be 0 to 65535") }
    guard ServerConfiguration.LogLevel(rawValue: logLevel) != nil else {
      throw ValidationError("--log-level must be none, error or info")
    }
    guard maxRequestSize > 0 else { throw ValidationError("--max-request-size must be positive") }
    guard maxAttachmentSize > 0 else {
      throw ValidationError("--max-attachment-size must be positive")
    }
    guard idleTimeout.isFinite, idleTimeout > 0, idleTimeout <= 86_400 else {
      throw ValidationError("--idle-timeout must be a number of seconds from 0 to 86400")
    }
    guard minBodyRate >= 0 else { throw ValidationError("--min-body-rate must be 0 or more") }
    guard maxJobs >= 1 else { throw ValidationError("--max-jobs must be at least 1") }
  }

  func run() async throws {
    Self.returnFreedMemory()
    let options = local.merged(with: root.options)
    // What design documents' JavaScript logs goes with the request lines, as CouchDB's
    // log holds both.
    let database = try options.openDatabase(readOnly: false, logsJavaScript: logLevel == "info")
    if let admin {
      let password = try Self.adminPassword(for: admin)
      try await CouchServer.setAdmin(admin, password: password, in: database)
    }
    let path = options.databasePath
    let origins = Self.list(cors)
    let server = CouchServer(
      database: database,
      configuration: ServerConfiguration(
        host: bind, port: port, maxRequestBytes: maxRequestSize,
        maxAttachmentBytes: maxAttachmentSize,
        logLevel: ServerConfiguration.LogLevel(rawValue: logLevel) ?? .info,
        idleTimeout: idleTimeout, minimumBodyRate: minBodyRate, corsOrigins: origins,
        replicationLimits: .init(maxJobs: maxJobs), javaScriptTimeLimit: osProcessTimeout,
        usersPublicFields: Self.list(usersPublicFields), usersDatabaseIsPublic: usersDbPublic))
    let host = bind.contains(":") ? "[\(bind)]" : bind
    try await server.run { port in
      Console.outJSON([
        "ok": true, "url": .string("http://\(host):\(port)/"), "db": .string(path),
        "console": .string("http://\(host):\(port)/_utils/"),
      ])
    }
  }

  /// A comma-separated option's items, spaces around them trimmed (CouchDB splits
  /// `public_fields` at `\s*,\s*`); empty items are dropped.
  static func list(_ option: String?) -> [String] {
    (option ?? "").split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) }
      .filter { !$0.isEmpty }
  }

  /// The admin's password: `SETTEE_ADMIN_PASSWORD`, or asked on the terminal.
  static func adminPassword(for name: String) throws -> String {
    if let password = ProcessInfo.processInfo.environment["SETTEE_ADMIN_PASSWORD"] {
      return password
    }
    guard isatty(STDIN_FILENO) != 0, let entered = getpass("Password for \(name): ") else {
      throw SetteeError(
        .invalidArgument,
        "--admin needs a password: set SETTEE_ADMIN_PASSWORD or run on a terminal to be asked")
    }
    return String(cString: entered)
  }
}
