import Foundation
import Settee
import SetteeCore
import SetteeTestSupport
import Testing

/// Purge: leaves removed for good with the branch only they used; a document without
/// leaves goes from the feed and every index (JSON, text, views, `where` fields) with no
/// tombstone; a document with leaves left gets its next winner.
@Suite("Purge")
struct PurgeTests {
  let db: Database
  let docs: DocumentCollection

  init() throws {
    db = try Database(inMemoryWith: .init())
    docs = db.collection("docs")
  }

  private func graft(_ id: String, _ revs: [String], _ fields: JSONObject = [:]) throws {
    let newest = try RevisionID(parsing: revs[0])
    var json = fields
    json["_id"] = .string(id)
    json["_revisions"] = [
      "start": .int(Int64(newest.generation)),
      "ids": .array(try revs.map { .string(try RevisionID(parsing: $0).digest) }),
    ]
    try docs.put(json, newEdits: false)
  }

  @Test func aDocumentWithoutLeavesGoesFromEveryFace() throws {
    try docs.ensureIndexed(["n"], name: "n")
    try docs.ensureIndexed(["text"], name: "t", type: .text)
    try docs.addQueryableFields("[n]")
    let view = try docs.defineView(json: ["name": "by_n", "key": "n"])
    let kept = try docs.put(["_id": "keep", "n": 1, "text": "apple"])
    let gone = try docs.put(["_id": "gone", "n": 2, "text": "apple"])
    #expect(try view.query(ViewQuery()).rows.count == 2)
    let seq = try docs.lastSequence()
    let purged = try docs.purge([
      "gone": [gone.rev], "keep": [try RevisionID(parsing: "9-x")], "none": [kept.rev],
    ])
    #expect(purged == ["gone": [gone.rev]])
    #expect(try docs.getRevision("gone") == nil, "no tombstone")
    #expect(try docs.changes().map(\.id) == ["keep"])
    #expect(try docs.lastSequence() == seq)
    #expect(try docs.count() == 1)
    #expect(try docs.find(FindQuery(matching: Field("n") >= 0)).map(\.id) == ["keep"])
    #expect(
      try docs.find(FindQuery(selector: SelectorParser.parse(#"{"$text":{"$search":"apple"}}"#)))
        .map(\.id) == ["keep"])
    #expect(try docs.find(where: "[n] >= 0").map(\.id) == ["keep"])
    #expect(try view.query(ViewQuery()).rows.map(\.id) == ["keep"])
    #expect(try docs.purgeSequence() == 1)
    let report = try db.check()
    #expect(report.isHealthy, "\(report.problems)")
    // The id can be written again as new.
    #expect(try docs.put(["_id": "gone", "n": 3]).rev.generation == 1)
  }

  @Test func purgingTheWinnerLetsTheNextLeafWin() throws {
    try docs.ensureIndexed(["side"], name: "side")
    try graft("c", ["2-b", "1-a"], ["side": "here"])
    try graft("c", ["2-c", "1-a"], ["side": "there"])
    let view = try docs.defineView(json: ["name": "by_side", "key": "side"])
    #expect(try view.query(ViewQuery()).rows.map(\.key) == ["there"])
    let seq = try docs.lastSequence()
    try docs.purge(["c": [try RevisionID(parsing: "2-c")]])
    #expect(try docs.get("c")?["side"] == "here")
    #expect(try docs.conflictCount() == 0)
    #expect(try docs.lastSequence() == seq + 1, "the document changed: a new sequence number")
    #expect(try docs.find(FindQuery(matching: Field("side") == "there")).isEmpty)
    #expect(try docs.find(FindQuery(matching: Field("side") == "here")).map(\.id) == ["c"])
    #expect(try view.query(ViewQuery()).rows.map(\.key) == ["here"])
    #expect(try docs.revisions(of: "c").map(\.rev.description).sorted() == ["1-a", "2-b"])
    let report = try db.check()
    #expect(report.isHealthy, "\(report.problems)")
  }

  @Test func aPurgedBranchTakesTheAncestorsOnlyItUsed() throws {
    try graft("d", ["3-c", "2-b", "1-a"], ["v": 3])
    try graft("d", ["2-x", "1-a"], ["v": 2])
    try docs.putAttachment("f", to: "d", rev: try RevisionID(parsing: "2-x"), data: [1, 2])
    #expect(try db.storedAttachmentBlobs() == 1)
    let edited = try #require(try docs.leaves(of: "d").first { $0.rev?.description != "3-c" })
    // Not a leaf: nothing happens.
    #expect(try docs.purge(["d": [try RevisionID(parsing: "2-b")]]).isEmpty)
    try docs.purge(["d": [edited.rev!]])
    #expect(try docs.revisions(of: "d").map(\.rev.description).sorted() == ["1-a", "2-b", "3-c"])
    #expect(try db.storedAttachmentBlobs() == 0)
    try docs.purge(["d": [try RevisionID(parsing: "3-c")]])
    #expect(try docs.getRevision("d") == nil)
    #expect(try docs.purgeSequence() == 2)
    let report = try db.check()
    #expect(report.isHealthy, "\(report.problems)")
  }
}
