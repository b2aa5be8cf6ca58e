import SetteeTestSupport
import Testing

@testable import SetteeCore

/// View keys sort as CouchDB sorts them, through their binary keys alone.
@Suite("View collation")
struct ViewCollationTests {
  static func parse(_ text: String) throws -> [JSON] {
    guard case .array(let values) = try JSONParser.parse(text) else { return [] }
    return values
  }

  /// Every adjacent pair of `values` is strictly ascending (or equal where `equal` says).
  static func expectAscending(_ values: [JSON], _ collation: ViewCollation) throws {
    let keys = try values.map { try collation.key($0) }
    for index in keys.indices.dropLast() {
      #expect(
        keys[index].lexicographicallyPrecedes(keys[index + 1]),
        "\(values[index]) should sort before \(values[index + 1]) (\(collation))")
    }
  }

  /// CouchDB's documented collation list (docs.couchdb.org, "Views Collation").
  @Test func couchDBsCanonicalListIsInOrder() throws {
    let values = try Self.parse(
      #"[null, false, true, 1, 2, 3.0, 4, "a", "A", "aa", "b", "B", "ba", "bb", ["a"], ["b"], ["b","c"], ["b","c","a"], ["b","d"], ["b","d","e"], {"a":1}, {"a":2}, {"b":1}, {"b":2}, {"b":2,"a":1}, {"b":2,"c":2}]"#
    )
    try Self.expectAscending(values, .unicode)
    // Sorting a shuffled copy by key gives the list back.
    var generator = SplitMix64(seed: 7)
    let shuffled = values.shuffled(using: &generator)
    let sorted = try shuffled.sorted {
      try ViewCollation.unicode.key($0).lexicographicallyPrecedes(ViewCollation.unicode.key($1))
    }
    #expect(sorted == values)
  }

  @Test func stringsFollowTheUnicodeCollationAlgorithm() throws {
    // Punctuation and spaces before digits before letters; accents after the base letter;
    // other scripts after Latin, in their own alphabetical order.
    let values = try Self.parse(
      #"["", " ", "_", "-", ",", "!", "0", "9", "a", "A", "á", "Á", "ab", "äb", "b", "c", "č", "d", "z", "ω", "Ω", "а", "я", "あ", "東"]"#
    )
    try Self.expectAscending(values, .unicode)
  }

  @Test(arguments: [
    (#"1"#, #"1.0"#, ViewCollation.unicode), (#"0"#, #"-0.0"#, .unicode),
    (#"[1, "x"]"#, #"[1.0, "x"]"#, .unicode), (#"1"#, #"1.0"#, .raw),
    (#"{"a": [2]}"#, #"{"a": [2.0]}"#, .raw),
    // Canonically equivalent strings (NFC and NFD) are equal in Unicode order only.
    (#""é""#, #""e\u0301""#, .unicode),
  ])
  func equalValuesHaveEqualKeys(_ left: String, _ right: String, _ collation: ViewCollation)
    throws
  {
    #expect(try collation.key(JSONParser.parse(left)) == collation.key(JSONParser.parse(right)))
  }

  @Test func numbersOfMixedKindsCompareByValue() throws {
    let values = try Self.parse(
      "[-1e300, -9007199254740993, -2, -1.5, -1, -0.5, 0, 1e-300, 0.5, 1, 1.5, 2, 9007199254740992, 9007199254740993, 1e300]"
    )
    for collation in ViewCollation.allCases { try Self.expectAscending(values, collation) }
  }

  @Test func rawIsErlangsTermOrder() throws {
    let values = try Self.parse(
      #"[1, 2.5, 3, false, null, true, {}, {"a": 1}, {"b": 0}, [], [1], [1, 2], ["a"], "A", "B", "a", "b", "é"]"#
    )
    try Self.expectAscending(values, .raw)
  }

  @Test func prefixEndsReachEveryKeyWithThePrefix() throws {
    let collation = ViewCollation.unicode
    let end = collation.prefixEnd("foo", level: 1)
    #expect(try collation.compare("foolish", end) < 0)
    #expect(try collation.compare("fop", end) > 0)
    #expect(try collation.compare("foo", end) < 0)
    let arrayEnd = collation.prefixEnd([1], level: 1)
    #expect(try collation.compare([1, "x"], arrayEnd) < 0)
    #expect(try collation.compare([2], arrayEnd) > 0)
    let nested = collation.prefixEnd([1, "x"], level: 2)
    #expect(try collation.compare([1, "xtc"], nested) < 0)
    #expect(try collation.compare([1, "y"], nested) > 0)
    #expect(collation.prefixEnd(5, level: 1) == 5)
    #expect(
      try ViewCollation.raw.compare("foolish", ViewCollation.raw.prefixEnd("foo", level: 1)) < 0)
  }

  @Test func versionsNameWhatKeysDependOn() throws {
    #expect(try ViewCollation.unicode.version().hasPrefix("icu-"))
    #expect(try ViewCollation.raw.version() == "raw-1")
  }
}

extension ViewCollationTests {
  /// Group keys read from binary keys equal the keys of the cut arrays, for every kind of
  /// element (numbers with and without an exact-integer tail, strings with U+0000 in raw
  /// order, nested arrays and objects).
  @Test(arguments: ViewCollation.allCases)
  func groupKeysAreTheKeysOfCutArrays(_ collation: ViewCollation) throws {
    let keys = try ViewCollationTests.parse(
      #"[[1, "a", 3], [9007199254740993, "b\u0000c", [1, [2]], {"x": [1]}], ["é", {"a": {"b": null}}, true, false], [], "plain", 5, [[], {}], [null]]"#
    )
    for key in keys {
      let binary = try collation.key(key)
      for level in 0..<5 {
        var expected = key
        if case .array(let elements) = key, elements.count > level {
          expected = .array(Array(elements.prefix(level)))
        }
        let cut = binary.withUnsafeBytes { collation.groupKey($0, level: level) }
        #expect(cut == (try collation.key(expected)), "\(key) at level \(level)")
      }
    }
    #expect([UInt8]([0x06, 0x05]).withUnsafeBytes { collation.groupKey($0, level: 1) } == nil)
  }
}

extension ViewCollationTests {
  /// Keys of long strings, of characters outside the Basic Multilingual Plane (two UTF-16
  /// units each) and of strings whose key is longer than the first buffer made for it
  /// (three bytes per UTF-16 unit): canonically equivalent spellings share a key, a string
  /// sorts before its extensions, and a key holds no 0x00 but its last byte.
  @Test(arguments: [
    String(repeating: "é", count: 400), String(repeating: "😀x", count: 150),
    String(repeating: "ﷺ", count: 50), String(repeating: "ǆ̣̇", count: 60),
    String(repeating: "東京", count: 300), "a𝔘b",
  ])
  func keysOfLongAndAstralStrings(_ text: String) throws {
    let collator = try ICUCollator.shared()
    var key: [UInt8] = []
    try collator.appendSortKey(text, to: &key)
    #expect(key.last == 0 && !key.dropLast().contains(0))
    var decomposed: [UInt8] = []
    try collator.appendSortKey(text.decomposedStringWithCanonicalMapping, to: &decomposed)
    #expect(decomposed == key)
    var longer: [UInt8] = []
    try collator.appendSortKey(text + "z", to: &longer)
    #expect(key.lexicographicallyPrecedes(longer))
    // Appending keeps what the output held.
    var appended: [UInt8] = [7, 7]
    try collator.appendSortKey(text, to: &appended)
    #expect(appended == [7, 7] + key)
  }
}
