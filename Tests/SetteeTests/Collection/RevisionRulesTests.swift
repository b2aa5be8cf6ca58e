import Foundation
import GRDB
import SetteeCore
import SetteeTestSupport
import Testing

@testable import Settee

@Suite("Revision rules")
struct RevisionRulesTests {
  let db: Settee.Database
  let people: DocumentCollection

  init() throws {
    db = try Database(inMemoryWith: .init())
    people = db.collection("people")
  }

  func expectCode(_ code: SetteeError.Code, _ body: () throws -> Void) {
    #expect {
      try body()
    } throws: { ($0 as? SetteeError)?.code == code }
  }

  /// A record restored with a peer's revision (issue 31) keeps it byte for byte, and the
  /// next edit descends from it.
  @Test func importedPeerRevisionsAreKept() throws {
    let directory = TemporaryDirectory()
    let file = directory.path("peer.ndjson")
    try Data(#"{"_id":"x","_rev":"10-ABC","n":1}"#.utf8).write(to: URL(fileURLWithPath: file))
    try people.importDocuments(contentsOf: URL(fileURLWithPath: file))
    let stored = try #require(try people.get("x"))
    #expect(stored.rev?.description == "10-ABC")
    let edited = try people.put(["_id": "x", "_rev": "10-ABC", "n": 2])
    #expect(edited.rev.generation == 11)
    #expect(try people.revisions(of: "x").map(\.rev.description).contains("10-ABC"))
  }

  @Test func createsWithAGivenOrGeneratedID() throws {
    let given = try people.put(["_id": "mike", "name": "mike"])
    #expect(given.id == "mike" && given.rev.generation == 1 && given.seq == 1)
    let generated = try people.put(["name": "fred"])
    #expect(generated.id.count == 32 && generated.seq == 2)
    #expect(try people.get(generated.id)?["name"] == "fred")
    #expect(try people.get("mike")?.rev == given.rev)
  }

  @Test func updatesOnlyWithTheCurrentRevision() throws {
    let first = try people.put(["_id": "mike", "age": 12])
    let second = try people.put(["_id": "mike", "_rev": .string(first.rev.description), "age": 13])
    #expect(second.rev.generation == 2)
    #expect(try people.get("mike")?["age"] == 13)

    // Stale, missing and unknown revisions are conflicts that write nothing.
    expectCode(.conflict) {
      try people.put(["_id": "mike", "_rev": .string(first.rev.description), "age": 99])
    }
    expectCode(.conflict) { try people.put(["_id": "mike", "age": 99]) }
    expectCode(.conflict) { try people.put(["_id": "mike", "_rev": "2-abc", "age": 99]) }
    expectCode(.conflict) { try people.put(["_id": "nobody", "_rev": "1-abc"]) }
    #expect(try people.get("mike")?.rev == second.rev)
    #expect(try people.get("mike")?["age"] == 13)
    #expect(try people.get("nobody") == nil)
    #expect(try people.lastSequence() == 2)
  }

  @Test func deletesLeaveATombstone() throws {
    let created = try people.put(["_id": "mike", "age": 12])
    expectCode(.conflict) { try people.delete("mike", rev: "1-abc") }
    let deleted = try people.delete("mike", rev: created.rev)
    #expect(deleted.rev.generation == 2)
    #expect(try people.get("mike") == nil)
    let tombstone = try #require(try people.getRevision("mike"))
    #expect(tombstone.isDeleted && tombstone.rev == deleted.rev)
    #expect(try people.count() == 0)
    expectCode(.notFound) { try people.delete("mike", rev: deleted.rev) }
    expectCode(.notFound) { try people.delete("nobody", rev: "1-abc") }
  }

  @Test func deletingThroughPutWorksToo() throws {
    let created = try people.put(["_id": "mike", "age": 12])
    try people.put(["_id": "mike", "_rev": .string(created.rev.description), "_deleted": true])
    #expect(try people.get("mike") == nil)
  }

  @Test func recreatesAfterDeleteAndKeepsHistory() throws {
    let created = try people.put(["_id": "mike", "age": 12])
    let updated = try people.put([
      "_id": "mike", "_rev": .string(created.rev.description), "age": 13,
    ])
    let deleted = try people.delete("mike", rev: updated.rev)
    // Re-creating needs no _rev (or the tombstone's); the new revision extends the tombstone.
    let recreated = try people.put(["_id": "mike", "age": 1])
    #expect(recreated.rev.generation == 4)
    #expect(try people.get("mike")?["age"] == 1)

    let history = try people.revisions(of: "mike")
    #expect(history.map(\.rev) == [created.rev, updated.rev, deleted.rev, recreated.rev])
    #expect(history.map(\.parent) == [nil, created.rev, updated.rev, deleted.rev])
    #expect(history.map(\.isDeleted) == [false, false, true, false])
    #expect(history.map(\.seq) == history.map(\.seq).sorted() && Set(history.map(\.seq)).count == 4)
  }

  /// Writes that name no revision insert first and look the id up only when it is taken:
  /// a taken id (live or a tombstone) takes the usual path, with no sequence number lost.
  @Test func insertFirstFallsBackWhenTheIDIsTaken() throws {
    let a = try people.put(["_id": "a", "n": 1])
    expectError(.conflict) { try people.put(["_id": "a", "n": 2]) }
    #expect(try people.get("a")?["n"] == 1)
    try people.delete("a", rev: a.rev)
    let again = try people.put(["_id": "a", "n": 3])
    #expect(again.rev.generation == 3)
    var lines = [
      Array(#"{"_id":"a","_rev":"\#(again.rev)","n":3}"#.utf8) + [10],
      Array(#"{"_id":"b","n":4}"#.utf8) + [10],
    ].makeIterator()
    var reader = JSONRecordReader(maxRecordBytes: 1 << 20) { lines.next() }
    let summary = try people.importDocuments(from: &reader)
    #expect(summary.documents == 2)
    #expect(try people.changes().map(\.seq) == [4, 5])
    #expect(try people.get("b")?["n"] == 4 && people.get("a")?["n"] == 3)
  }

  /// A first revision has its `revisions` row only once replaced (its sequence number and
  /// flags kept from `documents`); files written with the row from the start read the
  /// same, with no duplicate; a first revision that is a deletion's successor is not lost.
  @Test func firstRevisionsReadTheSameWithOrWithoutTheirRow() throws {
    let created = try people.put(["_id": "a", "n": 1])
    let once = try people.revisions(of: "a")
    #expect(once.map(\.rev) == [created.rev] && once.first?.parent == nil)
    #expect(once.first?.seq == created.seq && once.first?.isDeleted == false)
    let updated = try people.put(["_id": "a", "_rev": .string(created.rev.description), "n": 2])
    let twice = try people.revisions(of: "a")
    #expect(twice.map(\.rev) == [created.rev, updated.rev])
    #expect(twice.map(\.seq) == [created.seq, updated.seq])
    #expect(twice.map(\.parent) == [nil, created.rev])
    // A file from before the rule: the first revision's row is there from the start.
    let old = try people.put(["_id": "b"])
    try db.writer.write { db in
      try db.execute(
        sql: """
          INSERT INTO revisions (rid, rev, parent, deleted, seq)
          SELECT rid, rev, NULL, deleted, seq FROM documents WHERE id = 'b'
          """)
    }
    #expect(try people.revisions(of: "b").map(\.rev) == [old.rev])
    let next = try people.put(["_id": "b", "_rev": .string(old.rev.description)])
    #expect(try people.revisions(of: "b").map(\.rev) == [old.rev, next.rev])
    // A document deleted at its first revision.
    let c = try people.put(["_id": "c"])
    let gone = try people.delete("c", rev: c.rev)
    let history = try people.revisions(of: "c")
    #expect(history.map(\.rev) == [c.rev, gone.rev] && history.map(\.isDeleted) == [false, true])
  }

  @Test func changesFeedShowsTheLatestChangeOfEachDocument() throws {
    let a = try people.put(["_id": "a"])
    try people.put(["_id": "b"])
    try people.put(["_id": "c"])
    try people.delete("a", rev: a.rev)
    let changes = try people.changes()
    #expect(changes.map(\.id) == ["b", "c", "a"])
    #expect(changes.map(\.seq) == [2, 3, 4])
    #expect(changes.map(\.isDeleted) == [false, false, true])
    #expect(try people.changes(since: 2).map(\.id) == ["c", "a"])
    #expect(try people.changes(since: 0, limit: 1).map(\.id) == ["b"])
    #expect(try people.changes(since: 4).isEmpty)
  }

  @Test func collectionsAreSeparate() throws {
    try people.put(["_id": "x", "kind": "person"])
    try db.collection("pets").put(["_id": "x", "kind": "pet"])
    #expect(try people.get("x")?["kind"] == "person")
    #expect(try db.collection("pets").get("x")?["kind"] == "pet")
    #expect(try db.collection("pets").lastSequence() == 1)
    #expect(try db.collectionNames() == ["people", "pets"])
    #expect(try db.collection("empty").get("x") == nil)
    #expect(try db.collection("empty").changes().isEmpty)
  }

  @Test func identicalEditsOnTwoDatabasesGetTheSameRevision() throws {
    let other = try Database(inMemoryWith: .init()).collection("people")
    let here = try people.put(["_id": "m", "a": 1])
    let there = try other.put(["_id": "m", "a": 1])
    #expect(here.rev == there.rev)
  }
}
