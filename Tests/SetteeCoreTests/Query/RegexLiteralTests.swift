import Foundation
import SetteeCore
import SetteeTestSupport
import Testing

@Suite("Literal text of $regex patterns")
struct RegexLiteralTests {
  @Test(
    "What a pattern requires",
    arguments: [
      ("doctor", "doctor", true),
      ("", "", true),
      ("a\\.b", "a.b", true),
      ("say \"hi\"", "say \"hi\"", true),
      ("\\\\", "\\", true),
      ("中文", "中文", true),
      ("^doctor", "doctor", false),
      ("doctor$", "doctor", false),
      ("doc.or", "doc", false),
      ("x?abc", "abc", false),
      ("ab*cd", "cd", false),
      ("ab+cd", "ab", false),
      ("[xyz]abc", "abc", false),
      ("[[a-z]&&[b]]abc", "abc", false),
      ("\\d+abc", "abc", false),
      ("ab{2}cd", "cd", false),
      ("\\bword\\b", "word", false),
    ])
  func required(pattern: String, text: String, whole: Bool) throws {
    let literal = try #require(RegexLiteral(pattern: pattern))
    #expect(literal.text == text)
    #expect(literal.isWholePattern == whole)
  }

  @Test(
    "Patterns it cannot be sure of give nothing",
    arguments: [
      "a|b", "(ab)", "(?i)ab", "\\Qab\\E", "\\x41", "\\u0041", "\\cA", "\\1", "\\p{L}", "[]a]",
      "[^]a]", "x*", ".", "^$", "[ab", "a{2",
    ])
  func unsure(pattern: String) {
    #expect(RegexLiteral(pattern: pattern) == nil)
  }

  /// Random patterns built from literal pieces and operators, against NSRegularExpression on
  /// random strings: a whole-pattern literal matches exactly when found, and any match
  /// contains the required text.
  @Test("Agrees with NSRegularExpression")
  func agrees() throws {
    var random = RandomQueries(seed: 16)
    let pieces = [
      "a", "b", "é", "e\u{301}", "中", "\\.", ".", "*", "+", "?", "^", "$", "\\d", "[ab]", "{2}",
      "\"", "\\\\", " ", "\n",
    ]
    let alphabet = ["a", "b", "é", "e\u{301}", "中", ".", "\"", "\\", " ", "\n", "1", "ab"]
    var checked = 0
    for _ in 0..<3000 {
      let pattern = (0..<Int(1 + random.random.next() % 5)).map { _ in random.pick(pieces) }
        .joined()
      guard let expression = try? NSRegularExpression(pattern: pattern),
        let literal = RegexLiteral(pattern: pattern)
      else { continue }
      for _ in 0..<10 {
        let text = (0..<Int(random.random.next() % 8)).map { _ in random.pick(alphabet) }.joined()
        let range = NSRange(text.startIndex..<text.endIndex, in: text)
        let matches = expression.firstMatch(in: text, range: range) != nil
        if literal.isWholePattern {
          #expect(literal.isFound(in: text) == matches, "\(pattern) on \(text)")
        } else if matches {
          #expect(literal.isFound(in: text), "\(pattern) on \(text)")
        }
        checked += 1
      }
    }
    #expect(checked > 5000)
  }
}
