import Foundation
import SetteeCore
import Testing

/// Runs the built `settee` executable, as users do.
package enum SetteeBinary {
  /// The result of one run.
  package struct Run: Sendable {
    package var status: Int32
    package var stdout: String
    package var stderr: String
    package var stdoutBytes: [UInt8]
    /// Whether the process ended by a signal (a crash, or the test's kill at `timeout`).
    package var signaled = false
    /// Whether it was killed for running past `timeout`.
    package var timedOut = false
    /// How long it ran, in seconds: until its standard output and error closed.
    package var seconds = 0.0
  }

  /// The path of the `settee` binary that `swift build` / `swift test` put next to the
  /// test bundle.
  package static let path: String = {
    var candidates: [URL] = []
    let runner = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
    var directory = runner.deletingLastPathComponent()
    for _ in 0..<4 {
      candidates.append(directory.appendingPathComponent("settee"))
      directory = directory.deletingLastPathComponent()
    }
    candidates.append(Bundle.main.bundleURL.appendingPathComponent("settee"))
    let cwd = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
    candidates.append(cwd.appendingPathComponent(".build/debug/settee"))
    for candidate in candidates where FileManager.default.isExecutableFile(atPath: candidate.path) {
      return candidate.path
    }
    fatalError("cannot find the settee binary; looked at \(candidates.map(\.path))")
  }()

  /// Whether tests can run the binary as an unprivileged user (`nobody`): they run as
  /// root, for whom file permissions do not apply, and `setpriv` is there.
  package static let canRunUnprivileged: Bool =
    getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")

  /// Runs `settee` with `arguments`, feeding `stdin`, and waits for it to exit;
  /// `unprivileged` runs it as `nobody` (see ``canRunUnprivileged``).
  package static func run(
    _ arguments: [String], stdin: [UInt8]? = nil, unprivileged: Bool = false,
    timeout: Double = 300
  ) throws -> Run {
    if unprivileged {
      return try run(
        executable: "/usr/bin/setpriv",
        ["--reuid=65534", "--regid=65534", "--clear-groups", path] + arguments, stdin: stdin,
        timeout: timeout)
    }
    return try run(executable: path, arguments, stdin: stdin, timeout: timeout)
  }

  /// ``run(_:stdin:unprivileged:timeout:)`` from async code: the wait runs on a thread of
  /// its own, not on one of the few threads Swift's tasks share, nor on Dispatch's global
  /// pool (as narrow on Linux): a test that blocked one for a replication's seconds
  /// starved the others, and a continuous replication inside the test process stood still.
  package static func run(
    _ arguments: [String], stdin: [UInt8]? = nil, unprivileged: Bool = false,
    timeout: Double = 300
  ) async throws -> Run {
    try await onThread {
      try run(arguments, stdin: stdin, unprivileged: unprivileged, timeout: timeout)
    }
  }

  /// Runs `settee` through `/bin/sh -c script`, where the script names the binary `"$0"`
  /// (for arguments Foundation cannot pass, such as bytes that are not UTF-8).
  package static func runShell(_ script: String, stdin: [UInt8]? = nil) throws -> Run {
    try run(executable: "/bin/sh", ["-c", script, path], stdin: stdin)
  }

  /// ``runShell(_:stdin:)`` from async code, waited for on a thread of its own (see
  /// ``run(_:stdin:unprivileged:timeout:)-swift.method``).
  package static func runShell(_ script: String, stdin: [UInt8]? = nil) async throws -> Run {
    try await onThread { try runShell(script, stdin: stdin) }
  }

  /// A child that exits before reading all its input must not kill the test runner.
  private static let ignoreBrokenPipes: Void = { signal(SIGPIPE, SIG_IGN) }()

  static func run(
    executable: String, _ arguments: [String], stdin: [UInt8]?, timeout: Double = 300
  ) throws -> Run {
    _ = ignoreBrokenPipes
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    let output = ChildPipe()
    let errors = ChildPipe()
    let input = stdin == nil ? nil : ChildPipe()
    let start = Date()
    try process.run(output: output, errors: errors, input: input)
    let timedOut = Guarded(false)
    let pid = process.processIdentifier
    DispatchQueue.global().asyncAfter(deadline: .now() + timeout) {
      if process.isRunning {
        timedOut.set(true)
        kill(pid, SIGKILL)
      }
    }
    // Read both pipes on their own threads so that a full pipe never blocks the child.
    let outData = Guarded([UInt8]())
    let errData = Guarded([UInt8]())
    let group = DispatchGroup()
    for (pipe, data) in [(output, outData), (errors, errData)] {
      group.enter()
      Thread {
        data.set(pipe.fileHandleForReading.readAllBytes())
        group.leave()
      }.start()
    }
    if let stdin, let input {
      let handle = input.fileHandleForWriting
      // On a thread of its own: a blocked write must not hold one of Dispatch's.
      Thread {
        handle.writeAllBytes(stdin)
        try? handle.close()
      }.start()
    }
    // The child's time ends when its output does (its pipes close as it exits), read on
    // threads of their own. Foundation learns of the exit through a Dispatch source, whose
    // handler waited 175 s for a thread under the whole suite (the suite's blocking tests
    // hold Dispatch's threads), so the exit is waited for after the time is taken.
    group.wait()
    let seconds = Date().timeIntervalSince(start)
    process.waitUntilExit()
    let out = outData.get()
    var run = Run(
      status: process.terminationStatus, stdout: String(decoding: out, as: UTF8.self),
      stderr: String(decoding: errData.get(), as: UTF8.self), stdoutBytes: out)
    run.signaled = process.terminationReason == .uncaughtSignal
    run.timedOut = timedOut.get()
    run.seconds = seconds
    return run
  }
}

/// A value shared between threads behind a lock.
package final class Guarded<Value: Sendable>: @unchecked Sendable {
  // @unchecked: every access to `storage` holds `lock`.
  private var storage: Value
  private let lock = NSLock()
  package init(_ value: Value) { storage = value }
  package var value: Value { lock.withLock { storage } }
  package func set(_ newValue: Value) { lock.withLock { storage = newValue } }
  package func get() -> Value { value }
  package func mutate(_ body: (inout Value) -> Void) { lock.withLock { body(&storage) } }
  /// Runs `body` with the value, exclusively (Synchronization's `Mutex` needs macOS 15).
  package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
    try lock.withLock { try body(&storage) }
  }
}

/// The JSON a successful run printed on standard output (the run must have exited 0).
package func json(_ run: SetteeBinary.Run) throws -> JSON {
  #expect(run.status == 0, "\(run.stderr)")
  return try JSONParser.parse(run.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
}
