import Foundation

/// What a `$regex` pattern says about the literal text a matching string must hold, read
/// conservatively: when in doubt, nothing.
///
/// Two uses: a pattern that is nothing but literal characters matches exactly the strings
/// that contain it (ICU searches code points without case folding or normalization, so that
/// is a byte search of UTF-8), and any other pattern's longest required run lets a scan skip
/// documents whose JSON text cannot hold a match.
package struct RegexLiteral: Equatable, Sendable {
  /// Text every match contains (may be empty when ``isWholePattern`` is true).
  package var text: String
  /// The pattern is this text and nothing else: matching it is a substring search.
  package var isWholePattern: Bool

  /// Escapes that stand for one position or one character of a class, and consume nothing
  /// after them.
  private static let simpleEscapes = Set("dDsSwWbBAzZGhHvVRXtnrfea".unicodeScalars)

  /// Reads `pattern` (one NSRegularExpression accepts) for its required literal text, or
  /// `nil` when the pattern has none this reading can be sure of: alternation or groups
  /// anywhere, `\Q` quoting, escapes that read further characters (`\x41`, `\cA`, `\1`,
  /// `\p{…}`), or a run shorter than one character.
  package init?(pattern: String) {
    let scalars = Array(pattern.unicodeScalars)
    var runs: [[Unicode.Scalar]] = []
    var run: [Unicode.Scalar] = []
    var whole = true
    func endRun() {
      if !run.isEmpty { runs.append(run) }
      run = []
      whole = false
    }
    var index = 0
    while index < scalars.count {
      let scalar = scalars[index]
      index += 1
      switch scalar {
      case "\\":
        guard index < scalars.count else { return nil }
        let escaped = scalars[index]
        index += 1
        if escaped.properties.isAlphabetic || ("0"..."9").contains(escaped) {
          guard escaped.isASCII, RegexLiteral.simpleEscapes.contains(escaped) else { return nil }
          endRun()
        } else {
          run.append(escaped)
        }
      case "(", ")", "|", "]", "}": return nil
      case "[":
        // Skip the class, nested sets and escapes included; `[]` and `[^]` read `]` as a
        // member in some engines, so leave those alone.
        guard index < scalars.count, scalars[index] != "]",
          !(scalars[index] == "^" && index + 1 < scalars.count && scalars[index + 1] == "]")
        else { return nil }
        var depth = 1
        while depth > 0 {
          guard index < scalars.count else { return nil }
          switch scalars[index] {
          case "\\": index += 1
          case "[": depth += 1
          case "]": depth -= 1
          default: break
          }
          index += 1
        }
        endRun()
      case "*", "?", "{":
        // The atom before may be absent: drop it from the run.
        if !run.isEmpty { run.removeLast() }
        endRun()
        if scalar == "{" {
          guard let close = scalars[index...].firstIndex(of: "}") else { return nil }
          index = close + 1
        }
      case "+", ".", "^", "$": endRun()
      default: run.append(scalar)
      }
    }
    let isWholePattern = whole
    endRun()
    if isWholePattern {
      text = String(String.UnicodeScalarView(runs.first ?? []))
    } else {
      guard let longest = runs.max(by: { $0.count < $1.count }) else { return nil }
      text = String(String.UnicodeScalarView(longest))
    }
    self.isWholePattern = isWholePattern
  }

  /// Whether `string` contains ``text`` (for a whole-pattern literal, whether it matches).
  package func isFound(in string: String) -> Bool {
    if text.isEmpty { return true }
    var haystack = string
    var needle = text
    return haystack.withUTF8 { haystack in
      needle.withUTF8 { needle in
        guard needle.count <= haystack.count, let first = needle.first else { return false }
        var start = 0
        let last = haystack.count - needle.count
        while start <= last {
          guard
            let found = UnsafeBufferPointer(rebasing: haystack[start...last]).firstIndex(of: first)
          else { return false }
          let at = start + found
          if memcmp(haystack.baseAddress! + at, needle.baseAddress!, needle.count) == 0 {
            return true
          }
          start = at + 1
        }
        return false
      }
    }
  }
}
