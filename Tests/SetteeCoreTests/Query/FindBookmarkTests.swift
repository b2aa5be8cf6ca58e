import Foundation
import SetteeTestSupport
import Testing

@testable import SetteeCore

/// Bookmarks are base64 as URLs take it (no `+`, `/` or `=`), and read back as the
/// position they were made for, whatever the length of the JSON inside (every padding
/// case of base64).
@Suite("Find bookmarks: URL-safe tokens that read back")
struct FindBookmarkTests {
  static let sort = [FindQuery.SortField("name"), FindQuery.SortField("age", descending: true)]

  static let positions: [FindBookmark] =
    [.skipped(0), .skipped(7), .skipped(123_456)]
    + ["", "a", "ab", "abc", "abcd", "é?>~\u{1F600}", String(repeating: "z", count: 200)].map {
      .after(keys: [.string($0), nil], id: $0)
    }
    + [.after(keys: [.int(-5), .double(2.5)], id: "d1"), .after(keys: [nil, .null], id: ">>>")]

  @Test(arguments: positions)
  func tokensAreURLSafeAndReadBack(_ position: FindBookmark) throws {
    let token = position.token(sort: Self.sort)
    #expect(!token.contains { "+/=".contains($0) }, "\(token)")
    #expect(try FindBookmark.decode(token, sort: Self.sort) == position)
  }

  /// The encoder is Settee's own: on random bytes of every length up to 300 it gives
  /// Foundation's base64 with the URL alphabet and no padding, and decodes back.
  @Test func encodesAsFoundationOnRandomBytes() throws {
    var random = SplitMix64(seed: 56)
    for length in 0...300 {
      let bytes = (0..<length).map { _ in UInt8(truncatingIfNeeded: random.next()) }
      let reference = String(
        Data(bytes).base64EncodedString().compactMap { character -> Character? in
          character == "+" ? "-" : character == "/" ? "_" : character == "=" ? nil : character
        })
      let token = FindBookmark.base64URL(bytes)
      #expect(token == reference, "\(length) bytes")
      #expect(FindBookmark.bytes(base64URL: token) == bytes, "\(length) bytes")
    }
  }

  @Test func anotherSortsTokenIsRefused() throws {
    let token = FindBookmark.skipped(3).token(sort: Self.sort)
    #expect(throws: SetteeError.self) {
      try FindBookmark.decode(token, sort: [FindQuery.SortField("name")])
    }
  }
}
