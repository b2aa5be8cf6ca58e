/// Encodes JSON values as byte strings whose byte order (`memcmp`) is ``JSONCollation``'s
/// order, so that SQLite can compare, index and sort them as BLOBs.
///
/// Layout: a type tag (null 0x01, false 0x02, true 0x03, number 0x04, string 0x05,
/// array 0x06, object 0x07), then for a number 8 bytes of order-preserving IEEE double and
/// a byte (0x80) or 9 bytes that place a 64-bit integer exactly among the integers that
/// round to the same double; for a string its UTF-8 with 0x00 written 0x00 0xFF, ended by
/// 0x00; for an array its elements then 0x00; for an object each name (as a string) and
/// value, then 0x00. Equal values (`1` and `1.0`, `-0.0` and `0`) encode identically.
package enum CollationKey {
  /// The type tags that start every key, in CouchDB's order of types. Index predicates
  /// select a type, or every value from one type on, by these bytes.
  package enum Tag {
    package static let null: UInt8 = 0x01
    package static let `false`: UInt8 = 0x02
    package static let `true`: UInt8 = 0x03
    package static let number: UInt8 = 0x04
    package static let string: UInt8 = 0x05
    package static let array: UInt8 = 0x06
    package static let object: UInt8 = 0x07
    /// Starts the key of a whole array in a multi-entry index, after the keys of all
    /// scalar and element values (see the index layer).
    package static let wholeArray: UInt8 = 0x08
    /// Ends a string, an array or an object.
    package static let end: UInt8 = 0x00
  }

  /// The tag that starts the key of a whole array in a multi-entry index (after every
  /// other value).
  package static let wholeArrayTag: UInt8 = Tag.wholeArray

  /// The key of `value`.
  package static func encode(_ value: JSON) -> [UInt8] {
    var output: [UInt8] = []
    output.reserveCapacity(16)
    append(value, to: &output)
    return output
  }

  /// The key of a whole array entry: ``wholeArrayTag`` followed by the array's key.
  package static func encodeWholeArray(_ value: JSON) -> [UInt8] {
    var output: [UInt8] = [wholeArrayTag]
    append(value, to: &output)
    return output
  }

  /// The key prefix shared by every string that starts with `prefix`.
  package static func stringPrefix(_ prefix: String) -> [UInt8] {
    var output: [UInt8] = [Tag.string]
    appendStringBody(prefix, to: &output)
    return output
  }

  /// Appends the key of the JSON value that `text` spells, when it is a plain one: `null`,
  /// `true`, `false`, an integer that fits 64 bits (not `-0`), or an ASCII string without
  /// escapes. Returns false, having appended nothing, for anything else (which must be
  /// parsed). An index build calls this once per document and field, and parsing into a
  /// ``JSON`` value first was most of its cost.
  package static func appendPlain(
    jsonText text: UnsafeBufferPointer<UInt8>, to output: inout [UInt8]
  ) -> Bool {
    guard let first = text.first else { return false }
    switch first {
    case UInt8(ascii: "\""):
      guard text.count >= 2, text[text.count - 1] == UInt8(ascii: "\"") else { return false }
      let body = UnsafeBufferPointer(rebasing: text[1..<(text.count - 1)])
      for byte in body
      where byte >= 0x80 || byte < 0x20 || byte == UInt8(ascii: "\\")
        || byte == UInt8(ascii: "\"")
      {
        return false
      }
      output.append(Tag.string)
      output.append(contentsOf: body)
      output.append(Tag.end)
      return true
    case UInt8(ascii: "n"), UInt8(ascii: "t"), UInt8(ascii: "f"):
      let tag: UInt8
      if text.elementsEqual("null".utf8) {
        tag = Tag.null
      } else if text.elementsEqual("true".utf8) {
        tag = Tag.true
      } else if text.elementsEqual("false".utf8) {
        tag = Tag.false
      } else {
        return false
      }
      output.append(tag)
      return true
    case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
      let negative = first == UInt8(ascii: "-")
      let digits = UnsafeBufferPointer(rebasing: text[(negative ? 1 : 0)...])
      // One digit at least, no leading zero (and so no -0), at most 18 digits (no overflow).
      guard !digits.isEmpty, digits.count <= 18,
        digits[0] != UInt8(ascii: "0") || digits.count == 1,
        !(negative && digits[0] == UInt8(ascii: "0"))
      else { return false }
      var value: Int64 = 0
      for byte in digits {
        let digit = byte &- UInt8(ascii: "0")
        guard digit < 10 else { return false }
        value = value * 10 + Int64(digit)
      }
      appendNumber(integer: negative ? -value : value, to: &output)
      return true
    default:
      return false
    }
  }

  /// Appends the key of `value` to `output`.
  package static func append(_ value: JSON, to output: inout [UInt8]) {
    switch value {
    case .null: output.append(Tag.null)
    case .bool(let flag): output.append(flag ? Tag.true : Tag.false)
    case .int(let number): appendNumber(integer: number, to: &output)
    case .double(let number): appendNumber(double: number, to: &output)
    case .largeInteger: appendNumber(double: value.doubleValue ?? 0, to: &output)
    case .string(let text):
      output.append(Tag.string)
      appendStringBody(text, to: &output)
      output.append(Tag.end)
    case .array(let elements):
      output.append(Tag.array)
      for element in elements { append(element, to: &output) }
      output.append(Tag.end)
    case .object(let object):
      output.append(Tag.object)
      for member in object {
        output.append(Tag.string)
        appendStringBody(member.key, to: &output)
        output.append(Tag.end)
        append(member.value, to: &output)
      }
      output.append(Tag.end)
    }
  }

  static func appendStringBody(_ text: String, to output: inout [UInt8]) {
    for byte in text.utf8 {
      output.append(byte)
      if byte == 0 { output.append(0xFF) }
    }
  }

  static func appendNumber(double: Double, tag: UInt8 = Tag.number, to output: inout [UInt8]) {
    appendDoubleBits(double, tag: tag, to: &output)
    output.append(0x80)
  }

  static func appendNumber(integer: Int64, tag: UInt8 = Tag.number, to output: inout [UInt8]) {
    let double = Double(integer)
    appendDoubleBits(double, tag: tag, to: &output)
    // Integers beyond 2^53 may round; the exact difference orders them among themselves.
    // (Without Int128, which needs macOS 15: a double rounded up to 2^63 is just past
    // Int64.max; any other converts back exactly.)
    let delta: Int64 =
      double >= 9_223_372_036_854_775_808.0 ? (integer - Int64.max) - 1 : integer - Int64(double)
    if delta == 0 {
      output.append(0x80)
    } else {
      output.append(delta < 0 ? 0x7F : 0x81)
      appendBigEndian(UInt64(bitPattern: Int64(delta)) ^ (1 << 63), to: &output)
    }
  }

  static func appendDoubleBits(_ double: Double, tag: UInt8, to output: inout [UInt8]) {
    output.append(tag)
    let normalized = double == 0 ? 0.0 : double  // -0.0 and 0.0 are equal
    let bits = normalized.bitPattern
    appendBigEndian(bits & (1 << 63) != 0 ? ~bits : bits | (1 << 63), to: &output)
  }

  static func appendBigEndian(_ value: UInt64, to output: inout [UInt8]) {
    for shift in stride(from: 56, through: 0, by: -8) {
      output.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
    }
  }
}
