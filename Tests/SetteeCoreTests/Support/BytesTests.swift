import SetteeCore
import Testing

/// The byte search the wire readers share (multipart boundaries, `_bulk_docs` answers,
/// attachment names), against a plain search, anchored on each byte of the needle.
@Suite("Byte search")
struct BytesTests {
  /// The first place `needle` occurs at or after `start`, found the slow way.
  private func plain(_ needle: [UInt8], in text: [UInt8], from start: Int) -> Int? {
    guard !needle.isEmpty, text.count >= needle.count, start <= text.count - needle.count
    else { return nil }
    return (max(0, start)...(text.count - needle.count)).first {
      Array(text[$0..<($0 + needle.count)]) == needle
    }
  }

  @Test(arguments: [
    ("", "a"), ("a", "a"), ("ab", "abc"), ("xxabcxxabc", "abc"), ("aaab", "aab"),
    (#"{"_id":"a","_attachments":{}}"#, #""_attachments""#),
    (#"{"note":"my_attachments","x":1}"#, #""_attachments""#), ("--B\r\n\r\n--B--", "--B"),
    ("abc", ""),
  ])
  func findsWhatAPlainSearchFinds(text: String, needle: String) {
    let (bytes, wanted) = (Array(text.utf8), Array(needle.utf8))
    for anchor in 0..<max(1, wanted.count) {
      for start in 0...bytes.count {
        let found = bytes.withUnsafeBytes {
          $0.firstIndex(of: wanted, from: start, anchor: anchor)
        }
        #expect(
          found == plain(wanted, in: bytes, from: start),
          "\(text) / \(needle) from \(start) anchored at \(anchor)")
      }
    }
  }

  @Test func jsonSpaceIsTheFourBytesJSONAllows() {
    let spaces = (0...255).map(UInt8.init).filter(\.isJSONSpace)
    #expect(spaces == [0x09, 0x0A, 0x0D, 0x20])
  }
}
