import Foundation
import Settee
import SetteeCore
import SetteeTestSupport
import Testing

/// `revsDiff` (CouchDB's `_revs_diff`) against the reference revision tree: random
/// histories written through the API (creations, edits, upserts, deletions, re-creations,
/// imports of peers' revisions) are replayed into `RevisionTree`s, and random offers of
/// held and unheld revisions get the same missing revisions and possible ancestors.
@Suite("revs_diff against the reference tree")
struct RevsDiffTests {
  @Test(arguments: 1...8)
  func agreesWithTheReferenceTree(seed: UInt64) throws {
    var random = SplitMix64(seed: seed)
    let db = try Database(inMemoryWith: .init())
    let docs = db.collection("docs")
    var trees: [String: RevisionTree] = [:]
    var current: [String: (rev: RevisionID, deleted: Bool)] = [:]
    let ids = (0..<12).map { "d\($0)" }
    func record(_ id: String, _ result: WriteResult, deleted: Bool) {
      let new = RevisionTree.Rev(result.rev.description)!
      let parent = current[id].map { RevisionTree.Rev($0.rev.description)! }
      _ = trees[id, default: RevisionTree()].insert(
        path: [new] + (parent.map { [$0] } ?? []), deleted: deleted)
      current[id] = (result.rev, deleted)
    }
    for step in 0..<150 {
      let id = ids[Int(random.next() % UInt64(ids.count))]
      switch (current[id], random.next() % 4) {
      case (nil, 0):
        // A peer's revision, imported as it is.
        let rev = "\(1 + random.next() % 5)-peer\(step)X"
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(
          "revsdiff-\(seed)-\(step).ndjson")
        try Data(#"{"_id":"\#(id)","_rev":"\#(rev)","n":\#(step)}"#.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        try docs.importDocuments(contentsOf: file)
        let stored = try #require(try docs.get(id))
        _ = trees[id, default: RevisionTree()].insert(
          path: [RevisionTree.Rev(rev)!], deleted: false)
        current[id] = (try #require(stored.rev), false)
      case (nil, _):
        record(id, try docs.put(["_id": .string(id), "n": .int(Int64(step))]), deleted: false)
      case (let known?, 0) where !known.deleted:
        record(id, try docs.delete(id, rev: known.rev), deleted: true)
      case (let known?, 1) where known.deleted:
        // Re-created after a deletion: the new revision descends from the tombstone.
        record(id, try docs.put(["_id": .string(id), "n": .int(Int64(step))]), deleted: false)
      case (let known?, _) where !known.deleted:
        record(
          id, try docs.put(["_id": .string(id), "_rev": .string(known.rev.description), "n": 1]),
          deleted: false)
      default:
        record(id, try docs.upsert(["_id": .string(id), "n": .int(Int64(step))]), deleted: false)
      }
    }
    // Offers: held revisions, unheld ones of any generation, and ids never written.
    var seen = (missing: 0, ancestors: 0, held: 0)
    for _ in 0..<20 {
      var offered: [String: [RevisionID]] = [:]
      for id in ids + ["never1", "never2"] where random.next() % 2 == 0 {
        var revisions: [RevisionID] = []
        let held = Array(trees[id]?.revisions ?? [])
        for _ in 0..<Int(random.next() % 4) {
          if !held.isEmpty, random.next() % 2 == 0 {
            revisions.append(
              try RevisionID(parsing: held[Int(random.next() % UInt64(held.count))].description))
          } else {
            revisions.append(
              try RevisionID(parsing: "\(1 + random.next() % 24)-offer\(random.next() % 50)"))
          }
        }
        offered[id] = revisions
      }
      let answer = try docs.revsDiff(offered)
      var expected: [String: RevisionDifference] = [:]
      for (id, revisions) in offered {
        let (missing, ancestors) = (trees[id] ?? RevisionTree()).missing(
          revisions.map { RevisionTree.Rev($0.description)! })
        if missing.isEmpty { continue }
        // A held document's missing revisions in CouchDB's order (generation, then
        // digest; a document never held keeps the offered order), its possible ancestors
        // in the winner's order, as the reference tree gives them.
        let held = trees[id] != nil
        let revs = try missing.map { try RevisionID(parsing: $0.description) }
        expected[id] = RevisionDifference(
          missing: held ? revs.sorted() : revs,
          possibleAncestors: try ancestors.map { try RevisionID(parsing: $0.description) })
      }
      #expect(answer == expected)
      seen.missing += answer.values.reduce(0) { $0 + $1.missing.count }
      seen.ancestors += answer.values.reduce(0) { $0 + $1.possibleAncestors.count }
      seen.held += offered.values.joined().count - answer.values.reduce(0) { $0 + $1.missing.count }
    }
    // The offers exercised every part of the answer.
    #expect(seen.missing > 0 && seen.ancestors > 0 && seen.held > 0, "\(seen)")
  }

  /// CouchDB's documented example shape: a held revision is left out, the rest missing,
  /// with the held leaf of a lower generation as a possible ancestor.
  @Test func couchDBsShape() throws {
    let docs = try Database(inMemoryWith: .init()).collection("docs")
    let first = try docs.put(["_id": "190f721ca3411be7aa9477db5f948bbb"])
    let offered = [
      "190f721ca3411be7aa9477db5f948bbb": [
        first.rev, try RevisionID(parsing: "3-bb72a7682290f94a985f7afac8b27137"),
        try RevisionID(parsing: "4-10265e5a26d807a3cfa459cf1a82ef2e"),
      ]
    ]
    let answer = try docs.revsDiff(offered)
    #expect(
      answer["190f721ca3411be7aa9477db5f948bbb"]?.json == [
        "missing": ["3-bb72a7682290f94a985f7afac8b27137", "4-10265e5a26d807a3cfa459cf1a82ef2e"],
        "possible_ancestors": [.string(first.rev.description)],
      ])
    #expect(try docs.revsDiff(["190f721ca3411be7aa9477db5f948bbb": [first.rev]]).isEmpty)
  }

  /// The answer printed without making it is JSONWriter's print of ``json``.
  @Test(arguments: [(1, 0), (1, 1), (3, 2), (0, 0)])
  func printsAsItsJSON(missing: Int, ancestors: Int) throws {
    let revisions = try (1...5).map {
      try RevisionID(parsing: "\($0)-\(String(repeating: "ab", count: 16))")
    }
    let difference = RevisionDifference(
      missing: Array(revisions.prefix(missing)),
      possibleAncestors: Array(revisions.suffix(ancestors)))
    var printed: [UInt8] = []
    difference.write(into: &printed)
    #expect(printed == JSONWriter.bytes(difference.json))
  }
}
