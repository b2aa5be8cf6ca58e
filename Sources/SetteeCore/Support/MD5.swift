/// MD5 (RFC 1321), for what CouchDB's formats digest with it: revision ids, index names and
/// view versions. Not for security, which MD5 has none of. Settee's own, rather than
/// swift-crypto's `Insecure.MD5`: that package built BoringSSL for this alone (443 of a
/// clean build's 746 units). Tested against RFC 1321's vectors and Python's `hashlib`.
package struct MD5 {
  private var state: (UInt32, UInt32, UInt32, UInt32) = (
    0x6745_2301, 0xefcd_ab89, 0x98ba_dcfe, 0x1032_5476
  )
  /// Bytes not yet digested (less than a block).
  private var pending: [UInt8] = []
  /// How many bytes were given in all.
  private var length: UInt64 = 0

  package init() { pending.reserveCapacity(64) }

  /// The digest of `bytes`.
  package static func hash(_ bytes: [UInt8]) -> [UInt8] {
    var md5 = MD5()
    bytes.withUnsafeBytes { md5.update($0) }
    return md5.finalize()
  }

  /// Digests more bytes.
  package mutating func update(_ bytes: UnsafeRawBufferPointer) {
    length &+= UInt64(bytes.count)
    var offset = 0
    if !pending.isEmpty {
      let taken = min(64 - pending.count, bytes.count)
      pending.append(contentsOf: bytes[0..<taken])
      offset = taken
      guard pending.count == 64 else { return }
      pending.withUnsafeBytes { block($0.baseAddress!) }
      pending.removeAll(keepingCapacity: true)
    }
    while bytes.count - offset >= 64 {
      block(bytes.baseAddress! + offset)
      offset += 64
    }
    if offset < bytes.count { pending.append(contentsOf: bytes[offset...]) }
  }

  /// The 16 bytes of the digest of everything given.
  package mutating func finalize() -> [UInt8] {
    let bits = length &* 8
    var tail: [UInt8] = [0x80]
    let padded = (pending.count + 1) % 64
    tail += [UInt8](repeating: 0, count: padded <= 56 ? 56 - padded : 120 - padded)
    for shift in stride(from: 0, to: 64, by: 8) {
      tail.append(UInt8(truncatingIfNeeded: bits >> shift))
    }
    let saved = length
    tail.withUnsafeBytes { update($0) }
    length = saved
    var digest: [UInt8] = []
    digest.reserveCapacity(16)
    for word in [state.0, state.1, state.2, state.3] {
      for shift in stride(from: 0, to: 32, by: 8) {
        digest.append(UInt8(truncatingIfNeeded: word >> shift))
      }
    }
    return digest
  }

  private static let shifts: [UInt32] = [
    7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22,
    5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20,
    4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23,
    6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21,
  ]

  /// floor(abs(sin(i + 1)) * 2^32), as RFC 1321 lists them.
  private static let constants: [UInt32] = [
    0xd76a_a478, 0xe8c7_b756, 0x2420_70db, 0xc1bd_ceee, 0xf57c_0faf, 0x4787_c62a, 0xa830_4613,
    0xfd46_9501, 0x6980_98d8, 0x8b44_f7af, 0xffff_5bb1, 0x895c_d7be, 0x6b90_1122, 0xfd98_7193,
    0xa679_438e, 0x49b4_0821, 0xf61e_2562, 0xc040_b340, 0x265e_5a51, 0xe9b6_c7aa, 0xd62f_105d,
    0x0244_1453, 0xd8a1_e681, 0xe7d3_fbc8, 0x21e1_cde6, 0xc337_07d6, 0xf4d5_0d87, 0x455a_14ed,
    0xa9e3_e905, 0xfcef_a3f8, 0x676f_02d9, 0x8d2a_4c8a, 0xfffa_3942, 0x8771_f681, 0x6d9d_6122,
    0xfde5_380c, 0xa4be_ea44, 0x4bde_cfa9, 0xf6bb_4b60, 0xbebf_bc70, 0x289b_7ec6, 0xeaa1_27fa,
    0xd4ef_3085, 0x0488_1d05, 0xd9d4_d039, 0xe6db_99e5, 0x1fa2_7cf8, 0xc4ac_5665, 0xf429_2244,
    0x432a_ff97, 0xab94_23a7, 0xfc93_a039, 0x655b_59c3, 0x8f0c_cc92, 0xffef_f47d, 0x8584_5dd1,
    0x6fa8_7e4f, 0xfe2c_e6e0, 0xa301_4314, 0x4e08_11a1, 0xf753_7e82, 0xbd3a_f235, 0x2ad7_d2bb,
    0xeb86_d391,
  ]

  /// Digests one 64-byte block.
  private mutating func block(_ bytes: UnsafeRawPointer) {
    var (a, b, c, d) = state
    for round in 0..<64 {
      var f: UInt32
      let g: Int
      switch round {
      case 0..<16:
        f = (b & c) | (~b & d)
        g = round
      case 16..<32:
        f = (d & b) | (~d & c)
        g = (5 &* round &+ 1) % 16
      case 32..<48:
        f = b ^ c ^ d
        g = (3 &* round &+ 5) % 16
      default:
        f = c ^ (b | ~d)
        g = (7 &* round) % 16
      }
      let word = UInt32(
        littleEndian: bytes.loadUnaligned(fromByteOffset: g * 4, as: UInt32.self))
      f = f &+ a &+ MD5.constants[round] &+ word
      a = d
      d = c
      c = b
      let shift = MD5.shifts[round]
      b = b &+ ((f << shift) | (f >> (32 - shift)))
    }
    state = (state.0 &+ a, state.1 &+ b, state.2 &+ c, state.3 &+ d)
  }
}
