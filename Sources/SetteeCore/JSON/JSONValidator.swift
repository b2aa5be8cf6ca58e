import Foundation

/// Checks that bytes are JSON without building anything: a stored body that is sent on as
/// it is (`_bulk_get`, a replication's source) is checked first, so that a damaged one is
/// never passed on; parsing it into ``JSON`` values only to throw them away, or copying it
/// while checking, was most of such a read's work.
///
/// It follows ``JSONParser``'s grammar (whitespace, literals, numbers, strings and their
/// escapes, UTF-8, nesting up to `maxDepth`), and leaves out what only a value can tell:
/// duplicate member names, numbers out of a double's range and lone surrogate escapes are
/// accepted here and refused by the parser. Text Settee printed has none of them, so for a
/// stored body the two agree.
package enum JSONValidator {
  /// Whether `bytes` are one JSON object (whitespace around it allowed), nested at most
  /// `maxDepth` levels.
  package static func isObject(
    _ bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int = JSONParser.defaultMaxDepth
  ) -> Bool {
    var reader = Reader(bytes: bytes, maxDepth: maxDepth)
    reader.skipSpace()
    guard reader.peek == UInt8(ascii: "{"), reader.value(depth: 0) else { return false }
    reader.skipSpace()
    return reader.position == bytes.count
  }

  private struct Reader {
    let bytes: UnsafeBufferPointer<UInt8>
    let maxDepth: Int
    var position = 0

    init(bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int) {
      self.bytes = bytes
      self.maxDepth = maxDepth
    }

    var peek: UInt8? { position < bytes.count ? bytes[position] : nil }

    mutating func value(depth: Int) -> Bool {
      guard let byte = peek else { return false }
      switch byte {
      case UInt8(ascii: "{"):
        return object(depth: depth + 1)
      case UInt8(ascii: "["):
        return array(depth: depth + 1)
      case UInt8(ascii: "\""):
        return string()
      case UInt8(ascii: "t"):
        return literal("true")
      case UInt8(ascii: "f"):
        return literal("false")
      case UInt8(ascii: "n"):
        return literal("null")
      case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
        return number()
      default:
        return false
      }
    }

    mutating func object(depth: Int) -> Bool {
      guard depth <= maxDepth else { return false }
      position += 1  // {
      skipSpace()
      if next(UInt8(ascii: "}")) { return true }
      while true {
        skipSpace()
        guard peek == UInt8(ascii: "\""), string() else { return false }
        skipSpace()
        guard next(UInt8(ascii: ":")) else { return false }
        skipSpace()
        guard value(depth: depth) else { return false }
        skipSpace()
        if next(UInt8(ascii: ",")) { continue }
        return next(UInt8(ascii: "}"))
      }
    }

    mutating func array(depth: Int) -> Bool {
      guard depth <= maxDepth else { return false }
      position += 1  // [
      skipSpace()
      if next(UInt8(ascii: "]")) { return true }
      while true {
        skipSpace()
        guard value(depth: depth) else { return false }
        skipSpace()
        if next(UInt8(ascii: ",")) { continue }
        return next(UInt8(ascii: "]"))
      }
    }

    /// The string whose opening quote is at `position`.
    mutating func string() -> Bool {
      position += 1  // "
      var start = position
      while position < bytes.count {
        let byte = bytes[position]
        switch byte {
        case UInt8(ascii: "\""):
          defer { position += 1 }
          return utf8(from: start)
        case UInt8(ascii: "\\"):
          guard utf8(from: start), position + 1 < bytes.count else { return false }
          switch bytes[position + 1] {
          case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"),
            UInt8(ascii: "f"), UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
            position += 2
          case UInt8(ascii: "u"):
            guard position + 6 <= bytes.count,
              bytes[(position + 2)..<(position + 6)].allSatisfy(\.isHexDigit)
            else { return false }
            position += 6
          default:
            return false
          }
          start = position
        default:
          guard byte >= 0x20 else { return false }
          position += 1
        }
      }
      return false
    }

    /// Whether the unescaped run from `start` to `position` is well-formed UTF-8.
    func utf8(from start: Int) -> Bool {
      UnsafeBufferPointer(rebasing: bytes[start..<position]).isValidUTF8
    }

    /// A number as JSON writes it: `-`, then `0` or digits not starting with 0, then an
    /// optional fraction and exponent.
    mutating func number() -> Bool {
      _ = next(UInt8(ascii: "-"))
      guard let first = peek, first.isDigit else { return false }
      position += 1
      if first != UInt8(ascii: "0") { skipDigits() }
      if next(UInt8(ascii: ".")) {
        guard peek?.isDigit == true else { return false }
        skipDigits()
      }
      if let byte = peek, byte | 0x20 == UInt8(ascii: "e") {
        position += 1
        if peek == UInt8(ascii: "+") || peek == UInt8(ascii: "-") { position += 1 }
        guard peek?.isDigit == true else { return false }
        skipDigits()
      }
      // A digit right after a leading 0 is not JSON.
      return peek?.isDigit != true
    }

    mutating func skipDigits() {
      while position < bytes.count, bytes[position].isDigit { position += 1 }
    }

    mutating func literal(_ word: StaticString) -> Bool {
      let count = word.utf8CodeUnitCount
      guard position + count <= bytes.count,
        memcmp(bytes.baseAddress! + position, word.utf8Start, count) == 0
      else { return false }
      position += count
      return true
    }

    mutating func next(_ byte: UInt8) -> Bool {
      guard position < bytes.count, bytes[position] == byte else { return false }
      position += 1
      return true
    }

    mutating func skipSpace() {
      while position < bytes.count, bytes[position].isJSONSpace { position += 1 }
    }
  }
}

extension UInt8 {
  @inline(__always)
  fileprivate var isDigit: Bool { self &- UInt8(ascii: "0") < 10 }

  fileprivate var isHexDigit: Bool {
    isDigit || (self | 0x20) &- UInt8(ascii: "a") < 6
  }
}
