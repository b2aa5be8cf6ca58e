import Foundation
import Settee
import SetteeCore
import SetteeTestSupport
import Testing

/// The binary on files it must not change: read-only files, directories and other
/// applications' databases, as an unprivileged user; and arguments that are not UTF-8.
@Suite("Read-only and foreign files")
struct HostileFilesCLITests {
  let directory = TemporaryDirectory()

  func bytes(_ path: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: path)) }

  func errorName(_ run: SetteeBinary.Run) -> String? {
    (try? JSONParser.parse(run.stderr.trimmingCharacters(in: .whitespacesAndNewlines)))?["error"]?
      .stringValue
  }

  /// A missing file and an empty one are the same to every reading command: `not_found`,
  /// and nothing is created or written (a write would make the empty file a database).
  @Test(arguments: [false, true])
  func everyReadAnswersNotFoundForNoDatabase(emptyFile: Bool) throws {
    let db = directory.path("none-\(emptyFile).db")
    if emptyFile { #expect(FileManager.default.createFile(atPath: db, contents: Data())) }
    for arguments in [
      ["get", "a"], ["find", #"{"selector": {}}"#], ["export"], ["where", "1"], ["all-docs"],
      ["check"], ["changes"], ["index", "list"], ["view", "list"], ["view", "query", "t"],
      ["metadata", "list"], ["metadata", "get", "k"], ["alias", "list"],
      ["where-index", "list"], ["queryable", "list"], ["defaults", "get"],
      ["explain", #"{"selector": {}}"#],
    ] {
      let run = try SetteeBinary.run(["--db", db] + arguments)
      #expect(run.status == 1 && errorName(run) == "not_found", "\(arguments): \(run.stderr)")
      #expect(
        emptyFile ? (try? bytes(db))?.isEmpty == true : !FileManager.default.fileExists(atPath: db),
        "\(arguments) wrote to the file")
    }
  }

  /// Every reading command works as `nobody` on a file and directory it cannot write, and
  /// changes no byte; every writing command fails with `read_only`.
  @Test(.enabled(if: SetteeBinary.canRunUnprivileged))
  func readsWorkOnReadOnlyFilesAndDirectories() throws {
    let folder = directory.path("ro")
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    let db = folder + "/people.db"
    for arguments in [
      ["put", #"{"_id": "mike", "age": 12}"#],
      ["index", "create", #"{"index": {"fields": ["age"]}, "name": "age"}"#],
      ["where-index", "add", "[age] DESC"], ["alias", "set", "years", "[age]"],
    ] {
      #expect(try SetteeBinary.run(["--db", db] + arguments).status == 0)
    }
    let before = try bytes(db)
    chmod(db, 0o444)
    defer { chmod(folder, 0o755) }
    for folderMode: mode_t in [0o755, 0o555] {
      chmod(folder, folderMode)
      let reads: [([String], String)] = [
        (["get", "mike"], #""age":12"#),
        (["find", #"{"selector": {"age": 12}}"#], #""_id":"mike""#),
        (["explain", #"{"selector": {"age": 12}}"#], #""index":"age""#),
        (["export"], #""_id":"mike""#),
        (["changes"], #""last_seq":1"#),
        (["index", "list"], #""name":"age""#),
        (["where", "years = 12"], #""_id":"mike""#),
        (["where", "--explain", "[age] = 12"], "wx_"),
        (["where-index", "list"], "[age] DESC"),
        (["alias", "list"], #""years":"[age]""#),
        (["defaults", "get"], "{}"),
        (["queryable", "list"], #""fields":[]"#),
        (["metadata", "list"], "{}"),
      ]
      for (arguments, expected) in reads {
        let run = try SetteeBinary.run(["--db", db] + arguments, unprivileged: true)
        #expect(run.status == 0, "\(arguments): \(run.stderr)")
        #expect(run.stdout.contains(expected), "\(arguments): \(run.stdout)")
      }
      for arguments in [
        ["put", #"{"_id": "fred"}"#], ["delete", "mike", "--rev", "1-abc"],
        ["index", "create", #"{"index": {"fields": ["x"]}, "name": "x"}"#],
        ["index", "delete", "age"], ["where-index", "add", "[x]"], ["queryable", "add", "[x]"],
        ["defaults", "set", "{}"], ["alias", "set", "y", "[x]"], ["metadata", "set", "k", "1"],
        // The server writes (it serves writes): refused before it listens.
        ["serve", "--port", "0"],
      ] {
        let run = try SetteeBinary.run(["--db", db] + arguments, unprivileged: true, timeout: 60)
        #expect(run.status == 1 && errorName(run) == "read_only", "\(arguments): \(run.stderr)")
      }
      #expect(try bytes(db) == before)
    }
  }

  @Test func readingAMissingDatabaseCreatesNothing() throws {
    let db = directory.path("missing.db")
    for arguments in [["get", "x"], ["find", #"{"selector": {}}"#], ["export"], ["changes"]] {
      let run = try SetteeBinary.run(["--db", db] + arguments)
      #expect(run.status == 1 && errorName(run) == "not_found", "\(arguments)")
    }
    #expect(!FileManager.default.fileExists(atPath: db))
  }

  @Test func anotherApplicationsDatabaseIsRefusedUntouched() throws {
    let db = directory.path("other.db")
    // A SQLite file in rollback-journal mode, as most applications leave theirs.
    let header = Array("SQLite format 3\0".utf8)
    let created = try SetteeBinary.runShell(
      "sqlite3 '\(db)' 'CREATE TABLE notes(t); INSERT INTO notes VALUES (1);' 2>/dev/null || exit 3"
    )
    guard created.status == 0 else { return }  // no sqlite3 shell here: the API test covers it
    #expect(try Array(bytes(db).prefix(16)) == header)
    let before = try bytes(db)
    for arguments in [
      ["get", "x"], ["put", #"{"_id": "x"}"#], ["import", "-"], ["export"],
      ["index", "create", #"{"index": {"fields": ["x"]}, "name": "x"}"#],
    ] {
      let run = try SetteeBinary.run(["--db", db] + arguments, stdin: Array("{}".utf8))
      #expect(run.status == 1 && errorName(run) == "not_a_settee_database", "\(arguments)")
    }
    #expect(try bytes(db) == before)
    #expect(!FileManager.default.fileExists(atPath: db + "-wal"))
  }

  /// Bytes that are not UTF-8 are refused wherever they come from, never replaced.
  @Test func invalidUTF8IsRefusedEverywhere() throws {
    let db = directory.path("utf8.db")
    #expect(try SetteeBinary.run(["--db", db, "put", #"{"_id": "a"}"#]).status == 0)
    let before = try bytes(db)
    for script in [
      #""$0" --db 'DB' put "$(printf '{"_id":"u","v":"a\377b"}')""#,
      #""$0" --db 'DB' get "$(printf 'a\377')""#,
      #""$0" --db 'DB' --collection "$(printf 'c\377')" put '{}'"#,
      #""$0" --db 'DB' index create "$(printf '{"index":{"fields":["a"]},"name":"\377"}')""#,
      #""$0" --db 'DB' find "$(printf '{"selector":{"a":"\377"}}')""#,
    ] {
      let run = try SetteeBinary.runShell(script.replacingOccurrences(of: "DB", with: db))
      #expect(run.status == 1 && errorName(run) == "bad_request", "\(script): \(run.stderr)")
      #expect(run.stderr.contains("not valid UTF-8"), "\(run.stderr)")
    }
    for command in [["put", "-"], ["find", "-"], ["index", "create", "-"]] {
      let run = try SetteeBinary.run(
        ["--db", db] + command,
        stdin: Array(#"{"_id":"u","v":"a"#.utf8) + [0xFF] + Array(#""}"#.utf8))
      #expect(run.status == 1 && errorName(run) == "bad_request", "\(command): \(run.stderr)")
      #expect(run.stderr.contains("UTF-8") && run.stderr.contains("column"), "\(run.stderr)")
    }
    #expect(try bytes(db) == before)
  }

  /// A write that meets another process's write lock waits `--busy-timeout` seconds, then
  /// fails with a typed `busy` error that says what holds the lock.
  @Test func aBlockedWriteIsBusyAfterTheTimeout() throws {
    let db = directory.path("busy.db")
    let holder = try Database(path: db)
    try holder.collection().put(["_id": "a"])
    let done = holder.holdWriteLock(for: 3)
    let start = Date()
    let run = try SetteeBinary.run(["--db", db, "--busy-timeout", "0.3", "put", #"{"_id": "b"}"#])
    #expect(Date().timeIntervalSince(start) < 2.5)
    #expect(run.status == 1 && errorName(run) == "busy", "\(run.stderr)")
    #expect(run.stderr.contains("import"))
    // Reads do not wait for the writer.
    #expect(try SetteeBinary.run(["--db", db, "get", "a"]).status == 0)
    done.wait()
    #expect(try SetteeBinary.run(["--db", db, "get", "b"]).status == 1)
  }
}
