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

/// Integers past 64 bits (issue 55, item 2): kept digit for digit in every document read,
/// and matched, sorted and indexed as their nearest double by the matcher and the SQL path
/// alike.
@Suite("Integers past 64 bits")
struct LargeIntegerTests {
  static let texts = [
    "18446744073709551616", "18446744073709551617", "-18446744073709551617",
    "9223372036854775808", "123456789012345678901234567890",
  ]

  @Test(arguments: [false, true])
  func keptExactlyAndMatchedAsDoubles(indexed: Bool) throws {
    let collection = try Database(inMemoryWith: .init()).collection()
    if indexed { try collection.ensureIndexed(["x"], name: "x") }
    for (offset, text) in Self.texts.enumerated() {
      try collection.put(
        try JSONParser.parse(#"{"_id":"d\#(offset)","x":\#(text),"list":[\#(text)]}"#)
          .objectValue!)
    }
    try collection.put(["_id": "small", "x": .int(Int64.max)])
    for (offset, text) in Self.texts.enumerated() {
      let document = try #require(try collection.get("d\(offset)"))
      #expect(JSONWriter.string(document.body["x"]!) == text)
      #expect(
        document.jsonBytes()
          == Array(
            #"{"_id":"d\#(offset)","_rev":"\#(document.rev!)","x":\#(text),"list":[\#(text)]}"#.utf8
          ))
      let value = try JSONParser.parse(text)
      for selector in [
        #"{"x": \#(text)}"#, #"{"x": {"$gt": \#(text)}}"#, #"{"x": {"$lte": \#(text)}}"#,
        #"{"list": {"$elemMatch": {"$gte": \#(text)}}}"#, #"{"x": {"$in": [\#(text), 1]}}"#,
      ] {
        let query = FindQuery(selector: try SelectorParser.parse(selector))
        let found = try collection.find(query).map(\.id).sorted()
        let expected = ReferenceQuery.find(
          try collection.find(FindQuery()), selector: try JSONParser.parse(selector)
        ).sorted()
        #expect(found == expected, "\(selector)")
        #expect(!found.isEmpty || value.doubleValue! > 1e29, "\(selector)")
      }
    }
    // Sorted by value as doubles: the two that round to 2^64 tie and keep their ids' order.
    let sorted = try collection.find(
      FindQuery(selector: .all, sort: [.init("x")])
    ).map(\.id)
    #expect(sorted == ["d2", "small", "d3", "d0", "d1", "d4"])
  }

  /// Codable: an unsigned 64-bit field decodes exactly, and encodes back the same digits.
  @Test func codableUnsignedIntegersRoundTrip() throws {
    struct Counter: Codable, Equatable { var n: UInt64 }
    let json = try JSON(encoding: Counter(n: .max))
    #expect(json["n"] == .largeInteger("18446744073709551615"))
    #expect(try json.decode(Counter.self) == Counter(n: .max))
  }
}
