import SetteeCore
import SetteeTestSupport
import Testing

@Suite("Collation keys")
struct CollationKeyTests {
  /// The key of `text` as ``CollationKey/appendPlain(jsonText:to:)`` makes it, or `nil` when
  /// it declines.
  func plainKey(_ text: String) -> [UInt8]? {
    var output: [UInt8] = [0xAA]  // appended to, not replaced
    var text = text
    let taken = text.withUTF8 { CollationKey.appendPlain(jsonText: $0, to: &output) }
    if !taken {
      #expect(output == [0xAA], "declined, yet appended: \(text)")
      return nil
    }
    #expect(output.first == 0xAA)
    return Array(output.dropFirst())
  }

  @Test(
    "Plain JSON text gives the key of its parsed value",
    arguments: [
      "null", "true", "false", "0", "7", "-7", "42", "123456789012345678", "-123456789012345678",
      #""""#, #""mike""#, #""two words""#, #""a/b""#,
    ])
  func plainTextMatchesParsedValue(text: String) throws {
    let key = try #require(plainKey(text))
    #expect(key == CollationKey.encode(try JSONParser.parse(text)))
  }

  @Test(
    "Anything else is left to the parser",
    arguments: [
      "", "-0", "-", "01", "1.5", "1e3", "-1.0", "1234567890123456789", "9223372036854775807",
      #""a\"b""#, #""a\\b""#, #""\u0000""#, #""caf\u00e9""#, #""café""#, #""中文""#, "[1]",
      #"{"a":1}"#, "nul", "truex", #""unterminated"#, " 1", "1 ",
    ])
  func declines(text: String) {
    #expect(plainKey(text) == nil)
  }

  /// Every scalar the random documents of the differential tests hold, printed as Settee
  /// prints it: where the fast path takes the text, it agrees with the parser.
  @Test func randomScalarsAgreeWithTheParser() throws {
    var random = RandomQueries(seed: 16)
    var taken = 0
    for round in 0..<10_000 {
      // The differential tests' scalars, and integers of every size.
      let value =
        round.isMultiple(of: 2)
        ? random.scalar()
        : .int(Int64(bitPattern: random.random.next()) >> (random.random.next() % 64))
      let text = JSONWriter.string(value)
      if let key = plainKey(text) {
        taken += 1
        #expect(key == CollationKey.encode(value), "\(text)")
      }
    }
    #expect(taken > 1_000)
  }

  /// Integers past 2^53 round as doubles; their keys still order exactly, up to Int64.max
  /// (whose double rounds up to 2^63) and down to Int64.min, and equal numbers of either
  /// kind share a key.
  @Test func largeIntegersOrderExactly() {
    let integers: [Int64] = [
      .min, .min + 1, -(1 << 53) - 1, -(1 << 53), 0, (1 << 53), (1 << 53) + 1,
      .max - 1024, .max - 512, .max - 1, .max,
    ]
    let keys = integers.map { CollationKey.encode(.int($0)) }
    for (left, right) in zip(keys, keys.dropFirst()) {
      #expect(left.lexicographicallyPrecedes(right))
    }
    #expect(
      CollationKey.encode(.int(1 << 53)) == CollationKey.encode(.double(9_007_199_254_740_992)))
    #expect(
      CollationKey.encode(.double(9_223_372_036_854_775_808.0))
        .lexicographicallyPrecedes(CollationKey.encode(.int(.max))) == false)
  }
}
