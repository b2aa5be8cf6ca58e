import Testing

@testable import SetteeCore

/// Settee's MD5 gives what RFC 1321 and every other implementation give: revision ids,
/// index names and view versions depend on it byte for byte.
@Suite("MD5")
struct MD5Tests {
  func hex(_ digest: [UInt8]) -> String {
    digest.map {
      String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16)
    }
    .joined()
  }

  /// RFC 1321, appendix A.5.
  @Test(arguments: [
    ("", "d41d8cd98f00b204e9800998ecf8427e"),
    ("a", "0cc175b9c0f1b6a831c399e269772661"),
    ("abc", "900150983cd24fb0d6963f7d28e17f72"),
    ("message digest", "f96b697d7cb7938d525a2f31aaf161d0"),
    ("abcdefghijklmnopqrstuvwxyz", "c3fcd3d76192e4007dfb496cca67e13b"),
    (
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
      "d174ab98d277d9f5a5611c2c9f419d9f"
    ),
    (
      "12345678901234567890123456789012345678901234567890123456789012345678901234567890",
      "57edf4a22be3c955ac49da2e2107b67a"
    ),
  ])
  func theRFCsVectors(_ text: String, _ digest: String) {
    #expect(hex(MD5.hash(Array(text.utf8))) == digest)
  }

  /// Lengths around the block and padding boundaries, against Python's `hashlib` (bytes
  /// `(i * 31 + 7) & 0xFF`), whole and in three updates.
  @Test(arguments: [
    (0, "d41d8cd98f00b204e9800998ecf8427e"), (1, "89e74e640b8c46257a29de0616794d5d"),
    (3, "3b704fb2660febf62921a0caaa8de56b"), (55, "c9e512626618c9980ef21a96597af94c"),
    (56, "ecde7caa08e9f5657c863df107cac60a"), (57, "b17b1a018dd6a4d1edda8aca15f17846"),
    (63, "2f0301069e1c40af7f6c8f843b1b13f2"), (64, "b6bf87c24b1bc334e2541387a92b981b"),
    (65, "f168246f08b6134d66bd2a10343fa9f1"), (119, "d5dc3d8264de3aa24dee105910ee27fe"),
    (120, "bcc139b3848923904860d1eefd6e5923"), (127, "27670172396247fa5f68637f13f8933d"),
    (128, "3e85b70ffc8df5c735ecf2a8f14f1bee"), (129, "e45ecac9930fe93de302f98ba673ba36"),
    (1000, "2b1e78d5765de9e10495a01412a1cf22"), (100_000, "7354f16d06a013232daa23cfa7a092df"),
  ])
  func lengthsAroundTheBlocks(_ length: Int, _ digest: String) {
    let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
    #expect(hex(MD5.hash(bytes)) == digest)
    var md5 = MD5()
    let (first, second) = (length / 3, 2 * length / 3)
    for part in [bytes[..<first], bytes[first..<second], bytes[second...]] {
      part.withUnsafeBytes { md5.update($0) }
    }
    #expect(hex(md5.finalize()) == digest)
  }

  /// A revision id made before and after the change (CouchDB's rule: the parent, the
  /// deletion flag and the body, digested).
  @Test func revisionIDsAreUnchanged() throws {
    // Made by swift-crypto's MD5 before, for the bodies `settee put` stores.
    let first = RevisionID.next(after: nil, deleted: false, body: Array(#"{"bar":"baz"}"#.utf8))
    #expect(first.description == "1-14d060757e821d173ee859f4c7db7a2e")
    let other = RevisionID.next(
      after: nil, deleted: false, body: Array(#"{"x":1,"tags":["x"]}"#.utf8))
    #expect(other.description == "1-efae6fcaa723f7273ee4506ab1be7e8a")
    let second = RevisionID.next(after: first, deleted: true, body: [])
    #expect(second.generation == 2 && second != first)
  }
}
