import Foundation
import Settee
import SetteeCore
import SetteeTestSupport
import Testing

/// The stored revision tree against the in-memory reference (`RevisionTree`): random
/// histories of peers' grafts (`new_edits: false`, stemmed ones too), edits of any leaf,
/// deletions, upserts and a falling `revs_limit` are applied to both, and after every
/// step the stored document has the reference's leaves (winner first, with the bodies
/// written), history and winner, and queries, the conflict list and `check` agree. The
/// revisions writes replaced read back with their bodies until a compaction, and no others.
@Suite("Stored revision trees against the reference")
struct StoredTreeTests {
  @Test(arguments: 1...10)
  func agreesWithTheReference(seed: UInt64) throws {
    var random = SplitMix64(seed: seed)
    let db = try Database(inMemoryWith: .init())
    let docs = db.collection("docs")
    try docs.ensureIndexed(["n"], name: "n")
    var trees: [String: RevisionTree] = [:]
    var bodies: [String: Int64] = [:]  // "id rev" → n of that revision's body
    var seqs: [String: Int64] = [:]
    var keptReads = 0
    var kept: Set<String> = []  // "id rev" of revisions a write replaced since the last compaction
    var limit = 1000
    let ids = (0..<6).map { "d\($0)" }
    func rev(_ revision: RevisionID) -> RevisionTree.Rev { RevisionTree.Rev(revision.description)! }
    func pick<T>(_ values: [T]) -> T { values[Int(random.next() % UInt64(values.count))] }

    for step in 0..<160 {
      let id = pick(ids)
      let n = Int64(step)
      var tree = trees[id] ?? RevisionTree()
      let leaves = tree.leaves
      let before = Set(leaves)
      switch random.next() % 9 {
      case 0, 1, 2:
        // A peer's revision: a new branch from a random revision (or a new root), up to
        // three generations long, sometimes sent with its ancestry cut short.
        let known = Array(tree.revisions)
        let base: RevisionTree.Rev? = known.isEmpty || random.next() % 5 == 0 ? nil : pick(known)
        var path = base.map { tree.ancestry(of: $0) } ?? []
        let start = (base?.generation ?? Int(random.next() % 3)) + 1
        for generation in start..<(start + 1 + Int(random.next() % 3)) {
          path.insert(
            RevisionTree.Rev(generation: generation, suffix: "p\(step)x\(generation)"), at: 0)
        }
        if random.next() % 3 == 0 { path = Array(path.prefix(1 + Int(random.next() % 2))) }
        let deleted = random.next() % 6 == 0
        var json: JSONObject = [
          "_id": .string(id), "_rev": .string(path[0].description), "n": .int(n),
          "_revisions": .object([
            "start": .int(Int64(path[0].generation)),
            "ids": .array(path.map { .string(String(decoding: $0.suffix, as: UTF8.self)) }),
          ]),
        ]
        if deleted { json["_deleted"] = true }
        let result = try docs.put(json, newEdits: false)
        let insertion = tree.insert(path: path, deleted: deleted)
        #expect(insertion != nil)
        #expect(result.rev.description == path[0].description)
        if insertion == .added { bodies["\(id) \(path[0])"] = n }
      case 3, 4:
        // An edit of a random leaf, a losing one too.
        guard !leaves.isEmpty else { continue }
        let leaf = pick(leaves)
        let deleting = random.next() % 3 == 0
        let edit = Document(
          id: id, rev: try RevisionID(parsing: leaf.rev.description), isDeleted: deleting,
          body: deleting ? [:] : ["n": .int(n)])
        if deleting && leaf.deleted {
          expectError(.notFound) { try docs.put(edit) }
          continue
        }
        if !deleting && tree.winner?.deleted == true {
          // A deleted document is not edited through a tombstone (CouchDB's 409).
          expectError(.conflict) { try docs.put(edit) }
          continue
        }
        let result = try docs.put(edit)
        #expect(tree.insert(path: [rev(result.rev), leaf.rev], deleted: deleting) == .added)
        bodies["\(id) \(result.rev)"] = deleting ? nil : n
      case 5:
        // An upsert extends the winner.
        guard let winner = tree.winner else { continue }
        let result = try docs.upsert(["_id": .string(id), "n": .int(n)])
        #expect(tree.insert(path: [rev(result.rev), winner.rev], deleted: false) == .added)
        bodies["\(id) \(result.rev)"] = n
      case 6:
        // A revision sent again: a no-op.
        guard let leaf = leaves.first else { continue }
        let seq = seqs[id]
        let result = try docs.put(
          ["_id": .string(id), "_rev": .string(leaf.rev.description), "n": 99], newEdits: false)
        #expect(result.seq == seq)
        #expect(tree.insert(path: [leaf.rev], deleted: false) == .alreadyPresent)
      case 7:
        // Compaction: replaced revisions lose their bodies, leaves keep theirs.
        try docs.compact()
        kept.removeAll()
        keptReads += try expectSame(docs, id: id, tree: tree, bodies: bodies, kept: kept)
        continue
      default:
        // A lower revs_limit, applied by each document's next write.
        limit = 2 + Int(random.next() % 4)
        try docs.setRevsLimit(limit)
        continue
      }
      tree.stem(limit: limit)
      trees[id] = tree
      for replaced in before.subtracting(tree.leaves) { kept.insert("\(id) \(replaced.rev)") }
      keptReads += try expectSame(docs, id: id, tree: tree, bodies: bodies, kept: kept)
      if Set(tree.leaves) != before {
        let seq = try #require(try docs.changes().first { $0.id == id }?.seq)
        #expect(seq > seqs[id] ?? 0, "a changed leaf set gives a new sequence number")
        seqs[id] = seq
      }
    }
    // Every face sees winners only; the conflict list is the documents with two live leaves.
    let liveWinners = trees.filter { $0.value.winner?.deleted == false }
    let found = try docs.find(try FindQuery(matching: Field("n") >= 0))
    #expect(Set(found.map(\.id)) == Set(liveWinners.keys))
    for document in found {
      #expect(document.rev?.description == liveWinners[document.id]?.winner?.rev.description)
      #expect(document["n"] == bodies["\(document.id) \(document.rev!)"].map { .int($0) })
    }
    let conflicted = trees.filter { $0.value.leaves.filter { !$0.deleted }.count > 1 }
    #expect(try docs.conflictedDocumentIDs() == conflicted.keys.sorted())
    #expect(try docs.conflictCount() == conflicted.count)
    let report = try db.check()
    #expect(report.isHealthy, "\(report.problems)")
    #expect(keptReads > 10, "replaced revisions were read back \(keptReads) times")
  }

  /// The stored document against the reference tree; how many replaced revisions it read
  /// back whole.
  @discardableResult
  private func expectSame(
    _ docs: DocumentCollection, id: String, tree: RevisionTree, bodies: [String: Int64],
    kept: Set<String>
  ) throws -> Int {
    let leaves = try docs.leaves(of: id)
    #expect(leaves.map { $0.rev!.description } == tree.leaves.map(\.rev.description))
    #expect(leaves.map(\.isDeleted) == tree.leaves.map(\.deleted))
    for leaf in leaves where !leaf.isDeleted {
      #expect(leaf["n"] == bodies["\(id) \(leaf.rev!)"].map { .int($0) }, "body of \(leaf.rev!)")
    }
    #expect(try docs.getRevision(id)?.rev?.description == tree.winner?.rev.description)
    let stored = try docs.revisions(of: id)
    #expect(Set(stored.map(\.rev.description)) == Set(tree.revisions.map(\.description)))
    for info in stored {
      let expected = tree.ancestry(of: RevisionTree.Rev(info.rev.description)!)
      #expect(info.parent?.description == expected.dropFirst().first?.description)
    }
    // Leaves and replaced revisions read back whole; a peer's ancestors and compacted
    // revisions do not.
    let leafRevs = Set(tree.leaves.map(\.rev.description))
    var replacedReads = 0
    for revision in tree.revisions {
      let key = "\(id) \(revision)"
      let read = try docs.get(id, rev: try RevisionID(parsing: revision.description))
      let expected = leafRevs.contains(revision.description) || kept.contains(key)
      #expect((read != nil) == expected, "\(key): body read \(read != nil), expected \(expected)")
      if let read, !read.isDeleted {
        #expect(read["n"] == bodies[key].map { .int($0) }, "body of \(key)")
      }
      if read != nil && !leafRevs.contains(revision.description) { replacedReads += 1 }
    }
    return replacedReads
  }
}
