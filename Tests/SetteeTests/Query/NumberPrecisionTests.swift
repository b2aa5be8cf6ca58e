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
    try collection.putAll(values.enumerated().map { ["_id": .string("d\($0.offset)"), "x": .double($0.element)] })
    for (offset, value) in values.enumerated() where offset % 5 == 0 {
      let found = try collection.find(FindQuery(selector: .condition("x", .equal(.double(value))))).map(\.id)
      #expect(found.contains("d\(offset)"), "\(value) (\(JSONWriter.string(.double(value))))")
      let above = try collection.count(FindQuery(selector: .condition("x", .greaterThan(.double(value)))))
      #expect(above == values.filter { $0 > value }.count, "> \(value)")
    }
  }
}

@Suite("Index builds")
struct IndexBuildTests {
  /// An index built in SQL over scalar fields holds the same entries as one kept by writes.
  @Test func bulkBuildMatchesIncrementalMaintenance() throws {
    var random = SplitMix64(seed: 8)
    let built = try Database(inMemoryWith: .init()).collection()
    let maintained = try Database(inMemoryWith: .init()).collection()
    try maintained.ensureIndexed(["v", "w.x"], name: "i")
    let values: [JSON] = [.null, true, false, 0, -1, 7, .double(0.1), .double(-2.5e-8), "", "a", "é", "\n\"q\"", ["k": 1], ["k": ["n": 2]]]
    let documents: [JSONObject] = (0..<400).map { number in
      var document: JSONObject = ["_id": .string("d\(number)")]
      if random.next() % 5 != 0 { document["v"] = values[Int(random.next() % UInt64(values.count))] }
      if random.next() % 3 != 0 { document["w"] = ["x": values[Int(random.next() % UInt64(values.count))]] }
      return document
    }
    try built.putAll(documents)
    try maintained.putAll(documents)
    try built.ensureIndexed(["v", "w.x"], name: "i")
    for value in values {
      for query in [
        FindQuery(selector: .condition("v", .equal(value)), fields: ["v"]),
        FindQuery(selector: .condition("w.x", .greaterThanOrEqual(value)), sort: [.init("v"), .init("w.x")]),
        FindQuery(selector: .not(.condition("v", .lessThan(value))), fields: ["v", "w"]),
      ] {
        #expect(try built.find(query) == maintained.find(query), "\(query.selector)")
      }
      // Answered from the built index's entries alone: keys and values both came from SQL.
      let covered = FindQuery(selector: .condition("v", .equal(value)), fields: ["v", "w.x"])
      #expect(try built.explain(covered).indexes == ["i"])
    }
  }
}
