import Foundation

/// Prepares text for SQLite's FTS4 tokenizers so that search works the same in every script.
///
/// FTS4's `simple` and `porter` tokenizers fold case and split words for ASCII only. Settee
/// folds case and diacritics itself (so `LÉA`, `Léa` and `lea` match), turns every
/// character that is neither a letter nor a digit into a space, and writes each CJK
/// character as a word of its own, since those scripts do not separate words with spaces:
/// a search for `東京` then finds the two characters side by side, as a phrase.
package enum TextNormalizer {
  /// The searchable form of a text: folded, with separators as spaces.
  package static func normalize(_ text: String) -> String {
    var output = String.UnicodeScalarView()
    let folded = text.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil)
    for scalar in folded.unicodeScalars {
      if isCJK(scalar) {
        output.append(" ")
        output.append(scalar)
        output.append(" ")
      } else if scalar.properties.isAlphabetic || scalar.properties.numericType != nil
        || scalar.properties.generalCategory == .nonspacingMark
        || scalar.properties.generalCategory == .spacingMark
      {
        output.append(scalar)
      } else {
        output.append(" ")
      }
    }
    return String(output)
  }

  /// Ideographs, kana and hangul: scripts written without spaces between words.
  static func isCJK(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar.value {
    case 0x3040...0x30FF,  // hiragana, katakana
      0x3400...0x4DBF, 0x4E00...0x9FFF, 0xF900...0xFAFF,  // CJK ideographs
      0x20000...0x2FA1F,  // CJK extensions
      0xAC00...0xD7AF, 0x1100...0x11FF, 0x3130...0x318F:  // hangul
      true
    default:
      false
    }
  }

  /// The text of a field's value for a TEXT index: strings as they are, numbers and
  /// booleans as their JSON text, arrays and objects as the text of every value in them.
  package static func text(of value: JSON) -> String {
    switch value {
    case .null: ""
    case .string(let text): text
    case .bool, .int, .double, .largeInteger: JSONWriter.string(value)
    case .array(let elements): elements.map(text(of:)).filter { !$0.isEmpty }.joined(separator: " ")
    case .object(let object):
      object.map { text(of: $0.value) }.filter { !$0.isEmpty }.joined(separator: " ")
    }
  }
}
