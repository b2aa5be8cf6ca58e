import SetteeCore
import Testing

@Suite("JSON objects built from members")
struct JSONObjectTests {
  /// A repeated name keeps its first position and its last value, however many members
  /// come before it (past 16, names are found through a table), and names match byte for
  /// byte: "é" and "e\u{301}" are two members.
  @Test(arguments: [3, 16, 17, 40, 600])
  func repeatedNamesKeepFirstPositionAndLastValue(count: Int) {
    var pairs: [(String, JSON)] = (0..<count).map { ("k\($0)", .int(Int64($0))) }
    pairs.append(("k1", "again"))
    pairs.append(("\u{E9}", 1))
    pairs.append(("e\u{301}", 2))
    pairs.append(("k\(count - 1)", "last"))
    let object = JSONObject(pairs)
    #expect(object.count == count + 2)
    #expect(object.keys.prefix(2) == ["k0", "k1"])
    #expect(object["k1"] == "again")
    #expect(object["k\(count - 1)"] == "last")
    #expect(object["\u{E9}"] == 1 && object["e\u{301}"] == 2)
  }

  /// Lookups, replacement and removal match names byte for byte, for short names (kept
  /// inline in the string) and long ones alike, and never by canonical equivalence.
  @Test(arguments: ["", "a", "\u{E9}", "e\u{301}", String(repeating: "long name ", count: 8)])
  func namesMatchByteForByte(name: String) {
    var object: JSONObject = ["\u{E9}": "precomposed", "e\u{301}": "decomposed", "": "empty"]
    object[String(repeating: "long name ", count: 8)] = "long"
    object["a"] = "a"
    let copy = String(decoding: Array(name.utf8), as: UTF8.self)  // another storage
    #expect(object[copy] == object[name])
    #expect(object[copy] != nil)
    object[copy] = "replaced"
    #expect(object[name] == "replaced" && object.count == 5)
    #expect(object.removeValue(forKey: copy) == "replaced" && object[name] == nil)
    #expect(object.count == 4)
    #expect(JSONObject.Member(key: name, value: 1) == JSONObject.Member(key: copy, value: 1))
    #expect(
      JSONObject.Member(key: "\u{E9}", value: 1) != JSONObject.Member(key: "e\u{301}", value: 1))
  }
}
