import Foundation
import SetteeCore
import SetteeTestSupport
import Testing

@testable import Settee

/// All-documents and view offsets counted from kept checkpoints (`RowRanks`) against
/// counts made without them, through random writes, deletions, recreations and purges,
/// and random pages in both directions: a checkpoint of an earlier state must never
/// answer.
@Suite("All documents and views: offsets from kept counts")
struct AllDocumentsOffsetTests {
  @Test func offsetsMatchACountOfLiveIDsThroughEveryKindOfWrite() throws {
    let db = try Database(inMemoryWith: .init())
    let items = db.collection("items")
    var random = SplitMix64(seed: 55)
    // Ids in several scripts, so that byte order and Swift's string order differ.
    let alphabet = ["a", "b", "z", "A", "Z", "0", "é", "ü", "日", "😀", "-", "_"]
    func randomID() -> String {
      // Never a leading "_" (reserved for design documents).
      let id = (0..<Int.random(in: 1...3, using: &random)).map { _ in
        alphabet.randomElement(using: &random)!
      }.joined()
      return id.hasPrefix("_") ? "a" + id : id
    }
    var live: [String: RevisionID] = [:]
    var deleted: [String: RevisionID] = [:]
    for round in 0..<30 {
      for _ in 0..<Int.random(in: 1...12, using: &random) {
        let id = randomID()
        switch Int.random(in: 0..<10, using: &random) {
        case 0..<5:
          var json: JSONObject = ["_id": .string(id), "round": .int(Int64(round))]
          if let rev = live[id] { json["_rev"] = .string(rev.description) }
          // A deleted one is created again without a _rev.
          let written = try items.put(json)
          live[id] = written.rev
          deleted[id] = nil
        case 5..<8:
          guard let (victim, rev) = live.randomElement(using: &random) else { continue }
          deleted[victim] = try items.delete(victim, rev: rev).rev
          live[victim] = nil
        default:
          // A whole-document purge takes no sequence number, only a count.
          guard
            let (victim, rev) =
              (live.randomElement(using: &random) ?? deleted.randomElement(using: &random))
          else { continue }
          _ = try items.purge([victim: [rev]])
          live[victim] = nil
          deleted[victim] = nil
        }
      }
      let ids = live.keys.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
      let bytes = ids.map { Array($0.utf8) }
      for _ in 0..<25 {
        let start =
          Bool.random(using: &random)
          ? (ids.randomElement(using: &random) ?? randomID()) : randomID()
        let descending = Bool.random(using: &random)
        let skip = Int.random(in: 0...2, using: &random)
        var query = ViewQuery(startKey: .string(start), descending: descending, skip: skip)
        query.includeOffset = true
        query.limit = 3
        let answer = try items.allDocuments(query)
        let key = Array(start.utf8)
        let before =
          descending
          ? bytes.filter { key.lexicographicallyPrecedes($0) }.count
          : bytes.filter { $0.lexicographicallyPrecedes(key) }.count
        #expect(
          answer.offset == min(before + skip, ids.count), "round \(round): \(start) \(descending)")
        #expect(answer.totalRows == ids.count)
      }
    }
  }

  /// A view's offset is where its page starts in the whole view read in the same
  /// direction (duplicate keys included), whatever was written, deleted or purged since
  /// the last page.
  @Test func viewOffsetsAreWhereThePageStarts() throws {
    let db = try Database(inMemoryWith: .init())
    let items = db.collection("items")
    let byN = try items.view("byN", version: "1") { doc, emit in
      if let n = doc["n"] { emit(n, nil) }
    }
    var random = SplitMix64(seed: 56)
    var live: [String: RevisionID] = [:]
    for round in 0..<25 {
      for _ in 0..<Int.random(in: 1...15, using: &random) {
        let id = "d\(Int.random(in: 0..<60, using: &random))"
        switch Int.random(in: 0..<10, using: &random) {
        case 0..<6:
          var json: JSONObject = [
            "_id": .string(id), "n": .int(Int64.random(in: 0..<20, using: &random)),
          ]
          if let rev = live[id] { json["_rev"] = .string(rev.description) }
          live[id] = try items.put(json).rev
        case 6..<8:
          guard let rev = live[id] else { continue }
          _ = try items.delete(id, rev: rev)
          live[id] = nil
        default:
          guard let rev = live[id] else { continue }
          _ = try items.purge([id: [rev]])
          live[id] = nil
        }
      }
      for descending in [false, true] {
        let whole = try byN.query(ViewQuery(descending: descending)).rows
        for _ in 0..<15 {
          let start = Int64.random(in: -1...21, using: &random)
          let skip = Int.random(in: 0...2, using: &random)
          var query = ViewQuery(
            startKey: .init(.int(start)), descending: descending, skip: skip, limit: 2)
          query.includeOffset = true
          let page = try byN.query(query)
          let first =
            whole.firstIndex { row in
              let n = row.key.int64Value ?? 0
              return descending ? n <= start : n >= start
            } ?? whole.count
          #expect(
            page.offset == min(first + skip, whole.count), "round \(round): \(start) \(descending)")
          if let row = page.rows.first { #expect(row.id == whole[first + skip].id) }
        }
      }
    }
  }

  /// What is kept is bounded: a start key longer than 1 KB (a request chooses it) is
  /// counted and answered but not kept, and a list keeps at most 256 checkpoints.
  @Test func keptCountsAreBounded() throws {
    let db = try Database(inMemoryWith: .init())
    let items = db.collection("items")
    try items.putAll((0..<300).map { ["_id": .string(String(format: "d%04d", $0))] })
    let cid = try #require(try db.read { try db.collectionID($0, "items") })
    func offset(_ start: String) throws -> Int? {
      var query = ViewQuery(startKey: .string(start), limit: 1)
      query.includeOffset = true
      return try items.allDocuments(query).offset
    }
    #expect(try offset("d0150" + String(repeating: "z", count: 2_000)) == 151)
    #expect(db.rowRanks.keptCount(.documents(cid: cid)) == 0)
    for number in 0..<300 { #expect(try offset(String(format: "d%04d", number)) == number) }
    let kept = db.rowRanks.keptCount(.documents(cid: cid))
    #expect(kept > 0 && kept <= RowRanks.limit)
  }
}
