import Foundation

extension String {
  /// The string these bytes spell in UTF-8, or `nil` when they are not valid UTF-8 (never
  /// repaired with U+FFFD). `String(validating:as:)` needs macOS 15 and iOS 18; before
  /// them, the repairing decoder is run and its bytes compared (repair changes them exactly
  /// when the input is not valid).
  package init?<Bytes: Collection<UInt8>>(validatingUTF8 bytes: Bytes) {
    if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) {
      guard let string = String(validating: bytes, as: UTF8.self) else { return nil }
      self = string
    } else {
      let decoded = String(decoding: bytes, as: UTF8.self)
      guard decoded.utf8.elementsEqual(bytes) else { return nil }
      self = decoded
    }
  }
}

extension String {
  /// Whether the two strings are the same UTF-8 bytes (not Unicode canonical equivalence,
  /// as `==` is): lengths first, then the bytes in place with `memcmp` (a generic
  /// comparison of the buffers was most of a debug build's member lookups). `utf8.elementsEqual` compares
  /// them through the generic iterator: a twenty-fifth of an import's time in the parser's
  /// duplicate-name check, 2% of a replication's in JSONObject and RevisionID.
  @inline(__always)
  package func hasSameBytes(as other: String) -> Bool {
    let (x, y) = (utf8, other.utf8)
    guard x.count == y.count else { return false }
    let inPlace = x.withContiguousStorageIfAvailable { p in
      y.withContiguousStorageIfAvailable { q in
        p.isEmpty || memcmp(p.baseAddress!, q.baseAddress!, p.count) == 0
      }
    }
    return (inPlace ?? nil) ?? x.elementsEqual(y)
  }
}

extension UnsafeBufferPointer<UInt8> {
  /// Whether these bytes are `word`'s.
  @inline(__always)
  package func hasSameBytes(as word: StaticString) -> Bool {
    count == word.utf8CodeUnitCount
      && elementsEqual(UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount))
  }
}

/// A string that is equal to another, and hashes, by its UTF-8 bytes (as JSON member names
/// compare, ``String/hasSameBytes(as:)``): a table of names keyed by it makes no copy of
/// each name, where `Array(name.utf8)` allocated one per name (a thousand per `_revs_diff`
/// object).
package struct ByteName: Hashable {
  package let string: String

  @inline(__always)
  package init(_ string: String) { self.string = string }

  package static func == (lhs: ByteName, rhs: ByteName) -> Bool {
    lhs.string.hasSameBytes(as: rhs.string)
  }

  package func hash(into hasher: inout Hasher) {
    let hashed: Void? = string.utf8.withContiguousStorageIfAvailable {
      hasher.combine(bytes: UnsafeRawBufferPointer($0))
    }
    if hashed == nil {
      for byte in string.utf8 { hasher.combine(byte) }
    }
  }
}
