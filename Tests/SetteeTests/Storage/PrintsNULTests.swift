import SetteeCore
import Testing

@testable import Settee

@Suite("Finding U+0000 in printed JSON")
struct PrintsNULTests {
  @Test(
    "Where the escape is",
    arguments: [
      (#"{"a":"\u0000"}"#, true),
      (#"\u0000"#, true),
      (#"xx\u0000"#, true),
      (#"\u0000xx"#, true),
      (#"{"a":"\n\t\"\\"}"#, false),
      (#"\u000"#, false),
      (#"xxxx\"#, false),
      (#"\u0001\u0000"#, true),
      ("", false),
      (#"{"a":"b"}"#, false),
    ])
  func finds(text: String, expected: Bool) {
    #expect(DocumentWriter.printsNUL(Array(text.utf8)) == expected)
    // Against the plain definition.
    #expect(expected == text.contains(#"\u0000"#))
  }

  /// Documents holding U+0000 anywhere, printed by JSONWriter, are found; others are not.
  @Test func printedDocuments() {
    for position in 0..<12 {
      var text = String(repeating: "a", count: 12)
      var withNUL = text
      withNUL.insert("\u{0}", at: withNUL.index(withNUL.startIndex, offsetBy: position))
      text.insert("\u{1}", at: text.index(text.startIndex, offsetBy: position))
      #expect(DocumentWriter.printsNUL(JSONWriter.bytes(.object(["k": .string(withNUL)]))))
      #expect(!DocumentWriter.printsNUL(JSONWriter.bytes(.object(["k": .string(text)]))))
    }
  }
}
