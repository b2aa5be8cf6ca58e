import Foundation
import Settee
import SetteeCore
import SetteeTestSupport
import Testing

/// The binary under a user's worst day: flipped bytes in the file, SIGKILL in the middle of
/// writes, and several processes writing and reading at once.
@Suite("Damage, kills and concurrent processes", .serialized)
struct ProcessSafetyCLITests {
  let directory = TemporaryDirectory()

  func errorIsTyped(_ run: SetteeBinary.Run) -> Bool {
    guard run.status != 0 else { return true }
    let line = run.stderr.split(separator: "\n").last.map(String.init) ?? ""
    return (try? JSONParser.parse(line))?["error"]?.stringValue != nil
  }

  /// Random bytes of the file flipped: every command answers (success or a typed error),
  /// never crashes or hangs.
  @Test(arguments: 1...12)
  func flippedBytesNeverCrash(_ seed: Int) throws {
    let db = directory.path("flipped-\(seed).db")
    try FileManager.default.copyItem(atPath: HostileInputCLITests.template.path, toPath: db)
    var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: db)))
    var generator = SplitMix64(seed: UInt64(seed))
    for _ in 0..<(seed % 3 == 0 ? 64 : 8) {
      // Mostly page contents; now and then the header.
      let offset =
        generator.next() % 5 == 0
        ? Int(generator.next() % 100) : 100 + Int(generator.next() % UInt64(bytes.count - 100))
      bytes[offset] ^= UInt8(truncatingIfNeeded: generator.next() | 1)
    }
    try Data(bytes).write(to: URL(fileURLWithPath: db))
    for arguments in [
      ["get", "p3"], ["find", #"{"selector": {"n": {"$gt": 5}}}"#],
      ["find", #"{"selector": {"s": {"$regex": "^v"}}, "sort": ["s"]}"#], ["export"], ["check"],
      ["changes"], ["index", "list"], ["put", #"{"_id": "new"}"#],
    ] {
      let run = try SetteeBinary.run(["--db", db] + arguments, timeout: 30)
      #expect(!run.signaled && !run.timedOut, "\(arguments) seed \(seed): \(run.stderr)")
      #expect(errorIsTyped(run), "\(arguments) seed \(seed): \(run.stderr)")
    }
  }

  /// Single writes in a loop, killed with SIGKILL at random moments: every write the
  /// command acknowledged (exit 0) is there afterwards, and the file is sound.
  @Test func killedWriteLoopsLoseNoAcknowledgedWrite() throws {
    let db = directory.path("kills.db")
    let acked = directory.path("acked")
    #expect(try SetteeBinary.run(["--db", db, "put", #"{"_id": "start"}"#]).status == 0)
    var generator = SplitMix64(seed: 7)
    // At least 12 rounds, and on (up to 60) until 12 writes were acknowledged: while the
    // whole suite runs on two cores, a round's window can pass before its first write.
    func acknowledged() -> Int {
      ((try? String(contentsOfFile: acked, encoding: .utf8))?.split(separator: "\n").count) ?? 0
    }
    for round in 0..<60 where round < 12 || acknowledged() < 12 {
      let script = """
        i=0
        while :; do
          "$0" --db '\(db)' put "{\\"_id\\": \\"k\(round)-$i\\", \\"round\\": \(round)}" >/dev/null 2>&1 && echo "k\(round)-$i" >> '\(acked)'
          i=$((i+1))
        done
        """
      // Foundation starts the shell as the leader of a process group of its own, so one
      // kill reaches the shell and the settee it is running.
      let process = Process()
      process.executableURL = URL(fileURLWithPath: "/bin/sh")
      process.arguments = ["-c", script, SetteeBinary.path]
      process.standardOutput = FileHandle.nullDevice
      process.standardError = FileHandle.nullDevice
      try process.run()
      #expect(getpgid(process.processIdentifier) == process.processIdentifier)
      usleep(UInt32(200_000 + generator.next() % 400_000))
      kill(-process.processIdentifier, SIGKILL)  // the shell and the settee it runs
      kill(process.processIdentifier, SIGKILL)
      process.waitUntilExit()
    }
    let ids = (try? String(contentsOfFile: acked, encoding: .utf8))?.split(separator: "\n") ?? []
    #expect(ids.count >= 12, "too few writes were acknowledged to test anything")
    let database = try Database(path: db, configuration: .init(readOnly: true))
    #expect(try database.check().isHealthy)
    let stored = try database.collection().get(ids.map(String.init))
    let lost = zip(ids, stored).filter { $0.1 == nil }.map(\.0)
    #expect(lost.isEmpty, "acknowledged but lost: \(lost)")
  }

  /// Four processes writing and four reading at once, each a loop of commands: none fails
  /// (no busy error), and every write is there.
  @Test func concurrentProcessesAllSucceed() throws {
    let db = directory.path("concurrent.db")
    #expect(try SetteeBinary.run(["--db", db, "put", #"{"_id": "start"}"#]).status == 0)
    let failures = Guarded([String]())
    let group = DispatchGroup()
    for worker in 0..<8 {
      let command =
        worker < 4
        ? #"put "{\"_id\": \"w\#(worker)-$i\"}""#
        : #"find '{"selector": {"_id": {"$gt": "w"}}, "sort": ["_id"]}'"#
      let script = """
        i=0
        while [ $i -lt 12 ]; do
          "$0" --db '\(db)' \(command) >/dev/null || exit 1
          i=$((i+1))
        done
        """
      // Threads of their own, not Dispatch's, which Swift's tasks share here.
      group.enter()
      Thread {
        do {
          let run = try SetteeBinary.runShell(script)
          if run.status != 0 { failures.mutate { $0.append("worker \(worker): \(run.stderr)") } }
        } catch {
          failures.mutate { $0.append("worker \(worker): \(error)") }
        }
        group.leave()
      }.start()
    }
    group.wait()
    #expect(failures.value.isEmpty, "\(failures.value)")
    let people = try Database(path: db, configuration: .init(readOnly: true)).collection()
    #expect(try people.count() == 1 + 4 * 12)
  }
}
