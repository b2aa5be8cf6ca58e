import Foundation

extension UInt8 {
  /// Whether the byte is JSON's whitespace (space, tab, line feed, carriage return).
  @inline(__always)
  package var isJSONSpace: Bool { self == 0x20 || self == 0x0A || self == 0x09 || self == 0x0D }
}

extension UnsafeRawBufferPointer {
  /// Where `needle` first occurs at or after `start`, or `nil`. `memchr` finds each place
  /// the needle's byte at `anchor` is, `memcmp` compares the whole needle there: anchoring
  /// on a byte that is rare in the text (`_` in JSON, where `"` is everywhere) makes few
  /// comparisons.
  package func firstIndex(of needle: [UInt8], from start: Int = 0, anchor: Int = 0) -> Int? {
    guard let base = baseAddress, needle.indices.contains(anchor), start >= 0 else { return nil }
    let last = count - needle.count  // the last place the needle can start
    var from = start
    return needle.withUnsafeBytes { needleBytes in
      while from <= last {
        guard
          let found = memchr(base + from + anchor, Int32(needle[anchor]), last - from + 1)
        else { return nil }
        let at = base.distance(to: UnsafeRawPointer(found)) - anchor
        if memcmp(base + at, needleBytes.baseAddress!, needle.count) == 0 { return at }
        from = at + 1
      }
      return nil
    }
  }
}

extension UnsafeBufferPointer<UInt8> {
  /// Whether the bytes are well-formed UTF-8 (no overlong forms, surrogates or values past
  /// U+10FFFF), as `String(validating:)` requires.
  package var isValidUTF8: Bool {
    var index = 0
    while index < count {
      let lead = self[index]
      if lead < 0x80 {
        index += 1
        continue
      }
      let length: Int
      var low: UInt8 = 0x80
      var high: UInt8 = 0xBF
      switch lead {
      case 0xC2...0xDF: length = 2
      case 0xE0:
        length = 3
        low = 0xA0
      case 0xE1...0xEC, 0xEE...0xEF: length = 3
      case 0xED:
        length = 3
        high = 0x9F
      case 0xF0:
        length = 4
        low = 0x90
      case 0xF1...0xF3: length = 4
      case 0xF4:
        length = 4
        high = 0x8F
      default: return false
      }
      guard index + length <= count else { return false }
      let second = self[index + 1]
      guard second >= low && second <= high else { return false }
      for offset in 2..<length where self[index + offset] & 0xC0 != 0x80 { return false }
      index += length
    }
    return true
  }
}
