/// Finds where a JSON value ends in text that arrives in pieces, without parsing it: at the
/// first `,`, `]` or `}` (and `:`, for a member name) outside strings at the value's own
/// depth: the delimiter after it. Its state is kept between calls, so each byte is looked at once however the text is
/// cut. The value's own grammar is left to ``JSONParser``.
package struct JSONValueEnd {
  private var depth = 0
  private var inString = false
  private var escaped = false
  private let colonEnds: Bool

  /// `colonEnds`: a `:` ends the value too (a member name's end, in an object's text).
  package init(colonEnds: Bool) {
    self.colonEnds = colonEnds
  }

  /// Moves `position` through `bytes` to the delimiter after the value: `true` when it is
  /// found (`position` is at the delimiter), `false` when the bytes run out first
  /// (`position` is `bytes.count`; call again with more).
  package mutating func advance(_ bytes: [UInt8], _ position: inout Int) -> Bool {
    while position < bytes.count {
      let byte = bytes[position]
      if inString {
        if escaped {
          escaped = false
        } else if byte == UInt8(ascii: "\\") {
          escaped = true
        } else if byte == UInt8(ascii: "\"") {
          inString = false
        }
      } else {
        switch byte {
        case UInt8(ascii: "\""): inString = true
        case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
        case UInt8(ascii: "}"), UInt8(ascii: "]"):
          if depth == 0 { return true }
          depth -= 1
        case UInt8(ascii: ","):
          if depth == 0 { return true }
        case UInt8(ascii: ":"):
          if depth == 0 && colonEnds { return true }
        default: break
        }
      }
      position += 1
    }
    return false
  }
}
