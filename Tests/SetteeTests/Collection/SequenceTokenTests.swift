import Foundation
import Settee
import SetteeCore
import SetteeTestSupport
import Testing

/// Sequence strings tell a file's history apart from a restored older copy's, so a peer
/// continuing from a position the restored file never reached does not skip changes.
@Suite("Sequence tokens and restored copies")
struct SequenceTokenTests {
  let directory = TemporaryDirectory()

  private func write(_ docs: DocumentCollection, _ ids: ClosedRange<Int>, _ prefix: String) throws {
    for n in ids { try docs.put(["_id": .string("\(prefix)\(n)")]) }
  }

  @Test func plainAndSpecialPositions() throws {
    let db = try Database(path: directory.path("plain.db"))
    let docs = db.collection("docs")
    try write(docs, 1...3, "d")
    #expect(try docs.sequenceString(0) == "0")
    let three = try docs.sequenceString(3)
    #expect(three.hasPrefix("3-"))
    #expect(try docs.sequence(since: three) == 3)
    #expect(try docs.sequence(since: "0") == 0)
    #expect(try docs.sequence(since: "2") == 2)
    #expect(try docs.sequence(since: "99") == 3, "never past the last")
    #expect(try docs.sequence(since: "now") == 3)
    #expect(try docs.sequence(since: "2-unknowntoken") == 0)
    expectError(.invalidArgument) { _ = try docs.sequence(since: "x-y") }
    // Another Database value on the same file writes in an epoch of its own; positions
    // from the first stay valid.
    let again = try Database(path: directory.path("plain.db")).collection("docs")
    try write(again, 4...5, "e")
    let five = try again.sequenceString(5)
    #expect(five != "5" + three.dropFirst(1), "a new epoch, a new token")
    #expect(try again.sequence(since: three) == 3)
    #expect(try again.sequence(since: five) == 5)
  }

  @Test func theFileHasAnIdentityThatCopiesKeep() throws {
    let path = directory.path("id.db")
    let db = try Database(path: path)
    let uuid = try db.uuid()
    #expect(uuid.count == 32 && uuid.allSatisfy(\.isHexDigit))
    #expect(try Database(path: path).uuid() == uuid)
    try db.backup(to: directory.path("id-copy.db"))
    #expect(try Database(path: directory.path("id-copy.db")).uuid() == uuid)
    #expect(try Database(path: directory.path("other.db")).uuid() != uuid)
  }

  @Test func aRestoredCopyDoesNotSkipWhatItNeverHad() throws {
    let path = directory.path("live.db")
    let copy = directory.path("copy.db")
    var peerPosition: String
    do {
      let db = try Database(path: path)
      let docs = db.collection("docs")
      try write(docs, 1...5, "a")
      try db.backup(to: copy)
      expectError(.invalidArgument) { try db.backup(to: copy) }
      // The original goes on in the same epoch; a peer reads up to 10.
      try write(docs, 6...10, "b")
      peerPosition = try docs.sequenceString(10)
      // Another process writes more in a new epoch; the peer reads up to 15.
      let other = try Database(path: path).collection("docs")
      try write(other, 11...15, "c")
      let later = try other.sequenceString(15)
      #expect(try other.sequence(since: later) == 15)
      #expect(try other.sequence(since: peerPosition) == 10)
      peerPosition = later
    }
    // The file is restored from the copy (5 documents) and written to again.
    for suffix in ["", "-wal", "-shm"] {
      try? FileManager.default.removeItem(atPath: path + suffix)
    }
    try FileManager.default.copyItem(atPath: copy, toPath: path)
    let restored = try Database(path: path).collection("docs")
    try write(restored, 6...8, "z")
    // The peer's epoch is unknown here: it starts again from 0 and sees z6…z8.
    #expect(try restored.sequence(since: peerPosition) == 0)
    // A position in the copy's own epoch, past where the copy ends, continues from there.
    let firstEpoch = try restored.sequenceString(5)
    let beyond = "10" + firstEpoch.dropFirst(1)
    #expect(try restored.sequence(since: beyond) == 5)
    #expect(try restored.changes(since: 5).map(\.id) == ["z6", "z7", "z8"])
  }

  /// `GET /{db}`'s figures from one read are the ones each call gives on its own, through
  /// writes, deletions, a purge and a restored copy's new epoch; none for a collection
  /// that does not exist.
  @Test func statisticsAreTheSeparateFigures() async throws {
    let db = try Database(path: directory.path("statistics.db"))
    let docs = db.collection("docs")
    #expect(try await docs.statistics() == nil)
    func check(_ step: String) async throws {
      let statistics = try #require(try await docs.statistics(), "\(step)")
      let last = try await docs.lastSequence()
      #expect(
        statistics
          == CollectionStatistics(
            lastSequence: last, sequence: try await docs.sequenceString(last),
            purgeSequence: try await docs.purgeSequence(), count: try await docs.count(),
            deletedCount: try await docs.deletedCount()), "\(step)")
    }
    try await db.createCollection("docs")
    try await check("empty")
    let written = try await docs.putAll((0..<10).map { ["_id": .string("d\($0)")] })
    try await docs.put(["_id": "_design/x"])
    try await check("written")
    try await docs.delete("d1", rev: written[1].rev.description)
    try await check("deleted")
    try await docs.purge(["d2": [written[2].rev]])
    try await check("purged")
    try await db.deleteCollection("docs")
    #expect(try await docs.statistics() == nil)
    try await db.createCollection("docs")
    try await check("created again")
  }
}
