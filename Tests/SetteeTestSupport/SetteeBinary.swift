import Foundation

/// Runs the built `settee` executable, as users do.
public enum SetteeBinary {
  /// The result of one run.
  public struct Run: Sendable {
    public var status: Int32
    public var stdout: String
    public var stderr: String
    public var stdoutBytes: [UInt8]
  }

  /// The path of the `settee` binary that `swift build` / `swift test` put next to the
  /// test bundle.
  public static let path: String = {
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
  public static let canRunUnprivileged: Bool =
    getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")

  /// Runs `settee` with `arguments`, feeding `stdin`, and waits for it to exit;
  /// `unprivileged` runs it as `nobody` (see ``canRunUnprivileged``).
  public static func run(_ arguments: [String], stdin: [UInt8]? = nil, unprivileged: Bool = false)
    throws -> Run
  {
    if unprivileged {
      return try run(
        executable: "/usr/bin/setpriv",
        ["--reuid=65534", "--regid=65534", "--clear-groups", path] + arguments, stdin: stdin)
    }
    return try run(executable: path, arguments, stdin: stdin)
  }

  /// Runs `settee` through `/bin/sh -c script`, where the script names the binary `"$0"`
  /// (for arguments Foundation cannot pass, such as bytes that are not UTF-8).
  public static func runShell(_ script: String, stdin: [UInt8]? = nil) throws -> Run {
    try run(executable: "/bin/sh", ["-c", script, path], stdin: stdin)
  }

  static func run(executable: String, _ arguments: [String], stdin: [UInt8]?) throws -> Run {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    let output = Pipe()
    let errors = Pipe()
    let input = Pipe()
    process.standardOutput = output
    process.standardError = errors
    process.standardInput = stdin == nil ? FileHandle.nullDevice : input
    try process.run()
    // Read both pipes on their own threads so that a full pipe never blocks the child.
    let outData = Locked(Data())
    let errData = Locked(Data())
    let group = DispatchGroup()
    DispatchQueue.global().async(group: group) {
      outData.set(output.fileHandleForReading.readDataToEndOfFile())
    }
    DispatchQueue.global().async(group: group) {
      errData.set(errors.fileHandleForReading.readDataToEndOfFile())
    }
    if let stdin {
      input.fileHandleForWriting.write(Data(stdin))
      try input.fileHandleForWriting.close()
    }
    process.waitUntilExit()
    group.wait()
    let out = [UInt8](outData.get())
    return Run(
      status: process.terminationStatus, stdout: String(decoding: out, as: UTF8.self),
      stderr: String(decoding: errData.get(), as: UTF8.self), stdoutBytes: out)
  }
}

/// A value shared between threads behind a lock.
final class Locked<Value: Sendable>: @unchecked Sendable {
  // @unchecked: every access to `value` holds `lock`.
  private var value: Value
  private let lock = NSLock()
  init(_ value: Value) { self.value = value }
  func set(_ newValue: Value) { lock.withLock { value = newValue } }
  func get() -> Value { lock.withLock { value } }
}
