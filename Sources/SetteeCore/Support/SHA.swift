import CSetteeDigest
import Foundation

/// SHA-256 (FIPS 180-4), HMAC-SHA-256 (RFC 2104) and PBKDF2-HMAC-SHA-256 (RFC 8018), for
/// the server's admin passwords and session cookies, and for naming what compiled
/// JavaScript is shared (a design document's body). Settee's own for the reason MD5 is
/// (SetteeCore's `MD5`): swift-crypto compiles BoringSSL, most of a clean build, for these
/// few functions. The block functions and PBKDF2's iterations are C (`CSetteeDigest`), which
/// a debug build runs 20 times faster than Swift. Tested against FIPS 180-4's, RFC 4231's
/// and RFC 7914's vectors, and Python's `hashlib` on random inputs.
package enum SHA256 {
  /// The eight words a digest starts from.
  static let initial: [UInt32] = [
    0x6a09_e667, 0xbb67_ae85, 0x3c6e_f372, 0xa54f_f53a, 0x510e_527f, 0x9b05_688c, 0x1f83_d9ab,
    0x5be0_cd19,
  ]

  /// The digest of `bytes`.
  package static func hash(_ bytes: [UInt8]) -> [UInt8] {
    bigEndian(digesting: padded(bytes), from: initial, settee_sha256_blocks)
  }

  /// The state `blocks` leaves after digesting `message` (whole 64-byte blocks) from
  /// `state`, as big-endian bytes.
  static func bigEndian(
    digesting message: [UInt8], from state: [UInt32],
    _ blocks: (UnsafeMutablePointer<UInt32>, UnsafePointer<UInt8>, Int) -> Void
  ) -> [UInt8] {
    let words = digested(message, from: state, blocks)
    return words.flatMap { word in
      [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: word >> UInt32($0)) }
    }
  }

  /// The state `blocks` leaves after digesting `message` (whole 64-byte blocks).
  static func digested(
    _ message: [UInt8], from state: [UInt32],
    _ blocks: (UnsafeMutablePointer<UInt32>, UnsafePointer<UInt8>, Int) -> Void
  ) -> [UInt32] {
    var state = state
    message.withUnsafeBufferPointer { buffer in
      state.withUnsafeMutableBufferPointer { words in
        blocks(words.baseAddress!, buffer.baseAddress!, buffer.count / 64)
      }
    }
    return state
  }

  /// HMAC-SHA-256 of `message` under `key`.
  package static func hmac(key: [UInt8], _ message: [UInt8]) -> [UInt8] {
    hmac(key: key, message, hash)
  }

  /// HMAC (RFC 2104) of `message` under `key` with `hash`, a digest of 64-byte blocks.
  static func hmac(key: [UInt8], _ message: [UInt8], _ hash: ([UInt8]) -> [UInt8]) -> [UInt8] {
    var key = key.count > 64 ? hash(key) : key
    key += [UInt8](repeating: 0, count: 64 - key.count)
    let inner = hash(key.map { $0 ^ 0x36 } + message)
    return hash(key.map { $0 ^ 0x5c } + inner)
  }

  /// `bytes` padded as SHA-256 and SHA-1 pad a message: `0x80`, zeros, and the length in
  /// bits as 8 big-endian bytes, to a multiple of 64 bytes.
  static func padded(_ bytes: [UInt8]) -> [UInt8] {
    var message = bytes
    let bitLength = UInt64(bytes.count) &* 8
    message.append(0x80)
    while message.count % 64 != 56 { message.append(0) }
    for shift in stride(from: 56, through: 0, by: -8) {
      message.append(UInt8(truncatingIfNeeded: bitLength >> UInt64(shift)))
    }
    return message
  }

  /// PBKDF2-HMAC-SHA-256: `length` bytes derived from `password` and `salt`. Each
  /// iteration digests two blocks from the key's precomputed inner and outer states.
  package static func pbkdf2(password: [UInt8], salt: [UInt8], iterations: Int, length: Int = 32)
    -> [UInt8]
  {
    pbkdf2(
      password: password, salt: salt, iterations: iterations, length: length,
      hash: hash, initial: initial, blocks: settee_sha256_blocks,
      iterate: settee_pbkdf2_sha256_iterate)
  }

  /// PBKDF2 (RFC 8018) with HMAC over `hash`, a digest of 64-byte blocks from `initial`
  /// by `blocks`: U(1) in Swift, the iterations after it by `iterate` (C, from the key's
  /// inner and outer states).
  static func pbkdf2(
    password: [UInt8], salt: [UInt8], iterations: Int, length: Int,
    hash: ([UInt8]) -> [UInt8], initial: [UInt32],
    blocks: (UnsafeMutablePointer<UInt32>, UnsafePointer<UInt8>, Int) -> Void,
    iterate: (
      UnsafePointer<UInt32>, UnsafePointer<UInt32>, UnsafeMutablePointer<UInt8>,
      UnsafeMutablePointer<UInt8>, UInt64
    ) -> Void
  ) -> [UInt8] {
    var key = password.count > 64 ? hash(password) : password
    key += [UInt8](repeating: 0, count: 64 - key.count)
    let inner = digested(key.map { $0 ^ 0x36 }, from: initial, blocks)
    let outer = digested(key.map { $0 ^ 0x5c }, from: initial, blocks)
    return pbkdf2Blocks(length: length) { index in
      var u = hmac(key: password, salt + index, hash)
      var result = u
      u.withUnsafeMutableBufferPointer { u in
        result.withUnsafeMutableBufferPointer { result in
          iterate(
            inner, outer, u.baseAddress!, result.baseAddress!, UInt64(max(1, iterations)))
        }
      }
      return result
    }
  }

  /// PBKDF2's outer loop (RFC 8018): the blocks `block(i)` for `i` = 1, 2, … (given as 4
  /// big-endian bytes) joined and cut to `length` bytes.
  static func pbkdf2Blocks(length: Int, _ block: ([UInt8]) -> [UInt8]) -> [UInt8] {
    var derived: [UInt8] = []
    var blockIndex: UInt32 = 1
    while derived.count < length {
      derived += block([24, 16, 8, 0].map { UInt8(truncatingIfNeeded: blockIndex >> UInt32($0)) })
      blockIndex += 1
    }
    return Array(derived.prefix(length))
  }

  /// Equal byte strings, compared in time that does not depend on where they differ.
  package static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
    guard a.count == b.count else { return false }
    var difference: UInt8 = 0
    for i in 0..<a.count { difference |= a[i] ^ b[i] }
    return difference == 0
  }
}

extension Array where Element == UInt8 {
  /// Lowercase hexadecimal.
  package var hex: String { Hex.string(ofDigest: self) }

  /// Bytes from hexadecimal, or `nil`.
  package init?(hex: String) {
    let digits = Array(hex.utf8)
    guard digits.count % 2 == 0 else { return nil }
    var bytes: [UInt8] = []
    bytes.reserveCapacity(digits.count / 2)
    var index = 0
    while index < digits.count {
      guard
        let byte = UInt8(String(decoding: digits[index..<(index + 2)], as: UTF8.self), radix: 16)
      else { return nil }
      bytes.append(byte)
      index += 2
    }
    self = bytes
  }
}

/// SHA-1 (FIPS 180-4) and PBKDF2-HMAC-SHA-1 (RFC 8018), only to check the password hashes
/// CouchDB wrote before 3.4 (`pbkdf2_prf` `sha`, and the `simple` scheme's
/// `password_sha`): user documents replicated from such a CouchDB log in here. Nothing new
/// is hashed with it. Tested against RFC 3174's and RFC 6070's vectors and Python's
/// `hashlib` on random inputs.
package enum SHA1 {
  /// The five words a digest starts from.
  static let initial: [UInt32] = [0x6745_2301, 0xefcd_ab89, 0x98ba_dcfe, 0x1032_5476, 0xc3d2_e1f0]

  /// The digest of `bytes`.
  package static func hash(_ bytes: [UInt8]) -> [UInt8] {
    SHA256.bigEndian(digesting: SHA256.padded(bytes), from: initial, settee_sha1_blocks)
  }

  /// HMAC-SHA-1 of `message` under `key`.
  package static func hmac(key: [UInt8], _ message: [UInt8]) -> [UInt8] {
    SHA256.hmac(key: key, message, hash)
  }

  /// PBKDF2-HMAC-SHA-1: `length` bytes derived from `password` and `salt`.
  package static func pbkdf2(password: [UInt8], salt: [UInt8], iterations: Int, length: Int = 20)
    -> [UInt8]
  {
    SHA256.pbkdf2(
      password: password, salt: salt, iterations: iterations, length: length,
      hash: hash, initial: initial, blocks: settee_sha1_blocks,
      iterate: settee_pbkdf2_sha1_iterate)
  }
}
