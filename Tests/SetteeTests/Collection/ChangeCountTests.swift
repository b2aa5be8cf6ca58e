import Foundation
import Settee
import SetteeCore
import SetteeTestSupport
import Testing

/// `changeCount(since:)` (CouchDB's `pending`) against the feed itself, counted by reading
/// it: the engine counts from the counts it made before, which must never outlive a write,
/// a delete, a purge or the collection's deletion, nor leak between collections or files.
@Suite("Change counts")
struct ChangeCountTests {
  /// The length of the feed after `since`, read.
  private func feedLength(_ docs: DocumentCollection, since: Int64) throws -> Int {
    try docs.changes(since: since).count
  }

  @Test(arguments: [1, 2, 3, 4] as [UInt64])
  func countsMatchTheFeedThroughEveryKindOfChange(seed: UInt64) throws {
    var random = RandomQueries(seed: seed)
    let directory = TemporaryDirectory()
    let path = directory.path("counts.db")
    let db = try Database(path: path)
    let docs = db.collection("docs")
    let other = db.collection("other")
    var ids: [String] = []
    var next = 0
    for round in 0..<60 {
      switch random.random.next() % 10 {
      case 0..<4:
        // New documents (a batch, so that pages of a feed walk some rows).
        let batch = (0..<Int(1 + random.random.next() % 40)).map { _ -> JSONObject in
          next += 1
          ids.append("d\(next)")
          return ["_id": .string("d\(next)"), "n": .int(Int64(next))]
        }
        _ = try docs.putEach(batch)
      case 4, 5:
        // Updates and deletions of existing ones.
        for _ in 0..<Int(1 + random.random.next() % 8) where !ids.isEmpty {
          let id = random.pick(ids)
          guard let current = try docs.get(id) else { continue }
          if random.chance(30) {
            _ = try docs.delete(current)
          } else {
            var json = current.json
            json["n"] = .int(Int64(round))
            _ = try docs.put(json)
          }
        }
      case 6:
        // A purge: changes leave the feed without a sequence number of their own.
        if !ids.isEmpty, let document = try docs.get(random.pick(ids)) {
          _ = try docs.purge([document.id: [document.rev!]])
        }
      case 7:
        // Another collection's writes change nothing here.
        _ = try other.put(["n": .int(Int64(round))])
      case 8:
        if random.chance(25), try db.collectionExists("docs") {
          // The collection deleted and made again, with or without new documents.
          try db.deleteCollection("docs")
          ids.removeAll()
          if random.chance(50) { _ = try db.createCollection("docs") }
        }
      default:
        // Another value of the file writes: its writes are the file's, not this value's.
        let again = try Database(path: path)
        next += 1
        _ = try again.collection("docs").put(["_id": .string("x\(next)")])
        ids.append("x\(next)")
      }
      let last = try docs.lastSequence()
      // A reader paging through the feed, and counts at random places in both directions.
      var since: Int64 = 0
      for page in 0..<4 {
        #expect(
          try docs.changeCount(since: since) == feedLength(docs, since: since),
          "seed \(seed), round \(round), page \(page), since \(since)")
        guard let end = try docs.changes(since: since, limit: 7).last?.seq else { break }
        since = end
      }
      for _ in 0..<4 {
        let at = last == 0 ? 0 : Int64(random.random.next() % UInt64(last + 2))
        #expect(
          try docs.changeCount(since: at) == feedLength(docs, since: at),
          "seed \(seed), round \(round), since \(at)")
      }
    }
  }

  @Test func aDeletedCollectionCountsNothingThoughItsSequenceGoesOn() throws {
    let db = try Database(inMemoryWith: .init())
    let docs = db.collection("docs")
    _ = try docs.putEach((0..<50).map { ["_id": .string("d\($0)")] })
    #expect(try docs.changeCount(since: 10) == 40)
    let last = try docs.lastSequence()
    try db.deleteCollection("docs")
    _ = try db.createCollection("docs")
    #expect(try docs.changeCount(since: 10) == 0)
    #expect(try docs.lastSequence() > last)
    _ = try docs.put(["_id": "again"])
    #expect(try docs.changeCount(since: 10) == 1)
    #expect(try docs.changeCount(since: 0) == 1)
  }

  @Test func aCountFarFromTheLastOneIsCountedAgain() throws {
    // More than the walk limit between two counts: both exact.
    let db = try Database(inMemoryWith: .init())
    let docs = db.collection("docs")
    _ = try docs.putEach((0..<12_500).map { ["_id": .string("d\($0)")] })
    #expect(try docs.changeCount(since: 0) == 12_500)
    #expect(try docs.changeCount(since: 12_000) == 500)
    #expect(try docs.changeCount(since: 100) == 12_400)
    #expect(try docs.changeCount(since: 12_500) == 0)
    #expect(try docs.changeCount(since: 99_999) == 0)
  }
}
