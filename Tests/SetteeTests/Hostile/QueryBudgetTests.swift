import Foundation
import GRDB
import Settee
import SetteeCore
import SetteeTestSupport
import Testing

/// Every query runs under `Configuration.queryTimeLimit` and SQLite's bound on the values
/// a statement may build; the caller's own time does not count.
@Suite("Query budget")
struct QueryBudgetTests {
  let directory = TemporaryDirectory()

  func collection(limit: Double?) throws -> DocumentCollection {
    let db = try Database(
      path: directory.path("budget.db"), configuration: .init(queryTimeLimit: limit))
    let docs = db.collection()
    if try docs.count() == 0 {
      try docs.putAll((0..<2_000).map { ["_id": .string("d\($0)"), "n": .int(Int64($0))] })
    }
    return docs
  }

  static let slow = "length(printf('%1000000d', [n])) > 0"

  @Test func aQueryPastItsTimeLimitStopsWithLimitExceeded() async throws {
    let docs = try collection(limit: 0.2)
    // Without the budget each would answer, after seconds (a megabyte formatted per row).
    expectError(.limitExceeded) { _ = try docs.count(where: Self.slow) }
    expectError(.limitExceeded) { _ = try docs.find(where: Self.slow) }
    expectError(.limitExceeded) { _ = try docs.remove(where: Self.slow) }
    await #expect(throws: SetteeError.self) { _ = try await docs.find(where: Self.slow) }
    #expect(try await docs.count() == 2_000)  // the removal found nothing, wrote nothing
  }

  /// A typed error keeps the error it stands for: SQLite's, with its result code.
  @Test func aStoppedQueryCarriesSQLitesErrorUnderneath() throws {
    let docs = try collection(limit: 0.2)
    do {
      _ = try docs.count(where: Self.slow)
      Issue.record("the query was not stopped")
    } catch let error as SetteeError {
      #expect(error.code == .limitExceeded)
      let underlying = try #require(error.underlyingError as? DatabaseError)
      #expect(underlying.resultCode == .SQLITE_INTERRUPT)
      // It takes no part in comparing errors.
      var without = error
      without.underlyingError = nil
      #expect(without == error && without.hashValue == error.hashValue)
    }
  }

  @Test func withoutALimitTheSameQueryAnswers() throws {
    let docs = try collection(limit: nil)
    #expect(try docs.count(where: "length(printf('%100000d', [n])) > 0 AND [n] < 100") == 100)
  }

  @Test func aValueLargerThanTheBoundIsNotBuilt() throws {
    // 100 MB a row: SQLite refuses to build it (its printf gives NULL) instead of taking
    // hundreds of megabytes.
    let docs = try collection(limit: nil)
    #expect(try docs.count(where: "length(printf('%100000000d', [n])) > 0") == 0)
  }

  @Test func theCallersOwnTimeIsNotCounted() throws {
    let docs = try collection(limit: 0.3)
    var seen = 0
    let query = FindQuery(selector: try SelectorParser.parse(["n": ["$lt": 4]]))
    try docs.find(query) { _ in
      Thread.sleep(forTimeInterval: 0.15)
      seen += 1
    }
    #expect(seen == 4)
  }

  @Test(arguments: [-1.0, 0, .nan, .infinity, 1e300])
  func aLimitOutOfRangeIsRefused(_ limit: Double) {
    expectError(.invalidArgument) {
      _ = try Database(inMemoryWith: .init(queryTimeLimit: limit))
    }
  }
}
