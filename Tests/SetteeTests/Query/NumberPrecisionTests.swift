import Settee
import SetteeCore
import SetteeTestSupport
import Testing

/// SQLite parses the numbers in stored JSON itself; Swift parses the query's. Both must land
/// on the same double, or the SQL path and an index would miss documents the matcher finds.
@Suite("Numbers agree between SQLite and Swift")
struct NumberPrecisionTests {
  @Test(arguments: [false, true])
  func randomDoublesMatchExactly(indexed: Bool) throws {
    var random = SplitMix64(seed: 53)
    let collection = try Database(inMemoryWith: .init()).collection()
    var values: [Double] = []
    while values.count < 2_000 {
      let value = Double(bitPattern: random.next())
      if value.isFinite { values.append(value) }
    }
    // Also decimal fractions, which have no exact binary form.
    values += (0..<500).map { _ in Double(Int64(bitPattern: random.next()) % 1_000_000) / 1_000 }
    if indexed { try collection.ensureIndexed(["x"], name: "x") }
    try collection.putAll(
      values.enumerated().map { ["_id": .string("d\($0.offset)"), "x": .double($0.element)] })
    for (offset, value) in values.enumerated() where offset % 5 == 0 {
      let found = try collection.find(FindQuery(selector: .condition("x", .equal(.double(value)))))
        .map(\.id)
      #expect(found.contains("d\(offset)"), "\(value) (\(JSONWriter.string(.double(value))))")
      let above = try collection.count(
        FindQuery(selector: .condition("x", .greaterThan(.double(value)))))
      #expect(above == values.filter { $0 > value }.count, "> \(value)")
    }
  }
}
