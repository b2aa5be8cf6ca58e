import Foundation
import SetteeCLI
import SetteeCore

#if canImport(Glibc)
  import Glibc
#endif

/// `settee bench --compare-sqlite3`: the work a user feels, as whole processes. This
/// binary runs as a child process for each step and the `sqlite3` shell does the same work
/// with hand-written SQL on its own file; best of three runs of each, as issue 16 measured.
struct CompareSQLite3 {
  let count: Int
  let directory: URL
  let log: (String) -> Void

  struct Row: Sendable {
    var name: String
    var settee: Double
    var sqlite3: Double
    var target: Double
  }

  func run() throws -> [Row] {
    guard let shell = NetworkCommands.onPath("sqlite3") else {
      throw SetteeError(.invalidArgument, "--compare-sqlite3 needs the sqlite3 shell on PATH")
    }
    let settee = Self.runningExecutable()
    var data = BenchData()
    let documents = data.wholeProcess(count)
    let ndjson = directory.appendingPathComponent("people.ndjson")
    let array = directory.appendingPathComponent("people.json")
    var lines: [UInt8] = []
    var whole: [UInt8] = [UInt8(ascii: "[")]
    for (number, document) in documents.enumerated() {
      JSONWriter.write(.object(document), into: &lines)
      lines.append(10)
      if number > 0 { whole.append(UInt8(ascii: ",")) }
      JSONWriter.write(.object(document), into: &whole)
    }
    whole.append(UInt8(ascii: "]"))
    try Data(lines).write(to: ndjson)
    try Data(whole).write(to: array)
    log("\(count) documents, \(lines.count / 1_000_000) MB of NDJSON")
    let mine = directory.appendingPathComponent("settee.db").path
    let theirs = directory.appendingPathComponent("sqlite3.db").path
    // Each side starts from no file (deleting the other's would spoil its later steps).
    func fresh(_ path: String) {
      for suffix in ["", "-wal", "-shm"] {
        try? FileManager.default.removeItem(atPath: path + suffix)
      }
    }
    var rows: [Row] = []

    // Import: the NDJSON file, against json_each over the same documents into (id, rev, body).
    let importSettee = try best {
      fresh(mine)
      return try time(settee, ["--db", mine, "import", ndjson.path])
    }
    let importSQLite = try best {
      fresh(theirs)
      return try time(
        shell,
        [
          theirs,
          "CREATE TABLE docs (id TEXT PRIMARY KEY, rev TEXT NOT NULL, body TEXT NOT NULL); INSERT INTO docs SELECT json_extract(value, '$._id'), '1-0', value FROM json_each(readfile('\(array.path)'));",
        ])
    }
    rows.append(Row(name: "import", settee: importSettee, sqlite3: importSQLite, target: 2.5))

    // An index over name, age and pet (an array in every seventh document).
    let indexBody = #"{"index":{"fields":["name","age","pet"]},"name":"nap"}"#
    // With a helper thread for the sort and no cache spill, as Settee's build has.
    let indexSQL =
      "PRAGMA threads = 1; PRAGMA cache_spill = 16384; CREATE INDEX nap ON docs (json_extract(body, '$.name'), json_extract(body, '$.age'), json_extract(body, '$.pet'))"
    let indexSettee = try best {
      defer { _ = try? time(settee, ["--db", mine, "index", "delete", "nap"]) }
      return try time(settee, ["--db", mine, "index", "create", indexBody])
    }
    let indexSQLite = try best {
      defer { _ = try? time(shell, [theirs, "DROP INDEX nap"]) }
      return try time(shell, [theirs, indexSQL])
    }
    rows.append(
      Row(name: "index create, 3 fields", settee: indexSettee, sqlite3: indexSQLite, target: 3))
    _ = try time(settee, ["--db", mine, "index", "create", indexBody])
    _ = try time(shell, [theirs, indexSQL])

    /// How many documents a `settee find` prints, and how many ids the shell's query does.
    func found(_ body: String) throws -> Int {
      try output(settee, ["--db", mine, "find", body]).components(separatedBy: "\n{\"_id\"")
        .count - 1
    }
    func foundSQLite(_ condition: String) throws -> Int {
      try output(shell, [theirs, "SELECT id FROM docs WHERE \(condition)"])
        .split(separator: "\n").count
    }
    /// A `settee find` against the shell's query for the same documents, which must find
    /// as many.
    func find(_ name: String, _ body: String, _ condition: String, target: Double) throws -> Row {
      let settee = try best { try time(settee, ["--db", mine, "find", body]) }
      let sqlite3 = try best {
        try time(shell, [theirs, "SELECT id, rev, body FROM docs WHERE \(condition) ORDER BY id"])
      }
      try same(name + " results", try found(body), try foundSQLite(condition))
      return Row(name: name, settee: settee, sqlite3: sqlite3, target: target)
    }

    // Both sides hold the same documents.
    try same("documents", try found(#"{"selector":{}}"#), try foundSQLite("1"))
    // An indexed find, equality on two fields.
    rows.append(
      try find(
        "indexed find, 2 fields", #"{"selector":{"name":"mike","age":30}}"#,
        "json_extract(body, '$.name') = 'mike' AND json_extract(body, '$.age') = 30", target: 3))
    // An unindexed scan: $regex against json_extract … LIKE (which ignores ASCII case where
    // $regex does not: the comments are lower case).
    rows.append(
      try find(
        "unindexed scan, $regex vs LIKE", #"{"selector":{"comment":{"$regex":"doctor"}}}"#,
        "json_extract(body, '$.comment') LIKE '%doctor%'", target: 2.5))
    return rows
  }

  func same(_ what: String, _ mine: Int, _ theirs: Int) throws {
    guard mine == theirs else {
      throw SetteeError(.storage, "compare: \(what) differ: settee \(mine), sqlite3 \(theirs)")
    }
  }

  /// A process's standard output.
  func output(_ executable: String, _ arguments: [String]) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = FileHandle.nullDevice
    try process.run()
    let data = try InputFile(pipe.fileHandleForReading, name: executable).readAll()
    process.waitUntilExit()
    return String(decoding: data, as: UTF8.self)
  }

  /// The fastest of three runs.
  func best(_ body: () throws -> Double) throws -> Double {
    var times: [Double] = []
    for _ in 0..<3 { times.append(try body()) }
    return times.min()!
  }

  /// Runs a process to its end, its output discarded, and returns the seconds it took.
  ///
  /// Through `posix_spawn` and `waitpid`: Foundation's `Process.waitUntilExit` polls its
  /// run loop every 50 ms on Linux, which added up to 50 ms to a 3 ms process.
  func time(_ executable: String, _ arguments: [String]) throws -> Double {
    #if os(Linux)
      return try spawnAndWait(executable, arguments)
    #else
      let process = Process()
      process.executableURL = URL(fileURLWithPath: executable)
      process.arguments = arguments
      process.standardOutput = FileHandle.nullDevice
      process.standardError = FileHandle.nullDevice
      let start = DispatchTime.now().uptimeNanoseconds
      try process.run()
      process.waitUntilExit()
      guard process.terminationStatus == 0 else {
        throw SetteeError(.storage, "\(executable) failed; run it by hand to see why")
      }
      return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    #endif
  }

  #if os(Linux)
    private func spawnAndWait(_ executable: String, _ arguments: [String]) throws -> Double {
      var actions = posix_spawn_file_actions_t()
      posix_spawn_file_actions_init(&actions)
      defer { posix_spawn_file_actions_destroy(&actions) }
      posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
      posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
      posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
      let argv = ([executable] + arguments).map { strdup($0) } + [nil]
      defer { for pointer in argv { free(pointer) } }
      var pid = pid_t()
      let start = DispatchTime.now().uptimeNanoseconds
      let spawned = posix_spawn(&pid, executable, &actions, nil, argv, environ)
      guard spawned == 0 else {
        throw SetteeError(.storage, "cannot run \(executable): error \(spawned)")
      }
      var status: Int32 = 0
      while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
      let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
      // Exited normally with status 0 (the <sys/wait.h> macros, spelled out).
      guard status & 0x7f == 0, (status >> 8) & 0xff == 0 else {
        throw SetteeError(
          .storage,
          "\(executable) \(arguments.prefix(3).joined(separator: " ")) failed (wait status \(status)); run it by hand to see why"
        )
      }
      return seconds
    }
  #endif

  /// The path of this very binary, however it was started: by a path (`./settee`,
  /// `.build/release/settee`) or by its name from `PATH` (as an installed `settee` is),
  /// where `argv[0]` alone would be read relative to the current directory.
  /// The `settee` users run (beside this `settee-net`, or on `PATH`): its whole processes
  /// are what is timed; this executable when there is none.
  static func runningExecutable() -> String {
    NetworkCommands.sibling("settee") ?? NetworkCommands.runningExecutable
      ?? CommandLine.arguments[0]
  }

  static func table(_ rows: [Row]) -> String {
    var lines = ["work                                  settee ms  sqlite3 ms   ratio  target"]
    for row in rows {
      let name = row.name.padding(toLength: 36, withPad: " ", startingAt: 0)
      lines.append(
        name
          + String(
            format: "%11.1f %11.1f %7.2f  <= %.1f", row.settee * 1000, row.sqlite3 * 1000,
            row.settee / row.sqlite3, row.target))
    }
    return lines.joined(separator: "\n") + "\n"
  }
}
