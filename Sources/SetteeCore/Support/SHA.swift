import Foundation

/// SHA-256 (FIPS 180-4), HMAC-SHA-256 (RFC 2104) and PBKDF2-HMAC-SHA-256 (RFC 8018), for
/// the server's admin passwords and session cookies, and for naming what compiled
/// JavaScript is shared (a design document's body). Settee's own for the reason MD5 is
/// (SetteeCore's `MD5`): swift-crypto compiles BoringSSL, most of a clean build, for these
/// few functions. Tested against FIPS 180-4's, RFC 4231's and RFC 7914's vectors.
package enum SHA256 {
  private static let k: [UInt32] = [
    0x428a_2f98, 0x7137_4491, 0xb5c0_fbcf, 0xe9b5_dba5, 0x3956_c25b, 0x59f1_11f1, 0x923f_82a4,
    0xab1c_5ed5, 0xd807_aa98, 0x1283_5b01, 0x2431_85be, 0x550c_7dc3, 0x72be_5d74, 0x80de_b1fe,
    0x9bdc_06a7, 0xc19b_f174, 0xe49b_69c1, 0xefbe_4786, 0x0fc1_9dc6, 0x240c_a1cc, 0x2de9_2c6f,
    0x4a74_84aa, 0x5cb0_a9dc, 0x76f9_88da, 0x983e_5152, 0xa831_c66d, 0xb003_27c8, 0xbf59_7fc7,
    0xc6e0_0bf3, 0xd5a7_9147, 0x06ca_6351, 0x1429_2967, 0x27b7_0a85, 0x2e1b_2138, 0x4d2c_6dfc,
    0x5338_0d13, 0x650a_7354, 0x766a_0abb, 0x81c2_c92e, 0x9272_2c85, 0xa2bf_e8a1, 0xa81a_664b,
    0xc24b_8b70, 0xc76c_51a3, 0xd192_e819, 0xd699_0624, 0xf40e_3585, 0x106a_a070, 0x19a4_c116,
    0x1e37_6c08, 0x2748_774c, 0x34b0_bcb5, 0x391c_0cb3, 0x4ed8_aa4a, 0x5b9c_ca4f, 0x682e_6ff3,
    0x748f_82ee, 0x78a5_636f, 0x84c8_7814, 0x8cc7_0208, 0x90be_fffa, 0xa450_6ceb, 0xbef9_a3f7,
    0xc671_78f2,
  ]

  /// The eight words of a digest in progress.
  typealias State = (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32)

  static let initial: State = (
    0x6a09_e667, 0xbb67_ae85, 0x3c6e_f372, 0xa54f_f53a, 0x510e_527f, 0x9b05_688c, 0x1f83_d9ab,
    0x5be0_cd19
  )

  /// The digest of `bytes`.
  package static func hash(_ bytes: [UInt8]) -> [UInt8] {
    let message = padded(bytes)
    var state = initial
    var w = [UInt32](repeating: 0, count: 64)
    message.withUnsafeBufferPointer { buffer in
      w.withUnsafeMutableBufferPointer { schedule in
        for blockStart in stride(from: 0, to: buffer.count, by: 64) {
          compress(&state, buffer.baseAddress! + blockStart, schedule.baseAddress!)
        }
      }
    }
    return digest(state)
  }

  static func digest(_ state: State) -> [UInt8] {
    let words = [state.0, state.1, state.2, state.3, state.4, state.5, state.6, state.7]
    return words.flatMap { word in
      [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: word >> UInt32($0)) }
    }
  }

  /// Digests one 64-byte block into `state` (`w`: room for 64 words).
  static func compress(
    _ state: inout State, _ block: UnsafePointer<UInt8>, _ w: UnsafeMutablePointer<UInt32>
  ) {
    for t in 0..<16 {
      w[t] =
        UInt32(block[t * 4]) << 24 | UInt32(block[t * 4 + 1]) << 16 | UInt32(block[t * 4 + 2]) << 8
        | UInt32(block[t * 4 + 3])
    }
    for t in 16..<64 {
      let s0 = rotate(w[t - 15], 7) ^ rotate(w[t - 15], 18) ^ (w[t - 15] >> 3)
      let s1 = rotate(w[t - 2], 17) ^ rotate(w[t - 2], 19) ^ (w[t - 2] >> 10)
      w[t] = w[t - 16] &+ s0 &+ w[t - 7] &+ s1
    }
    var (a, b, c, d, e, f, g, h) = state
    k.withUnsafeBufferPointer { k in
      for t in 0..<64 {
        let s1 = rotate(e, 6) ^ rotate(e, 11) ^ rotate(e, 25)
        let choice = (e & f) ^ (~e & g)
        let temp1 = h &+ s1 &+ choice &+ k[t] &+ w[t]
        let s0 = rotate(a, 2) ^ rotate(a, 13) ^ rotate(a, 22)
        let majority = (a & b) ^ (a & c) ^ (b & c)
        let temp2 = s0 &+ majority
        (h, g, f, e, d, c, b, a) = (g, f, e, d &+ temp1, c, b, a, temp1 &+ temp2)
      }
    }
    state = (
      state.0 &+ a, state.1 &+ b, state.2 &+ c, state.3 &+ d, state.4 &+ e, state.5 &+ f,
      state.6 &+ g, state.7 &+ h
    )
  }

  private static func rotate(_ value: UInt32, _ count: UInt32) -> UInt32 {
    (value >> count) | (value << (32 - count))
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
    var key = password.count > 64 ? hash(password) : password
    key += [UInt8](repeating: 0, count: 64 - key.count)
    var w = [UInt32](repeating: 0, count: 64)
    var innerStart = initial
    var outerStart = initial
    // One block: 32 bytes of digest, 0x80, zeros, and the length of 64 + 32 bytes in bits.
    var block = [UInt8](repeating: 0, count: 64)
    block[32] = 0x80
    block[62] = 0x03
    w.withUnsafeMutableBufferPointer { schedule in
      key.map { $0 ^ 0x36 }.withUnsafeBufferPointer {
        compress(&innerStart, $0.baseAddress!, schedule.baseAddress!)
      }
      key.map { $0 ^ 0x5c }.withUnsafeBufferPointer {
        compress(&outerStart, $0.baseAddress!, schedule.baseAddress!)
      }
    }
    return pbkdf2Blocks(length: length) { index in
      var u = hmac(key: password, salt + index)
      var result = u
      w.withUnsafeMutableBufferPointer { schedule in
        block.withUnsafeMutableBufferPointer { block in
          for _ in 1..<max(1, iterations) {
            // U(n) = HMAC(password, U(n-1)): inner digest of U, then outer of that.
            for i in 0..<32 { block[i] = u[i] }
            var inner = innerStart
            compress(&inner, UnsafePointer(block.baseAddress!), schedule.baseAddress!)
            write(inner, into: block.baseAddress!)
            var outer = outerStart
            compress(&outer, UnsafePointer(block.baseAddress!), schedule.baseAddress!)
            write(outer, into: block.baseAddress!)
            for i in 0..<32 {
              u[i] = block[i]
              result[i] ^= block[i]
            }
          }
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

  /// Writes a state's 32 bytes, big-endian, at `output`.
  private static func write(_ state: State, into output: UnsafeMutablePointer<UInt8>) {
    let words = [state.0, state.1, state.2, state.3, state.4, state.5, state.6, state.7]
    for (index, word) in words.enumerated() {
      output[index * 4] = UInt8(truncatingIfNeeded: word >> 24)
      output[index * 4 + 1] = UInt8(truncatingIfNeeded: word >> 16)
      output[index * 4 + 2] = UInt8(truncatingIfNeeded: word >> 8)
      output[index * 4 + 3] = UInt8(truncatingIfNeeded: word)
    }
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
  /// The digest of `bytes`.
  package static func hash(_ bytes: [UInt8]) -> [UInt8] {
    let message = SHA256.padded(bytes)
    var h: [UInt32] = [0x6745_2301, 0xefcd_ab89, 0x98ba_dcfe, 0x1032_5476, 0xc3d2_e1f0]
    var w = [UInt32](repeating: 0, count: 80)
    for blockStart in stride(from: 0, to: message.count, by: 64) {
      for t in 0..<16 {
        let i = blockStart + t * 4
        w[t] =
          UInt32(message[i]) << 24 | UInt32(message[i + 1]) << 16 | UInt32(message[i + 2]) << 8
          | UInt32(message[i + 3])
      }
      for t in 16..<80 { w[t] = rotate(w[t - 3] ^ w[t - 8] ^ w[t - 14] ^ w[t - 16], 1) }
      var (a, b, c, d, e) = (h[0], h[1], h[2], h[3], h[4])
      for t in 0..<80 {
        let (f, k): (UInt32, UInt32) =
          switch t {
          case 0..<20: ((b & c) | (~b & d), 0x5a82_7999)
          case 20..<40: (b ^ c ^ d, 0x6ed9_eba1)
          case 40..<60: ((b & c) | (b & d) | (c & d), 0x8f1b_bcdc)
          default: (b ^ c ^ d, 0xca62_c1d6)
          }
        let temp = rotate(a, 5) &+ f &+ e &+ k &+ w[t]
        (e, d, c, b, a) = (d, c, rotate(b, 30), a, temp)
      }
      h[0] &+= a
      h[1] &+= b
      h[2] &+= c
      h[3] &+= d
      h[4] &+= e
    }
    return h.flatMap { word in [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: word >> UInt32($0)) } }
  }

  private static func rotate(_ value: UInt32, _ count: UInt32) -> UInt32 {
    (value << count) | (value >> (32 - count))
  }

  /// HMAC-SHA-1 of `message` under `key`.
  package static func hmac(key: [UInt8], _ message: [UInt8]) -> [UInt8] {
    SHA256.hmac(key: key, message, hash)
  }

  /// PBKDF2-HMAC-SHA-1: `length` bytes derived from `password` and `salt`.
  package static func pbkdf2(password: [UInt8], salt: [UInt8], iterations: Int, length: Int = 20)
    -> [UInt8]
  {
    SHA256.pbkdf2Blocks(length: length) { index in
      var u = hmac(key: password, salt + index)
      var result = u
      for _ in 1..<max(1, iterations) {
        u = hmac(key: password, u)
        for i in 0..<result.count { result[i] ^= u[i] }
      }
      return result
    }
  }
}
