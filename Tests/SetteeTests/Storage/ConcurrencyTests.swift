import Foundation
import Settee
import SetteeCore
import SetteeTestSupport
import Testing

@Suite("Concurrent readers beside a writer")
struct ConcurrencyTests {
  /// Ten accounts always hold 1,000 in total; a writer moves money between them in
  /// transactions while readers check the total in every snapshot they read, through the
  /// async API and through the synchronous one (each runs its reads in transactions of
  /// its own).
  @Test(arguments: [false, true])
  func readersAlwaysSeeAConsistentState(synchronousReads: Bool) async throws {
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
            let snapshot =
              synchronousReads ? try Self.read(accounts, ids) : try await accounts.get(ids)
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

  /// The synchronous `get` (in an async context, Swift picks the async one).
  static func read(_ collection: DocumentCollection, _ ids: [String]) throws -> [Document?] {
    try collection.get(ids)
  }

  /// A read that ends with an error (here the caller's, in the middle of a streaming
  /// `find`) ends its transaction too: with one reader connection, the next reads see
  /// what another connection committed since, rather than the old snapshot.
  /// Several processes (here, several values) opening a new file at the same moment all
  /// find it ready: each would find the schema's migrations missing and run them, and all
  /// but the first failed (`duplicate column name`, seen when `settee replicate` and an app
  /// opened one file together).
  @Test func valuesOpeningANewFileAtOnceAllFindItReady() throws {
    let directory = TemporaryDirectory()
    for round in 0..<12 {
      let path = directory.path("new-\(round).db")
      let failures = Locked<[String]>([])
      DispatchQueue.concurrentPerform(iterations: 4) { _ in
        do {
          let db = try Database(path: path, configuration: .init(fullSync: false))
          _ = try db.collection("docs").put(["n": 1])
        } catch {
          failures.withLock { $0.append("\(error)") }
        }
      }
      #expect(failures.withLock { $0 } == [], "round \(round)")
      #expect(try Database(path: path).collection("docs").count() == 4)
    }
  }

  @Test func aFailedReadEndsItsTransaction() throws {
    struct Stop: Error {}
    let directory = TemporaryDirectory()
    let path = directory.path("reads.db")
    let db = try Database(path: path, configuration: .init(fullSync: false, maximumReaderCount: 1))
    let other = try Database(path: path, configuration: .init(fullSync: false))
    let items = db.collection("items")
    try items.put(["_id": "a", "n": 1])
    for round in 1...3 {
      #expect(throws: Stop.self) {
        try items.find(FindQuery(selector: try SelectorParser.parse(["n": ["$gt": 0]]))) { _ in
          throw Stop()
        }
      }
      try other.collection("items").put(["_id": .string("b\(round)"), "n": 2])
      #expect(try items.count() == 1 + round)
      #expect(try items.get("b\(round)") != nil)
    }
  }
}
