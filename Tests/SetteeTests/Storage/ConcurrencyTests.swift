import Settee
import SetteeCore
import SetteeTestSupport
import Testing

@Suite("Concurrent readers beside a writer")
struct ConcurrencyTests {
  /// Ten accounts always hold 1,000 in total; a writer moves money between them in
  /// transactions while readers check the total in every snapshot they read.
  @Test func readersAlwaysSeeAConsistentState() async throws {
    let directory = TemporaryDirectory()
    let db = try Database(path: directory.path("bank.db"), configuration: .init(fullSync: false))
    let accounts = db.collection("accounts")
    let ids = (0..<10).map { "account-\($0)" }
    try await accounts.putAll(ids.map { ["_id": .string($0), "balance": 100] })

    let writes = 200
    try await withThrowingTaskGroup(of: Int.self) { group in
      group.addTask {
        var random = SplitMix64(seed: 1)
        for _ in 0..<writes {
          let from = ids[Int(random.next() % 10)]
          var to = ids[Int(random.next() % 10)]
          if to == from { to = ids[(ids.firstIndex(of: from)! + 1) % 10] }
          let pair = try await accounts.get([from, to])
          var source = pair[0]!.json
          var target = pair[1]!.json
          let amount = Int64(random.next() % 20)
          source["balance"] = .int(source["balance"]!.doubleValue.map { Int64($0) }! - amount)
          target["balance"] = .int(target["balance"]!.doubleValue.map { Int64($0) }! + amount)
          try await accounts.putAll([source, target])
        }
        return 0
      }
      for _ in 0..<8 {
        group.addTask {
          var reads = 0
          for _ in 0..<150 {
            let snapshot = try await accounts.get(ids)
            let total = snapshot.reduce(Int64(0)) { sum, document in
              sum + Int64(document!["balance"]!.doubleValue!)
            }
            #expect(total == 1000)
            reads += 1
          }
          return reads
        }
      }
      var reads = 0
      for try await count in group { reads += count }
      #expect(reads == 8 * 150)
    }
    #expect(try await accounts.lastSequence() == Int64(10 + 2 * writes))
  }
}
