import Foundation
import SetteeServer
import Testing

/// The server's own SHA-256, HMAC and PBKDF2 against published vectors.
@Suite("SHA-256, HMAC-SHA-256 and PBKDF2 vectors")
struct CredentialsTests {
  @Test(arguments: [
    ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
    ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
    (
      "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
      "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
    ),
  ])
  func sha256(message: String, digest: String) {
    #expect(SHA256.hash(Array(message.utf8)).hex == digest)
  }

  @Test func sha256OfAMillionAs() {
    #expect(
      SHA256.hash([UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000)).hex
        == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
  }

  /// RFC 4231, test cases 1, 2 and 6 (a key longer than a block).
  @Test func hmac() {
    #expect(
      SHA256.hmac(key: [UInt8](repeating: 0x0b, count: 20), Array("Hi There".utf8)).hex
        == "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7")
    #expect(
      SHA256.hmac(key: Array("Jefe".utf8), Array("what do ya want for nothing?".utf8)).hex
        == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
    #expect(
      SHA256.hmac(
        key: [UInt8](repeating: 0xaa, count: 131),
        Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8)
      ).hex == "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54")
  }

  /// RFC 7914 section 11's PBKDF2-HMAC-SHA-256 vectors.
  @Test func pbkdf2() {
    #expect(
      SHA256.pbkdf2(
        password: Array("passwd".utf8), salt: Array("salt".utf8), iterations: 1, length: 64
      ).hex
        == "55ac046e56e3089fec1691c22544b605f94185216dde0465e68b9d57c20dacbc49ca9cccf179b645991664b39d77ef317c71b845b1e30bd509112041d3a19783"
    )
    #expect(
      SHA256.pbkdf2(
        password: Array("Password".utf8), salt: Array("NaCl".utf8), iterations: 80000, length: 64
      ).hex
        == "4ddcd8f60b98be21830cee5ef22701f9641a4418d04c0414aeff08876b34ab56a1d425a1225833549adb841b51c9b3176a272bdebba1d078478f62b397f33c8d"
    )
  }

  @Test func constantTimeEqual() {
    #expect(SHA256.constantTimeEqual([1, 2, 3], [1, 2, 3]))
    #expect(!SHA256.constantTimeEqual([1, 2, 3], [1, 2, 4]))
    #expect(!SHA256.constantTimeEqual([1, 2], [1, 2, 3]))
  }
}
