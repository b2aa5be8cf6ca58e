import Foundation
import Settee
import SetteeCore
import SetteeTestSupport
import Testing

/// The counts of live and deleted documents every write keeps (`doc_count`,
/// `doc_del_count`, `total_rows`) against the documents counted one by one, after every
/// kind of write in random order: edits, deletions, recreations, replicated branches,
/// conflicts resolved, purges, batches with a refused document, and a collection deleted
/// and made again.
@Suite("Document counts")
struct DocumentCountTests {
  /// What `count()` and `deletedCount()` must say: the documents counted one by one.
  static func counted(_ docs: DocumentCollection) throws -> (live: Int, deleted: Int) {
    let all = try docs.changes()
    var live = 0
    var deleted = 0
    for change in all { if change.isDeleted { deleted += 1 } else { live += 1 } }
    return (live, deleted)
  }

  @Test func countsFollowEveryKindOfWrite() throws {
    let seed = UInt64(Date().timeIntervalSince1970)
    var random = SplitMix64(seed: seed)
    let database = try Database(inMemoryWith: .init())
    let names = ["a", "b"]
    for step in 0..<600 {
      let name = names.randomElement(using: &random)!
      let docs = database.collection(name)
      let id = "d\(Int.random(in: 0..<25, using: &random))"
      let leaves = (try? docs.leaves(of: id)) ?? []
      let winner = try docs.getRevision(id)
      switch Int.random(in: 0..<10, using: &random) {
      case 0, 1:
        // A new document, an edit, or a recreation of a deleted one.
        var json: JSONObject = ["_id": .string(id), "n": .int(Int64(step))]
        if let winner, !winner.isDeleted { json["_rev"] = .string(winner.rev!.description) }
        _ = try? docs.put(json)
      case 2:
        if let winner, !winner.isDeleted { _ = try docs.delete(id, rev: winner.rev!) }
      case 3:
        // A replicated branch, deleted or not, beside whatever is there.
        let generation = Int.random(in: 1...4, using: &random)
        let digests = (0..<generation).map { _ in
          String(UInt64.random(in: 0...UInt64.max, using: &random), radix: 16)
        }
        var json: JSONObject = [
          "_id": .string(id), "branch": .int(Int64(step)),
          "_revisions": ["start": .int(Int64(generation)), "ids": .array(digests.map(JSON.string))],
        ]
        if Bool.random(using: &random) { json["_deleted"] = true }
        _ = try docs.put(json, newEdits: false)
      case 4:
        // A conflict resolved: a leaf deleted (a losing one, or the winner).
        if let leaf = leaves.filter({ !$0.isDeleted }).randomElement(using: &random) {
          _ = try? docs.delete(id, rev: leaf.rev!)
        }
      case 5:
        if let leaf = leaves.randomElement(using: &random) {
          _ = try docs.purge([id: [leaf.rev!]])
        }
      case 6:
        // A batch in which one document is refused (a conflict): the others are written.
        let batch: [JSONObject] = (0..<3).map { index in
          ["_id": .string("batch-\(step)-\(index)")]
        } + [["_id": "clash", "_rev": "9-nope"]]
        _ = try docs.putEach(batch)
      case 7:
        _ = try docs.putAll(
          [["_id": .string("all-\(step)"), "_deleted": true, "_rev": "1-abc"]], newEdits: false)
      case 8:
        if Int.random(in: 0..<8, using: &random) == 0, try database.collectionExists(name) {
          try database.deleteCollection(name)
        }
      default:
        _ = try docs.insert(["n": .int(Int64(step))])
      }
      let expected = try Self.counted(docs)
      let stored = (try docs.count(), try docs.deletedCount())
      guard stored == expected else {
        Issue.record("step \(step) on \(name): counts \(stored), documents \(expected) (seed \(seed))")
        return
      }
    }
    let report = try database.check()
    #expect(report.isHealthy, "\(report.problems) (seed \(seed))")
  }

  /// A file written before the counts were kept gets them when it is opened for writing.
  @Test func anOlderFileIsCountedWhenItIsUpgraded() throws {
    let directory = TemporaryDirectory()
    let path = directory.path("old.db")
    do {
      let database = try Database(path: path)
      let docs = database.collection("docs")
      for index in 0..<5 { try docs.put(["_id": .string("k\(index)")]) }
      _ = try docs.delete("k0", rev: try docs.getRevision("k0")!.rev!)
      // As the previous version left it: no counts, and the migration not run.
      try database.damage(
        """
        ALTER TABLE collections DROP COLUMN doc_count;
        ALTER TABLE collections DROP COLUMN deleted_count;
        DELETE FROM grdb_migrations WHERE identifier = 'v18-document-counts';
        """)
    }
    let reopened = try Database(path: path).collection("docs")
    #expect(try reopened.count() == 4)
    #expect(try reopened.deletedCount() == 1)
  }
}
