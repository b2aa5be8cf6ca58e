import CSetteeDigest

/// MD5 (RFC 1321), for what CouchDB's formats digest with it: revision ids, index names and
/// view versions. Not for security, which MD5 has none of. Settee's own, rather than
/// swift-crypto's `Insecure.MD5`: that package built BoringSSL for this alone (443 of a
/// clean build's 746 units). Its block function is C (`CSetteeDigest`), which a debug build
/// runs many times faster than Swift. Tested against RFC 1321's vectors and Python's `hashlib`.
package struct MD5 {
  private var state: [UInt32] = [0x6745_2301, 0xefcd_ab89, 0x98ba_dcfe, 0x1032_5476]
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
      pending.withUnsafeBytes { blocks($0.baseAddress!, count: 1) }
      pending.removeAll(keepingCapacity: true)
    }
    let whole = (bytes.count - offset) / 64
    if whole > 0 {
      blocks(bytes.baseAddress! + offset, count: whole)
      offset += whole * 64
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
    for word in state {
      for shift in stride(from: 0, to: 32, by: 8) {
        digest.append(UInt8(truncatingIfNeeded: word >> shift))
      }
    }
    return digest
  }
}

extension MD5 {
  /// Digests `count` 64-byte blocks at `bytes` (in C: `CSetteeDigest`).
  private mutating func blocks(_ bytes: UnsafeRawPointer, count: Int) {
    state.withUnsafeMutableBufferPointer { state in
      settee_md5_blocks(state.baseAddress!, bytes.assumingMemoryBound(to: UInt8.self), count)
    }
  }
}
