import ArgumentParser
import Foundation
import SetteeCore

#if canImport(Glibc)
  import Glibc
#endif

// `settee` is the local tool: documents, queries, views, the demo. The commands that speak
// HTTP (`serve`, `replicate`, `replicator`) and `bench` (which measures the server and
// replication too) live in a second executable, `settee-net`, which carries SwiftNIO,
// Hummingbird and AsyncHTTPClient: left out of `settee`, they no longer make a newcomer's
// first `swift run settee demo` compile an HTTP stack with TLS, nor every local command
// load and start a 100 MB binary. `settee serve …` replaces its process with
// `settee-net serve …` (the same process id: signals and exit statuses are the server's
// own), found beside `settee` or on `PATH`.

/// The command-line tool's commands that run in `settee-net`: their names, abstracts and
/// the hand-over.
package enum NetworkCommands {
  /// The executable that runs them.
  package static let executableName = "settee-net"

  package static let serveAbstract = "Serve the database with CouchDB's HTTP API."
  package static let replicateAbstract =
    "Replicate by CouchDB's protocol between two databases, local or remote."
  package static let replicatorAbstract =
    "Run the replications the file's _replicator documents describe, until stopped."
  package static let benchAbstract =
    "Measure Settee against hand-written SQL on the same SQLite file and data."

  /// The subcommands the root command offers for them: in `settee`, hand-overs; in
  /// `settee-net`, the commands themselves (its `main` sets them before parsing).
  package static let commands = Locked<[any ParsableCommand.Type]>([
    ServeHandOver.self, ReplicateHandOver.self, ReplicatorHandOver.self, BenchHandOver.self,
  ])

  /// The arguments `settee` was called with (without the program name), handed over as
  /// they are.
  static let arguments = Locked<[String]>([])

  /// The path of the executable running now.
  package static var runningExecutable: String? {
    #if os(Linux)
      var buffer = [CChar](repeating: 0, count: 4096)
      let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
      if count > 0 { return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self) }
    #endif
    return Bundle.main.executablePath
  }

  /// `name` in the directory of the executable running now, or else on `PATH`.
  package static func sibling(_ name: String) -> String? {
    if let running = runningExecutable {
      let beside = URL(fileURLWithPath: running).deletingLastPathComponent()
        .appendingPathComponent(name).path
      if FileManager.default.isExecutableFile(atPath: beside) { return beside }
    }
    return onPath(name)
  }

  /// The executable `name` in the first directory of `PATH` that has it.
  package static func onPath(_ name: String) -> String? {
    for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":") {
      let path = "\(directory)/\(name)"
      if FileManager.default.isExecutableFile(atPath: path) { return path }
    }
    return nil
  }

  /// Replaces this process with `settee-net` and `given` arguments (by default the ones
  /// `settee` was called with); returns only by throwing.
  ///
  /// - Throws: ``SetteeError`` with code `notFound` when `settee-net` is not beside
  ///   `settee` nor on `PATH`, `io` when it cannot be started.
  static func handOver(_ command: String, arguments given: [String]? = nil) throws -> Never {
    guard let path = sibling(executableName) else {
      throw SetteeError(
        .notFound,
        "settee \(command) runs in \(executableName), which is neither beside settee nor on PATH: build it with 'swift build --product \(executableName)' (or 'swift build', which builds both)"
      )
    }
    FileHandle.standardOutput.synchronizeFile()
    let argv = ([path] + (given ?? arguments.withLock { $0 })).map { strdup($0) } + [nil]
    execv(path, argv)
    let reason = String(cString: strerror(errno))
    for pointer in argv { free(pointer) }
    throw SetteeError(.io, "cannot start \(path): \(reason)")
  }
}

/// A command of `settee-net`, as `settee` lists it: it takes every argument as it is
/// (`--help` too, so that the help shown is the real command's) and hands over.
protocol HandOverCommand: ParsableCommand {
  var arguments: [String] { get }
}

extension HandOverCommand {
  func run() throws { try NetworkCommands.handOver(Self.configuration.commandName ?? "") }
}

struct ServeHandOver: HandOverCommand {
  static let configuration = CommandConfiguration(
    commandName: "serve", abstract: NetworkCommands.serveAbstract, helpNames: [])
  @Argument(parsing: .captureForPassthrough) var arguments: [String] = []
}

struct ReplicateHandOver: HandOverCommand {
  static let configuration = CommandConfiguration(
    commandName: "replicate", abstract: NetworkCommands.replicateAbstract, helpNames: [])
  @Argument(parsing: .captureForPassthrough) var arguments: [String] = []
}

struct ReplicatorHandOver: HandOverCommand {
  static let configuration = CommandConfiguration(
    commandName: "replicator", abstract: NetworkCommands.replicatorAbstract, helpNames: [])
  @Argument(parsing: .captureForPassthrough) var arguments: [String] = []
}

struct BenchHandOver: HandOverCommand {
  static let configuration = CommandConfiguration(
    commandName: "bench", abstract: NetworkCommands.benchAbstract, helpNames: [])
  @Argument(parsing: .captureForPassthrough) var arguments: [String] = []
}
