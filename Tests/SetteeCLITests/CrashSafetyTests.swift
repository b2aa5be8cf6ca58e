import Foundation
import Settee
import SetteeCore
import SetteeTestSupport
import Testing

/// `kill -9` in the middle of an import: the file must pass SQLite's integrity check and
/// hold only whole committed transactions.
@Suite("Crash safety", .serialized)
struct CrashSafetyTests {
  static let documentCount = 200_000

  /// Starts `settee import` on a large file and SIGKILLs it once `ready` says so.
  func killImport(
    db: String, input: String, extraArguments: [String], ready: () throws -> Bool
  ) throws {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: SetteeBinary.path)
    process.arguments = ["--db", db, "import", input, "--quiet"] + extraArguments
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
    let deadline = Date().addingTimeInterval(120)
    while try !ready() {
      #expect(process.isRunning, "the import finished before it could be killed")
      #expect(Date() < deadline, "the import made no progress")
      if !process.isRunning || Date() > deadline { break }
      usleep(20_000)
    }
    kill(process.processIdentifier, SIGKILL)
    process.waitUntilExit()
    #expect(process.terminationReason == .uncaughtSignal)
  }

  func writeInput(_ directory: TemporaryDirectory) throws -> String {
    let input = directory.path("big.ndjson")
    try SampleData.ndjson(Self.documentCount).write(
      toFile: input, atomically: false, encoding: .utf8)
    return input
  }

  @Test func batchedImportKeepsOnlyWholeBatches() throws {
    let directory = TemporaryDirectory()
    let input = try writeInput(directory)
    let path = directory.path("crash.db")
    try Database(path: path).collection().put(["_id": "before", "kept": true])

    let watcher = try Database(path: path).collection()
    try killImport(db: path, input: input, extraArguments: ["--batch-size", "1000"]) {
      try watcher.count() >= 5_001
    }

    let reopened = try Database(path: path)
    #expect(try reopened.checkIntegrity() == [])
    let people = reopened.collection()
    #expect(try people.get("before")?["kept"] == true)
    let imported = try people.count() - 1
    #expect(imported >= 5_000 && imported < Self.documentCount)
    #expect(imported % 1_000 == 0, "a partial batch survived: \(imported) documents")
    // The committed batches are the first ones, whole, each document intact.
    let expected = SampleData.people(imported)
    let stored = try people.get(expected.map { $0["_id"]!.stringValue! })
    for (document, original) in zip(stored, expected) {
      var body = original
      body["_id"] = nil
      #expect(document?.body == body)
    }
    #expect(try people.get(SampleData.id(imported)) == nil)
  }

  @Test func singleTransactionImportLeavesNothing() throws {
    let directory = TemporaryDirectory()
    let input = try writeInput(directory)
    let path = directory.path("crash.db")
    try Database(path: path).collection().put(["_id": "before", "kept": true])

    // Kill once the transaction has spilled a good part of its pages into the WAL file.
    try killImport(db: path, input: input, extraArguments: []) {
      let size =
        (try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int) ?? 0
      return size > 4 << 20
    }

    let reopened = try Database(path: path)
    #expect(try reopened.checkIntegrity() == [])
    #expect(try reopened.collection().count() == 1)
    #expect(try reopened.collection().get("before")?["kept"] == true)
    #expect(try reopened.collection().lastSequence() == 1)
  }
}
