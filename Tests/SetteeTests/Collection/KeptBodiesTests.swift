import Foundation
import Settee
import SetteeCore
import SetteeTestSupport
import Testing

/// Replaced revisions keep their bodies and attachments until compaction, as CouchDB's do
/// (couchdb-python's `test_doc_revs`), within a budget that bounds the file between
/// compactions; stemming, purges and compaction take them with their blobs.
@Suite("Replaced revisions until compaction")
struct KeptBodiesTests {
  let db: Database
  let docs: DocumentCollection

  init() throws {
    db = try Database(inMemoryWith: .init())
    docs = db.collection("docs")
  }

  /// Each revision's `_revs_info` status, newest first.
  private func statuses(_ id: String) throws -> [String] {
    let json = try #require(try docs.document(id, RevisionReadOptions(revsInfo: true)))
    return (json["_revs_info"]?.arrayValue ?? []).compactMap { $0["status"]?.stringValue }
  }

  @Test func replacedRevisionsReadBackUntilCompaction() throws {
    let first = try docs.put(["_id": "a", "n": 1])
    let second = try docs.put(["_id": "a", "_rev": .string(first.rev.description), "n": 2])
    let third = try docs.put(["_id": "a", "_rev": .string(second.rev.description), "n": 3])
    #expect(try docs.get("a", rev: first.rev)?["n"] == 1)
    #expect(try docs.get("a", rev: second.rev)?["n"] == 2)
    #expect(try docs.get("a", rev: third.rev)?["n"] == 3)
    #expect(try statuses("a") == ["available", "available", "available"])
    let opened = try docs.document("a", RevisionReadOptions(rev: first.rev))
    #expect(opened?["n"] == 1)
    #expect(opened?["_rev"] == .string(first.rev.description))
    let open = try docs.openRevisions("a", [first.rev, third.rev])
    #expect(open.map { $0.json.keys.sorted() } == [["ok"], ["ok"]])
    // Writes still name only the current revision.
    expectError(.conflict) { try docs.put(["_id": "a", "_rev": .string(first.rev.description)]) }
    #expect(try db.check().isHealthy)

    #expect(try docs.compact() == 2)
    #expect(try docs.get("a", rev: first.rev) == nil)
    #expect(try docs.get("a", rev: second.rev) == nil)
    #expect(try docs.get("a")?["n"] == 3)
    #expect(try statuses("a") == ["available", "missing", "missing"])
    #expect(try docs.openRevisions("a", [first.rev]).map { $0.json.keys.sorted() } == [["missing"]])
    #expect(try docs.compact() == 0)
    #expect(try db.check().isHealthy)
  }

  @Test func tombstonesAndLosingLeavesAreKeptAsCouchDBKeepsThem() throws {
    let first = try docs.put(["_id": "a", "n": 1])
    let gone = try docs.delete("a", rev: first.rev)
    let again = try docs.put(["_id": "a", "n": 2])
    #expect(try statuses("a") == ["available", "deleted", "available"])
    let tombstone = try #require(try docs.get("a", rev: gone.rev))
    #expect(tombstone.isDeleted)
    #expect(try docs.get("a", rev: again.rev)?["n"] == 2)

    // A losing leaf that an edit extends is a replaced revision: kept, and readable.
    try docs.put(["_id": "b", "_rev": "1-x", "side": "x"], newEdits: false)
    try docs.put(
      ["_id": "b", "_rev": "2-y", "_revisions": ["start": 2, "ids": ["y", "x"]], "side": "y"],
      newEdits: false)
    try docs.put(
      ["_id": "b", "_rev": "2-z", "_revisions": ["start": 2, "ids": ["z", "x"]], "side": "z"],
      newEdits: false)
    let losing = try RevisionID(parsing: "2-y")
    let extended = try docs.put(["_id": "b", "_rev": .string(losing.description), "side": "y2"])
    #expect(try docs.get("b", rev: losing)?["side"] == "y")
    #expect(try docs.get("b", rev: RevisionID(parsing: "1-x"))?["side"] == "x")
    #expect(try docs.get("b", rev: extended.rev)?["side"] == "y2")
    #expect(try db.check().isHealthy)
    #expect(try docs.compact() == 4, "1-a, its tombstone 2-…, 1-x and 2-y")
    #expect(try docs.get("b", rev: losing) == nil)
    #expect(try docs.leaves(of: "b").count == 2, "leaves keep theirs")
    #expect(try db.check().isHealthy)
  }

  @Test func pastTheBudgetAWriteKeepsOnlyTheBodyItReplaces() throws {
    // One document edited past the floor of 1,000 kept bodies.
    var rev = try docs.put(["_id": "a", "n": 0]).rev
    for n in 1...1001 {
      rev = try docs.put(["_id": "a", "_rev": .string(rev.description), "n": .int(Int64(n))]).rev
    }
    let kept = try statuses("a").filter { $0 == "available" }.count
    #expect(kept == 2, "the winner and the revision its last write replaced")
    let json = try #require(try docs.document("a", RevisionReadOptions(revs: true)))
    let ids = json["_revisions"]?["ids"]?.arrayValue ?? []
    let parent = try RevisionID(parsing: "1001-\(ids[1].stringValue ?? "")")
    #expect(try docs.get("a", rev: parent)?["n"] == 1000)
    #expect(try db.check().isHealthy)
    // Compaction starts the budget again.
    #expect(try docs.compact() == 1)
    for n in 1002...1004 {
      rev = try docs.put(["_id": "a", "_rev": .string(rev.description), "n": .int(Int64(n))]).rev
    }
    #expect(try statuses("a").prefix(4) == ["available", "available", "available", "available"])
  }

  @Test func stemmingAndPurgesTakeKeptAttachmentsWithTheirBlobs() throws {
    try docs.setRevsLimit(2)
    var rev = try docs.putAttachment("x", to: "a", rev: nil, data: [0]).rev
    for byte in UInt8(1)...5 {
      rev = try docs.putAttachment("x", to: "a", rev: rev, data: [byte]).rev
    }
    // The winner and the one revision the stemmed history still holds.
    #expect(try db.storedAttachmentBlobs() == 2)
    #expect(try statuses("a") == ["available", "available"])
    #expect(try db.check().isHealthy)

    let b = try docs.putAttachment("y", to: "b", rev: nil, data: [9, 9])
    try docs.putAttachment("y", to: "b", rev: b.rev, data: [8, 8])
    #expect(try db.storedAttachmentBlobs() == 4)
    let purged = try docs.purge(["b": [try #require(try docs.getRevision("b")?.rev)]])
    #expect(purged["b"]?.count == 1)
    #expect(try db.storedAttachmentBlobs() == 2, "the purged document's replaced revision's too")
    #expect(try db.check().isHealthy)
  }

  @Test func compactionIsAsyncToo() async throws {
    let first = try await docs.put(["_id": "a", "n": 1])
    try await docs.put(["_id": "a", "_rev": .string(first.rev.description), "n": 2])
    #expect(try await docs.get("a", rev: first.rev)?["n"] == 1)
    #expect(try await docs.compact() == 1)
    #expect(try await docs.get("a", rev: first.rev) == nil)
  }
}
