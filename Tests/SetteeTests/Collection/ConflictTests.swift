import Foundation
import Settee
import SetteeCore
import SetteeTestSupport
import Testing

/// Branches as a user meets them: peers' revisions written with `new_edits: false`, the
/// winner every face answers with, the conflict list, resolution, `revs_limit`, and the
/// damage `check` finds in a stored tree.
@Suite("Conflicts and new_edits: false")
struct ConflictTests {
  let db: Database
  let notes: DocumentCollection

  init() throws {
    db = try Database(inMemoryWith: .init())
    notes = db.collection("notes")
  }

  /// A document edited on two replicas: `1-a` then `2-b` here, `2-c` from a peer.
  private func conflicted(_ id: String = "n") throws {
    try notes.put(
      [
        "_id": .string(id), "_rev": "2-b", "text": "here",
        "_revisions": ["start": 2, "ids": ["b", "a"]],
      ],
      newEdits: false)
    try notes.put(
      [
        "_id": .string(id), "_rev": "2-c", "text": "there",
        "_revisions": ["start": 2, "ids": ["c", "a"]],
      ],
      newEdits: false)
  }

  @Test func theGreatestLiveLeafWinsAndTheOtherKeepsItsBody() throws {
    try conflicted()
    #expect(try notes.get("n")?.rev?.description == "2-c")
    #expect(try notes.get("n")?["text"] == "there")
    let leaves = try notes.leaves(of: "n")
    #expect(leaves.map { $0.rev!.description } == ["2-c", "2-b"])
    #expect(leaves[1]["text"] == "here")
    #expect(try notes.get("n", rev: RevisionID(parsing: "2-b"))?["text"] == "here")
    #expect(try notes.get("n", rev: RevisionID(parsing: "1-a")) == nil, "no body kept for 1-a")
    #expect(try notes.conflictedDocumentIDs() == ["n"])
    #expect(try notes.conflictCount() == 1)
    #expect(try notes.revisions(of: "n").map(\.rev.description).sorted() == ["1-a", "2-b", "2-c"])
  }

  @Test func aLiveLeafBeatsADeletedOneOfAHigherGeneration() throws {
    try conflicted()
    try notes.put(
      ["_id": "n", "_deleted": true, "_revisions": ["start": 3, "ids": ["d", "c"]]], newEdits: false
    )
    #expect(try notes.get("n")?.rev?.description == "2-b")
    #expect(try notes.get("n")?["text"] == "here")
    #expect(try notes.conflictedDocumentIDs() == [])
    #expect(try notes.leaves(of: "n").map(\.isDeleted) == [false, true])
    // Every face answers with the winner.
    try notes.ensureIndexed(["text"], name: "text")
    #expect(try notes.find(FindQuery(matching: Field("text") == "here")).map(\.id) == ["n"])
    #expect(try notes.find(FindQuery(matching: Field("text") == "there")).isEmpty)
  }

  @Test func aRevisionSentAgainIsANoOpReportedAsSuccess() throws {
    try conflicted()
    let seq = try notes.lastSequence()
    let again = try notes.put(
      ["_id": "n", "_rev": "2-b", "text": "changed?"], newEdits: false)
    #expect(again.rev.description == "2-b")
    #expect(try notes.lastSequence() == seq)
    #expect(try notes.get("n", rev: RevisionID(parsing: "2-b"))?["text"] == "here")
  }

  @Test func aLosingBranchGetsANewSequenceNumberWhileTheWinnerStays() throws {
    try conflicted()
    let before = try notes.changes().map(\.seq)
    try notes.put(
      ["_id": "n", "_rev": "1-z", "text": "old"], newEdits: false)  // a branch that loses
    #expect(try notes.get("n")?.rev?.description == "2-c")
    #expect(try notes.changes().map(\.seq) != before)
  }

  @Test func anEditOfALosingLeafExtendsItsBranch() throws {
    try conflicted()
    let edit = try notes.put(["_id": "n", "_rev": "2-b", "text": "here, again"])
    #expect(edit.rev.generation == 3)
    #expect(try notes.get("n")?.rev == edit.rev, "3-… beats 2-c")
    #expect(try notes.leaves(of: "n").count == 2)
    // A revision that is no leaf is a conflict.
    expectError(.conflict) { try notes.put(["_id": "n", "_rev": "1-a", "text": "x"]) }
  }

  @Test func resolvingByKeepingALeafDeletesTheOthers() throws {
    try conflicted()
    try conflicted("m")
    let seen = Box<[String]>([])
    let result = try notes.resolveConflicts(of: "n") { leaves in
      seen.value = leaves.map { $0.rev!.description }
      return .keep(leaves[1].rev!)
    }
    #expect(seen.value == ["2-c", "2-b"])
    #expect(result?.rev.description == "2-b")
    #expect(try notes.get("n")?["text"] == "here")
    #expect(try notes.conflictedDocumentIDs() == ["m"])
    #expect(try notes.leaves(of: "n").map(\.isDeleted) == [false, true])
    // Nothing to resolve any more.
    #expect(
      try notes.resolveConflicts(of: "n") { _ in .keep(try RevisionID(parsing: "2-b")) } == nil)
  }

  @Test func resolvingByMergingWritesANewRevisionOfTheWinner() throws {
    try conflicted()
    let result = try #require(
      try notes.resolveConflicts(of: "n") { leaves in
        .merged([
          "text": .string(leaves.compactMap { $0["text"]?.stringValue }.joined(separator: "+"))
        ])
      })
    #expect(result.rev.generation == 3)
    #expect(try notes.get("n")?["text"] == "there+here")
    #expect(try notes.conflictCount() == 0)
    #expect(
      try notes.revisions(of: "n").first { $0.rev == result.rev }?.parent?.description == "2-c")
  }

  @Test func aResolverThatKeepsNoLeafOrThrowsWritesNothing() throws {
    try conflicted()
    expectError(.invalidArgument) {
      try notes.resolveConflicts(of: "n") { _ in .keep(try RevisionID(parsing: "1-a")) }
    }
    struct Stop: Error {}
    #expect(throws: Stop.self) { try notes.resolveConflicts(of: "n") { _ in throw Stop() } }
    #expect(try notes.conflictedDocumentIDs() == ["n"])
    #expect(try notes.leaves(of: "n").count == 2)
  }

  @Test(arguments: [
    (#"{"_id":"x","n":1}"#, "needs the revision"),
    (#"{"_id":"x","_rev":"2-b","_revisions":{"start":2,"ids":["c","a"]}}"#, "newest revision"),
    (#"{"_id":"x","_revisions":{"start":1,"ids":["c","a"]}}"#, "below generation 1"),
    (#"{"_id":"x","_revisions":{"start":2,"ids":[]}}"#, "no ids"),
    (#"{"_id":"x","_revisions":{"start":2,"ids":[7]}}"#, "id 0"),
    (#"{"_id":"x","_revisions":[1]}"#, "array"),
  ])
  func malformedPeerRevisionsAreRefused(_ text: String, _ named: String) throws {
    guard case .object(let json) = try JSONParser.parse(text) else { return }
    let error = expectError(.invalidRevision) { try notes.put(json, newEdits: false) }
    #expect(error?.message.contains(named) == true, "\(error?.message ?? "")")
    #expect(try notes.count() == 0)
  }

  @Test func aBatchIsOneTransaction() throws {
    expectError(.invalidRevision) {
      try notes.putAll([["_id": "a", "_rev": "1-a"], ["_id": "b"]], newEdits: false)
    }
    #expect(try notes.count() == 0)
  }

  @Test func revsLimitStemsHistoriesAndNeverTheWinner() throws {
    try notes.setRevsLimit(3)
    #expect(try notes.revsLimit() == 3)
    var rev = try notes.put(["_id": "long", "n": 0]).rev
    for n in 1...6 {
      rev = try notes.put(["_id": "long", "_rev": .string(rev.description), "n": .int(Int64(n))])
        .rev
    }
    let history = try notes.revisions(of: "long")
    #expect(history.count == 3)
    #expect(history.map(\.rev.generation).sorted() == [5, 6, 7])
    #expect(history.first { $0.rev.generation == 5 }?.parent == nil, "a stemmed root")
    try conflicted()
    try notes.put(
      [
        "_id": "n", "_revisions": ["start": 6, "ids": ["f", "e", "d", "c2", "b2"]], "text": "deep",
      ],
      newEdits: false)
    #expect(try notes.get("n")?["text"] == "deep")
    #expect(try notes.leaves(of: "n").count == 3)
    #expect(try notes.revisions(of: "n").filter { $0.rev.generation > 2 }.count == 3)
    expectError(.invalidArgument) { try notes.setRevsLimit(0) }
    #expect(try db.check().isHealthy)
  }

  @Test func readsShowRevisionsAndConflictsInCouchDBsShape() throws {
    try conflicted()
    try notes.put(
      ["_id": "n", "_deleted": true, "_revisions": ["start": 2, "ids": ["d", "a"]]], newEdits: false
    )
    let all = RevisionReadOptions(
      revs: true, revsInfo: true, conflicts: true, deletedConflicts: true)
    let winner = try #require(try notes.document("n", all))
    #expect(
      JSONWriter.string(.object(winner))
        == #"{"_id":"n","_rev":"2-c","text":"there","_revisions":{"start":2,"ids":["c","a"]},"_revs_info":[{"rev":"2-c","status":"available"},{"rev":"1-a","status":"missing"}],"_conflicts":["2-b"],"_deleted_conflicts":["2-d"]}"#
    )
    var loser = all
    loser.rev = try RevisionID(parsing: "2-d")
    #expect(try notes.document("n", loser)?["_deleted"] == true)
    loser.rev = try RevisionID(parsing: "1-a")
    #expect(try notes.document("n", loser) == nil, "1-a is no leaf")
    #expect(try notes.document("missing", all) == nil)
    // A deleted winner reads as absent unless its revision is asked for.
    try notes.put(["_id": "gone", "_rev": "1-g", "_deleted": true], newEdits: false)
    #expect(try notes.document("gone", RevisionReadOptions()) == nil)
    #expect(
      try notes.document("gone", RevisionReadOptions(rev: RevisionID(parsing: "1-g")))?["_deleted"]
        == true)
  }

  /// CouchDB's tombstone rules: a new document written deleted is born a tombstone; a
  /// deleted document comes back by a write without `_rev` (continuing its branch), and a
  /// write naming the tombstone is a conflict.
  @Test func tombstonesAreBornAndRevivedAsInCouchDB() throws {
    let born = try notes.put(["_id": "t", "_deleted": true])
    #expect(born.rev.generation == 1)
    #expect(try notes.getRevision("t")?.isDeleted == true)
    expectError(.conflict) { try notes.put(["_id": "t", "_rev": .string(born.rev.description), "v": 1]) }
    let revived = try notes.put(["_id": "t", "v": 2])
    #expect(revived.rev.generation == 2)
    #expect(try notes.get("t")?["v"] == 2)
  }

  @Test func openRevisionsAnswersLeavesAndMissingOnes() throws {
    try conflicted()
    let all = try notes.openRevisions("n")
    // Every leaf in CouchDB's order: depth first through the tree, siblings by revision.
    #expect(all.map { $0.json["ok"]?["_rev"] } == ["2-b", "2-c"])
    let asked = try notes.openRevisions(
      "n", [RevisionID(parsing: "2-b"), RevisionID(parsing: "1-a"), RevisionID(parsing: "9-z")],
      options: RevisionReadOptions(revs: true))
    #expect(asked.count == 3)
    #expect(asked[0].json["ok"]?["_revisions"]?["ids"] == ["b", "a"])
    #expect(asked[1] == .missing(try RevisionID(parsing: "1-a")))
    #expect(JSONWriter.string(.object(asked[2].json)) == #"{"missing":"9-z"}"#)
    // latest: an ancestor answers with the leaves that descend from it.
    let latest = try notes.openRevisions("n", [RevisionID(parsing: "1-a")], latest: true)
    #expect(latest.map { $0.json["ok"]?["_rev"] } == ["2-c", "2-b"])
    #expect(try notes.openRevisions("none", [RevisionID(parsing: "1-a")]).count == 1)
  }

  @Test func theChangesFeedListsEveryLeafWinnerFirst() throws {
    try conflicted()
    try notes.put(["_id": "plain", "k": 1])
    let changes = try notes.changes()
    #expect(changes.map(\.id) == ["n", "plain"])
    #expect(changes[0].leaves.map(\.description) == ["2-c", "2-b"])
    #expect(changes[1].leaves == [changes[1].rev])
  }

  @Test func findWithConflictsAddsThemAndDocumentsReadBackWriteAgain() throws {
    try conflicted()
    try notes.put(["_id": "plain", "text": "x"])
    var query = try FindQuery(matching: Field("text") != "none")
    #expect(try notes.find(query).allSatisfy { $0.conflicts.isEmpty })
    query.conflicts = true
    let found = try notes.find(query)
    #expect(found.first { $0.id == "n" }?.conflicts.map(\.description) == ["2-b"])
    #expect(found.first { $0.id == "plain" }?.conflicts == [])
    // What a read with conflicts gives can be written back: _conflicts is ignored.
    let read = try #require(found.first { $0.id == "n" })
    #expect(read.json["_conflicts"] == ["2-b"])
    var back = read.json
    back["text"] = "edited"
    let written = try notes.put(back)
    #expect(written.rev.generation == 3)
  }

  @Test(arguments: [
    ("UPDATE documents SET conflicts = 0", "live and"),
    ("UPDATE revisions SET body = NULL WHERE rev = '2-b'", "has no body"),
    ("UPDATE revisions SET body = '{}' WHERE rev = '2-c'", "second body for its winning"),
    ("UPDATE documents SET rev = '2-b'", "greatest leaf"),
    ("UPDATE revisions SET parent = '5-q' WHERE rev = '2-c'", "after 5-q"),
  ])
  func damagedTreesAreNamedByCheck(_ sql: String, _ named: String) throws {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent(
      "tree-\(UUID().uuidString).settee")
    defer { try? FileManager.default.removeItem(at: url) }
    do {
      let file = try Database(path: url.path)
      try file.collection("notes").put(
        ["_id": "n", "_rev": "2-b", "_revisions": ["start": 2, "ids": ["b", "a"]]], newEdits: false)
      try file.collection("notes").put(
        ["_id": "n", "_rev": "2-c", "_revisions": ["start": 2, "ids": ["c", "a"]]], newEdits: false)
      #expect(try file.check().isHealthy)
      try file.damage(sql)
      let report = try file.check()
      let text = report.problems.map(\.message).joined(separator: "\n")
      #expect(text.contains(named), "\(sql): \(text)")
    }
  }
}

/// A value a non-escaping closure sets.
private final class Box<T>: @unchecked Sendable {
  var value: T
  init(_ value: T) { self.value = value }
}
