import Foundation
import SetteeCore
import SetteeTestSupport
import Testing

/// `settee` holds the local commands; `serve`, `replicate`, `replicator` and `bench` run in
/// `settee-net`, which `settee` becomes (the same process) when one of them is asked for.
/// The user sees one tool: the commands are listed, their help is the real one, their
/// process id is the one started, and a missing `settee-net` is an error that says what to
/// build.
@Suite("settee and settee-net")
struct HandOverCLITests {
  let directory = TemporaryDirectory()

  @Test func theNetworkCommandsAreListedAndTheirHelpIsTheRealOne() async throws {
    let help = try await SetteeBinary.run(["--help"])
    #expect(help.status == 0)
    for command in ["serve", "replicate", "replicator", "bench", "demo", "find"] {
      #expect(help.stdout.contains("  \(command) "), "\(command) missing from\n\(help.stdout)")
    }
    // Options only the real commands declare.
    for (arguments, option) in [
      (["serve", "--help"], "--max-jobs"), (["help", "serve"], "--max-jobs"),
      (["replicate", "--help"], "--continuous"), (["bench", "--help"], "--compare-sqlite3"),
      (["--db", "x.db", "replicator", "--help"], "--db"),
    ] {
      let run = try await SetteeBinary.run(arguments)
      #expect(run.status == 0, "\(arguments): \(run.stderr)")
      #expect(run.stdout.contains(option), "\(arguments):\n\(run.stdout)")
    }
  }

  @Test func versionIsPrinted() async throws {
    let run = try await SetteeBinary.run(["--version"])
    #expect(run.status == 0)
    #expect(run.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == SetteeVersion.string)
  }

  /// A handed-over command runs with its arguments as given; its usage errors are the
  /// real command's (exit status 2).
  @Test func argumentsReachTheRealCommand() async throws {
    let source = directory.path("source.db")
    let target = directory.path("target.db")
    #expect(try await SetteeBinary.run(["--db", source, "put", #"{"_id":"a","n":1}"#]).status == 0)
    let replicated = try await SetteeBinary.run(["replicate", source, target, "--create-target"])
    #expect(replicated.status == 0, "\(replicated.stderr)")
    #expect(try await SetteeBinary.run(["--db", target, "get", "a"]).stdout.contains("\"n\":1"))
    let wrong = try await SetteeBinary.run(["serve", "--port", "not-a-port"])
    #expect(wrong.status == 2, "\(wrong.stderr)")
    #expect(wrong.stderr.contains("port"), "\(wrong.stderr)")
  }

  /// The server runs in the process that was started: signals sent to it reach the server.
  @Test func theServerIsTheProcessStarted() async throws {
    let path = directory.path("served.db")
    let process = Process()
    process.executableURL = URL(fileURLWithPath: SetteeBinary.path)
    process.arguments = ["--db", path, "serve", "--port", "0", "--log-level", "none"]
    let output = ChildPipe()
    try process.run(output: output, errors: nil)
    defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
    let line = output.fileHandleForReading.readSomeBytes() ?? []
    #expect(String(decoding: line, as: UTF8.self).contains("\"url\""))
    let executable = try FileManager.default.destinationOfSymbolicLink(
      atPath: "/proc/\(process.processIdentifier)/exe")
    #expect(executable.hasSuffix("/settee-net"), "\(executable)")
    kill(process.processIdentifier, SIGTERM)
    let deadline = Date().addingTimeInterval(30)
    while process.isRunning && Date() < deadline { try await Task.sleep(for: .milliseconds(20)) }
    #expect(!process.isRunning)
    #expect(process.terminationStatus == 0)
    // The option given before the command reached it.
    #expect(FileManager.default.fileExists(atPath: path))
  }

  /// `settee` alone (copied where no `settee-net` is, with a `PATH` without one): the local
  /// commands work, the network ones say what to build.
  @Test func withoutSetteeNetTheErrorSaysWhatToBuild() async throws {
    let alone = directory.path("bin")
    try FileManager.default.createDirectory(atPath: alone, withIntermediateDirectories: true)
    let copy = alone + "/settee"
    try FileManager.default.copyItem(atPath: SetteeBinary.path, toPath: copy)
    let alonePrefix = "PATH=/usr/bin:/bin '\(copy)' --db '\(directory.path("alone.db"))'"
    let local = try await SetteeBinary.runShell(alonePrefix + " put '{\"_id\":\"a\"}'")
    #expect(local.status == 0, "\(local.stderr)")
    let serve = try await SetteeBinary.runShell(alonePrefix + " serve --port 0")
    #expect(serve.status == 1)
    let error = try JSONParser.parse(serve.stderr.trimmingCharacters(in: .whitespacesAndNewlines))
    #expect(error["error"] == "not_found", "\(serve.stderr)")
    #expect(error["reason"]?.stringValue?.contains("swift build --product settee-net") == true)
  }
}
