import Foundation
import Settee
import SetteeCore
import SetteeTestSupport
import Testing

/// All-documents offsets counted from kept checkpoints (`IDRanks`) against a count of the
/// live ids, through random writes, deletions, recreations and purges, and random pages
/// in both directions: a checkpoint of an earlier state must never answer.
@Suite("All documents: offsets from kept counts")
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
}
