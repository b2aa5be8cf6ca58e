import SetteeCore
import Testing

/// Revision ids from peers (issue 31): any `N-<suffix>` kept byte for byte, 32 hex digits
/// lowercased as CouchDB keeps them, and ordered by generation then suffix bytes, as the
/// reference tree orders them.
@Suite("Peer revision ids")
struct PeerRevisionTests {
  @Test(arguments: [
    ("10-ABC", "10-ABC"), ("1-abc", "1-abc"),
    ("2-0123456789ABCDEF0123456789ABCDEF", "2-0123456789abcdef0123456789abcdef"),
    ("3-0123456789ABCDEF0123456789ABCDEF0123ABCD", "3-0123456789ABCDEF0123456789ABCDEF0123ABCD"),
    ("4-é", "4-é"), ("5-a b", "5-a b"),
  ])
  func spellings(_ text: String, _ kept: String) throws {
    #expect(try RevisionID(parsing: text).description == kept)
  }

  @Test(arguments: [
    "", "abc", "-a", "0-a", "01-a", "1-", "1-a\u{1}", "1-a\u{7F}", "x-a",
    "1-" + String(repeating: "a", count: 256),
  ])
  func refused(_ text: String) {
    #expect(RevisionID(text) == nil)
  }

  /// The same order as the reference tree's, over random pairs.
  /// Suffixes are kept and compared byte for byte: "é" precomposed and decomposed are two
  /// revisions, as a CouchDB peer holds them.
  @Test func equalityIsByBytes() throws {
    let composed = try RevisionID(parsing: "3-caf\u{E9}")
    let decomposed = try RevisionID(parsing: "3-cafe\u{301}")
    #expect(composed != decomposed)
    #expect(Set([composed, decomposed]).count == 2)
    #expect(composed == (try RevisionID(parsing: "3-caf\u{E9}")))
    #expect(decomposed < composed || composed < decomposed)
  }

  @Test func orderIsTheReferenceTreesOrder() throws {
    let suffixes = ["a", "Z", "é", "ab", "b", "A", "0", "~", "aé"]
    for generation in 1...3 {
      for left in suffixes {
        for right in suffixes {
          let l = try RevisionID(parsing: "\(generation)-\(left)")
          let r = try RevisionID(parsing: "\(generation % 2 + 1)-\(right)")
          let lt = try #require(RevisionTree.Rev(l.description))
          let rt = try #require(RevisionTree.Rev(r.description))
          #expect((l < r) == (lt < rt), "\(l) \(r)")
        }
      }
    }
  }
}
