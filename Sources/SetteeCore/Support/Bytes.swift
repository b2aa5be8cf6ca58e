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
