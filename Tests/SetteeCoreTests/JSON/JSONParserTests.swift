import Foundation
import SetteeCore
import SetteeTestSupport
import Testing

@Suite("JSON parsing and printing")
struct JSONParserTests {
  /// Inputs that print back exactly as written (the canonical compact form).
  @Test(arguments: [
    "null", "true", "false", "0", "-1", "42", "9223372036854775807", "-9223372036854775808",
    "9007199254740993", "1.5", "-0.0", "1e+308", "5e-324", "0.1", "1e+16", "\"\"",
    // Integers past 64 bits keep their digits, as CouchDB keeps them (issue 55).
    "18446744073709551616", "-18446744073709551617", "9223372036854775808",
    "123456789012345678901234567890",
    "\"a\\\"b\\\\c\"",
    "\"\\n\\t\\r\\b\\f\\u0001\\u001f\"", "\"é 中文 العربية 🎉\"", "[]", "{}", "[1,[2,[3]],{\"a\":[]}]",
    #"{"z":1,"a":2,"m":{"y":null,"b":true}}"#, #"{"":"empty key","k":"/ stays"}"#,
  ])
  func roundTripsExactly(_ text: String) throws {
    let value = try JSONParser.parse(text)
    #expect(JSONWriter.string(value) == text)
    #expect(try JSONParser.parse(JSONWriter.string(value)) == value)
  }

  /// Inputs with a canonical form that differs from what was written.
  @Test(arguments: [
    (" { \"a\" : [ 1 , 2 ] } \n", #"{"a":[1,2]}"#),
    ("-0", "-0.0"),
    ("1E2", "100.0"),
    ("1.0", "1.0"),
    ("2.50", "2.5"),
    ("18446744073709551616.0", "1.8446744073709552e+19"),
    ("1.8446744073709551616e19", "1.8446744073709552e+19"),
    (#""\u00e9\/\ud83c\udf89""#, "\"é/🎉\""),
  ])
  func normalizes(_ input: String, _ canonical: String) throws {
    #expect(JSONWriter.string(try JSONParser.parse(input)) == canonical)
  }

  @Test func keepsIntegersAndDoublesApart() throws {
    #expect(try JSONParser.parse("9007199254740993") == .int(9_007_199_254_740_993))
    #expect(try JSONParser.parse("1.0") == .double(1))
    let negativeZero = try JSONParser.parse("-0.0")
    #expect(negativeZero.doubleValue?.sign == .minus)
    #expect(try JSONParser.parse("1e308") == .double(1e308))
    // Past 64 bits: the digits, compared and indexed as the nearest double.
    let large = try JSONParser.parse("18446744073709551616")
    #expect(large == .largeInteger("18446744073709551616"))
    #expect(large.doubleValue == 18_446_744_073_709_551_616.0 && large.int64Value == nil)
    #expect(large.typeName == "number")
    #expect(JSONCollation.compare(large, .double(18_446_744_073_709_551_616.0)) == 0)
    #expect(JSONCollation.compare(large, .int(Int64.max)) == 1)
    #expect(JSONCollation.compare(.largeInteger("-18446744073709551616"), .int(Int64.min)) == -1)
  }

  @Test func keepsMemberOrder() throws {
    let value = try JSONParser.parse(#"{"b":1,"a":2,"c":3}"#)
    #expect(value.objectValue?.keys == ["b", "a", "c"])
  }

  /// Malformed inputs: each is a typed error with a position, never a crash.
  @Test(arguments: [
    ("", 1, 1), ("{", 1, 2), ("[1,]", 1, 4), ("{\"a\" 1}", 1, 6), ("{'a':1}", 1, 2),
    ("[1 2]", 1, 4), ("tru", 1, 1), ("01", 1, 2), ("1.", 1, 3), ("-", 1, 2), ("1e", 1, 3),
    ("\"abc", 1, 5), ("\"\\x\"", 1, 2), ("\"\\ud800\"", 1, 2), ("\"\\udc00x\"", 1, 2),
    ("\"a\nb\"", 1, 3), ("{\"a\":1,\"a\":2}", 1, 8), ("1 2", 1, 3), ("[1,\n 2,\n x]", 3, 2),
    ("1e400", 1, 1), ("NaN", 1, 1), ("[\"\\u12\"]", 1, 7),
  ])
  func rejectsMalformedInput(_ text: String, _ line: Int, _ column: Int) {
    #expect {
      try JSONParser.parse(text)
    } throws: { error in
      guard let error = error as? SetteeError else { return false }
      return error.code == .invalidJSON && error.location?.line == line
        && error.location?.column == column
    }
  }

  /// A repeated member name is an error whether it comes among the first 16 members
  /// (looked for one by one) or later (through a table); names compare byte for byte, so
  /// "é" and "e\u{301}" are two names.
  @Test(arguments: [2, 16, 17, 40, 1_000])
  func refusesRepeatedNamesOnly(count: Int) throws {
    let members = (0..<count).map { #""k\#($0)":\#($0)"# } + [#""\#u{E9}":1"#, #""e\#u{301}":2"#]
    let object = try #require(
      try JSONParser.parse("{" + members.joined(separator: ",") + "}").objectValue)
    #expect(object.count == count + 2 && object["e\u{301}"] == 2)
    for repeated in ["k0", "k\(count - 1)", "\u{E9}", "e\u{301}"] {
      let text = "{" + (members + [#""\#(repeated)":null"#]).joined(separator: ",") + "}"
      #expect(throws: SetteeError.self, "\(repeated)") { try JSONParser.parse(text) }
    }
  }

  /// A query (not a document) keeps a repeated name's last value, as CouchDB reads
  /// `_find`'s body; the first 16 members and later ones alike, order otherwise kept.
  @Test(arguments: [2, 16, 17, 40])
  func queriesKeepTheLastRepeatedName(count: Int) throws {
    let members = (0..<count).map { #""k\#($0)":\#($0)"# }
    for repeated in ["k0", "k\(count - 1)"] {
      let text = "{" + (members + [#""\#(repeated)":"last""#]).joined(separator: ",") + "}"
      let object = try #require(
        try JSONParser.parseKeepingLastDuplicate(Array(text.utf8), maxDepth: 64).objectValue)
      #expect(object.count == count && object[repeated] == "last")
      #expect(object.members.last?.key == repeated)
    }
  }

  @Test func rejectsInvalidUTF8() {
    let bytes: [UInt8] = [UInt8(ascii: "\""), 0xC3, 0x28, UInt8(ascii: "\"")]
    #expect(throws: SetteeError.self) { try JSONParser.parse(bytes) }
  }

  @Test func limitsNestingWithoutCrashing() throws {
    let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
    #expect {
      try JSONParser.parse(deep)
    } throws: { ($0 as? SetteeError)?.code == .nestingTooDeep }
    let ok = String(repeating: "[", count: 10) + String(repeating: "]", count: 10)
    #expect(try JSONParser.parse(ok, maxDepth: 10).depth == 10)
    #expect(throws: SetteeError.self) { try JSONParser.parse(ok, maxDepth: 9) }
  }

  /// Random values print and parse back to themselves, and Foundation reads our output.
  @Test func randomValuesRoundTrip() throws {
    var random = SplitMix64(seed: 7)
    for _ in 0..<2_000 {
      let value = JSON.random(using: &random, depth: 0)
      let text = JSONWriter.string(value)
      #expect(try JSONParser.parse(text) == value, "\(text)")
      #expect(throws: Never.self) {
        try JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])
      }
    }
  }
}

extension JSON {
  static func random(using random: inout SplitMix64, depth: Int) -> JSON {
    let pick = random.next() % (depth > 3 ? 6 : 8)
    switch pick {
    case 0: return .null
    case 1: return .bool(random.next() % 2 == 0)
    case 2: return .int(Int64(bitPattern: random.next()) >> (random.next() % 64))
    case 3:
      let number = Double(bitPattern: random.next())
      return number.isFinite ? .double(number) : .double(Double(random.next() % 1000) / 8)
    case 4, 5:
      let alphabet: [String] = ["a", "Z", "\"", "\\", "\n", "\u{1}", "é", "中", "🎉", " ", "/", "ع"]
      let length = Int(random.next() % 8)
      return .string((0..<length).map { _ in alphabet[Int(random.next() % 12)] }.joined())
    case 6:
      return .array(
        (0..<Int(random.next() % 4)).map { _ in JSON.random(using: &random, depth: depth + 1) })
    default:
      var object = JSONObject()
      for index in 0..<Int(random.next() % 4) {
        object["k\(index)\(random.next() % 3)"] = JSON.random(using: &random, depth: depth + 1)
      }
      return .object(object)
    }
  }
}
