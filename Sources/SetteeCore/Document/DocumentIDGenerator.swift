import Foundation

/// Makes new document ids the way CouchDB's default `sequential` algorithm does: a random
/// 26-hex-digit prefix followed by a 6-digit suffix that grows by a random step, with a new
/// prefix when the suffix would overflow.
///
/// Ids made one after the other sort together, so inserting them touches the same B-tree
/// pages of the id index instead of random ones, while staying unguessable across prefixes.
struct DocumentIDGenerator {
  private var prefix: String
  private var suffix: UInt32
  /// The prefixes come from the system's secure generator; the steps, which need not be
  /// secret, from a fast generator seeded by it (a system call per id would cost more
  /// than the rest of making the id).
  private var system = SystemRandomNumberGenerator()
  private var steps: SplitMix64

  init() {
    prefix = ""
    suffix = 0
    steps = SplitMix64(seed: system.next())
    renewPrefix()
  }

  mutating func next() -> String {
    suffix += UInt32(steps.next() % 0xFFE) + 1
    if suffix > 0xFFF000 { renewPrefix() }
    return prefix + Hex.string(of: suffix, digits: 6)
  }

  private mutating func renewPrefix() {
    let high: UInt64 = system.next()
    let low: UInt64 = system.next() >> 24  // 40 bits
    prefix = Hex.string(of: high, digits: 16) + Hex.string(of: low, digits: 10)
    suffix = UInt32(system.next() % 0x1000)
  }

  static let shared = Locked(DocumentIDGenerator())
}

/// Lowercase hexadecimal text.
package enum Hex {
  private static let digits = Array("0123456789abcdef".utf8)

  /// The low `digits` hex digits of `value`, zero-padded.
  static func string(of value: some FixedWidthInteger, digits count: Int) -> String {
    var value = UInt64(truncatingIfNeeded: value)
    var bytes = [UInt8](repeating: UInt8(ascii: "0"), count: count)
    for index in stride(from: count - 1, through: 0, by: -1) {
      bytes[index] = digits[Int(value & 0xF)]
      value >>= 4
    }
    return String(decoding: bytes, as: UTF8.self)
  }

  /// `prefix` followed by two hex digits per byte of a digest, read in place (iterating a
  /// digest as a sequence was a fortieth of an import), in one string.
  package static func string(ofDigest digest: some ContiguousBytes, prefix: String = "")
    -> String
  {
    var prefix = prefix
    return prefix.withUTF8 { head in
      digest.withUnsafeBytes { bytes in
        String(unsafeUninitializedCapacity: head.count + bytes.count * 2) { text in
          var index = 0
          for byte in head {
            text[index] = byte
            index += 1
          }
          digits.withUnsafeBufferPointer { digits in
            for byte in bytes {
              text[index] = digits[Int(byte >> 4)]
              text[index + 1] = digits[Int(byte & 0xF)]
              index += 2
            }
          }
          return index
        }
      }
    }
  }
}
