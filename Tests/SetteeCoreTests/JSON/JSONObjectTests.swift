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
}
