import ArgumentParser
import Foundation
import Settee
import SetteeCore
import SetteeServer

struct ServeCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "serve",
    abstract: "Serve the database with CouchDB's HTTP API.",
    discussion:
      #"Each collection is a CouchDB database (the default collection is /_default). Listens on 127.0.0.1 only; --port 0 picks a free port. Prints {"ok":true,"url":…} on standard output once listening, one log line per request on standard error, and stops cleanly on Ctrl-C or SIGTERM (requests in flight finish first)."#
  )

  @OptionGroup var local: GlobalOptions
  @ParentCommand var root: SetteeCommand
  @Option(help: "The port to listen on (0: any free port).") var port: Int = 5984
  @Option(help: "The address to listen on.") var bind: String = "127.0.0.1"
  @Option(help: "none, error or info (one line per request).")
  var logLevel: String = "info"
  @Option(help: "The largest request body read, in bytes (attachments are streamed, unlimited).")
  var maxRequestSize: Int = 64 << 20
  @Option(
    help: "Seconds before an idle connection, or one sending a request too slowly, is closed.")
  var idleTimeout: Double = 60

  func validate() throws {
    guard (0...65535).contains(port) else { throw ValidationError("--port must be 0 to 65535") }
    guard ServerConfiguration.LogLevel(rawValue: logLevel) != nil else {
      throw ValidationError("--log-level must be none, error or info")
    }
    guard maxRequestSize > 0 else { throw ValidationError("--max-request-size must be positive") }
    guard idleTimeout.isFinite, idleTimeout > 0, idleTimeout <= 86_400 else {
      throw ValidationError("--idle-timeout must be a number of seconds from 0 to 86400")
    }
  }

  func run() throws {
    guard ["127.0.0.1", "::1", "localhost"].contains(bind) else {
      // SPEC section 9: any other address needs an administrator, whose configuration
      // (--admin) is not built yet; until then the server is loopback-only.
      throw SetteeError(
        .invalidArgument,
        "settee serve listens on loopback only (127.0.0.1, ::1): serving \(bind) needs authentication, which is not built yet"
      )
    }
    let options = local.merged(with: root.options)
    let database = try options.openDatabase(readOnly: false)
    let path = options.databasePath
    let server = CouchServer(
      database: database,
      configuration: ServerConfiguration(
        host: bind, port: port, maxRequestBytes: maxRequestSize,
        logLevel: ServerConfiguration.LogLevel(rawValue: logLevel) ?? .info,
        idleTimeout: idleTimeout))
    let host = bind.contains(":") ? "[\(bind)]" : bind
    try runBlocking {
      try await server.run { port in
        Console.outJSON([
          "ok": true, "url": .string("http://\(host):\(port)/"), "db": .string(path),
        ])
      }
    }
  }
}
