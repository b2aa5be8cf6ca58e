import GRDB
import Settee
import SetteeCore
import SetteeTestSupport
import Testing

@Suite("Import: planner statistics")
struct ImportStatisticsTests {
  /// An import of 10,000 documents or more measures `documents` for SQLite's planner when
  /// it has no statistics, or has grown by half since they were taken: ANALYZE reads every
  /// collection's documents, so running it after each import made imports into a large
  /// file cost more and more.
  @Test func importsMeasureDocumentsWhenTheirStatisticsAreStale() throws {
    let directory = TemporaryDirectory()
    let path = directory.path("stats.db")
    let database = try Settee.Database(path: path)
    /// The row count `documents` was last measured at (nil: never).
    func measured() throws -> Int? {
      try DatabaseQueue(path: path).read { db in
        guard try db.tableExists("sqlite_stat1") else { return nil }
        return try String.fetchOne(
          db, sql: "SELECT stat FROM sqlite_stat1 WHERE idx = 'documents_by_id'"
        ).flatMap { $0.split(separator: " ").first.flatMap { Int($0) } }
      }
    }
    let size = 10_000
    // (documents written, statistics expected after): too small to measure; measured; grew
    // by half; grew by a third, not measured; by half since the last measure.
    let steps: [(Int, Int?)] = [
      (size - 1, nil), (size, 2 * size - 1), (size, 3 * size - 1), (size, 3 * size - 1),
      (2 * size, 6 * size - 1),
    ]
    for (number, (count, expected)) in steps.enumerated() {
      let text = (0..<count).map { #"{"_id":"d\#($0)","n":\#($0)}"# }.joined(separator: "\n")
      var records = JSONRecordReader(text: text, chunkSize: 1 << 16)
      try database.collection("c\(number)").importDocuments(from: &records)
      #expect(try measured() == expected, "after step \(number)")
    }
  }
}
