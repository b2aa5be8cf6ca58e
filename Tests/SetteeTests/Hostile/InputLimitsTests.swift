import Settee
import SetteeCore
import SetteeTestSupport
import Testing

/// Every documented limit answers with a typed error that names it, never SQLite's raw
/// error; numbers out of range are refused one way; counts take the whole integer range.
@Suite("Input limits")
struct InputLimitsTests {
  let people: DocumentCollection

  init() throws {
    people = try Database(inMemoryWith: .init()).collection("people")
    try people.put(["_id": "a", "n": 1])
  }

  static let definitions: [(String, SetteeError.Code)] = [
    (
      #"{"index": {"fields": [\#((0..<65).map { "\"f\($0)\"" }.joined(separator: ","))]}, "name": "wide"}"#,
      .limitExceeded
    ),
    (
      #"{"index": {"fields": [\#((0..<2001).map { "\"f\($0)\"" }.joined(separator: ","))]}, "name": "t", "type": "text"}"#,
      .limitExceeded
    ),
    (
      #"{"index": {"fields": ["\#((0..<200).map { "p\($0)" }.joined(separator: "."))"]}, "name": "deep"}"#,
      .limitExceeded
    ),
    (#"{"index": {"fields": ["a"]}, "name": "_all_docs"}"#, .invalidIndex),
  ]

  @Test(arguments: definitions)
  func indexDefinitionsBeyondTheLimitsAreTyped(_ text: String, _ code: SetteeError.Code) throws {
    expectError(code) { try people.ensureIndexed(IndexDefinition(json: JSONParser.parse(text))) }
    #expect(try people.indexes().isEmpty)
  }

  @Test func indexesAtTheLimitsWork() throws {
    try people.ensureIndexed((0..<64).map { "f\($0)" }, name: "wide")
    let deep = (0..<100).map { "p\($0)" }.joined(separator: ".")
    try people.ensureIndexed([deep], name: "deep")
    try people.ensureIndexed((0..<64).map { "t\($0)" }, name: "text", type: .text)
    #expect(try people.indexes().count == 3)
    #expect(try people.find(["n": 1]).count == 1)
  }

  @Test func longSelectorPathsAreTyped() throws {
    let path = (0..<101).map { "p\($0)" }.joined(separator: ".")
    expectError(.limitExceeded) {
      _ = try FindQuery(json: JSONParser.parse(#"{"selector": {"\#(path)": 1}}"#))
    }
  }

  @Test(arguments: [
    (#"{"selector": {}, "limit": 9223372036854775807, "skip": 9223372036854775807}"#, 0),
    (#"{"selector": {}, "limit": 9223372036854775807}"#, 1),
    (#"{"selector": {}, "skip": 0, "limit": 1.0}"#, 1),
  ])
  func countsTakeTheWholeIntegerRange(_ text: String, _ expected: Int) throws {
    #expect(try people.find(FindQuery(json: JSONParser.parse(text))).count == expected)
  }

  @Test(arguments: [
    #"{"selector": {}, "limit": -1}"#, #"{"selector": {}, "skip": 1.5}"#,
    #"{"selector": {}, "limit": 9223372036854775808}"#, #"{"selector": {}, "limit": "10"}"#,
  ])
  func badCountsAreTyped(_ text: String) throws {
    expectError(.invalidQuery) { _ = try FindQuery(json: JSONParser.parse(text)) }
  }

  /// Too large and too small are both out of range; neither becomes another number.
  @Test(arguments: ["1e400", "-1e400", "1e-400", "-2.5e-999", "0.0000e-400000"])
  func numbersOutOfRangeAreRefusedOneWay(_ number: String) throws {
    let text = #"{"_id": "x", "v": \#(number)}"#
    if number.hasPrefix("0.0000") {
      #expect(try JSONParser.parse(text)["v"] == .double(0))
    } else {
      expectError(.invalidJSON) { _ = try JSONParser.parse(text) }
    }
  }

  /// `$mod` truncates both numbers toward zero (SPEC section 2, as MongoDB does); a divisor
  /// that truncates to zero is an error that says so.
  @Test func modTruncatesAndNamesAZeroDivisor() throws {
    let found = try people.find(
      FindQuery(json: JSONParser.parse(#"{"selector": {"n": {"$mod": [2, 1.5]}}}"#)))
    #expect(found.map(\.id) == ["a"])
    let error = expectError(.invalidQuery) {
      _ = try FindQuery(json: JSONParser.parse(#"{"selector": {"n": {"$mod": [0.5, 0]}}}"#))
    }
    #expect(error?.message.contains("truncates to 0") == true)
  }
}
