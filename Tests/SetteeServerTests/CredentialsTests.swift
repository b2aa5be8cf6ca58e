import Foundation
import SetteeCore
import SetteeServer
import SetteeTestSupport
import Testing

/// The server's own SHA-256, SHA-1, HMAC and PBKDF2 against published vectors.
@Suite("SHA-256, SHA-1, HMAC and PBKDF2 vectors")
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

  /// RFC 3174's SHA-1 vectors, RFC 2202's HMAC-SHA-1 cases 1 and 2, RFC 6070's
  /// PBKDF2-HMAC-SHA-1.
  @Test func sha1() {
    #expect(SHA1.hash([]).hex == "da39a3ee5e6b4b0d3255bfef95601890afd80709")
    #expect(SHA1.hash(Array("abc".utf8)).hex == "a9993e364706816aba3e25717850c26c9cd0d89d")
    #expect(
      SHA1.hash(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)).hex
        == "84983e441c3bd26ebaae4aa1f95129e5e54670f1")
    #expect(
      SHA1.hash([UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000)).hex
        == "34aa973cd4c4daa4f61eeb2bdbad27316534016f")
    #expect(
      SHA1.hmac(key: [UInt8](repeating: 0x0b, count: 20), Array("Hi There".utf8)).hex
        == "b617318655057264e28bc0b6fb378c8ef146be00")
    #expect(
      SHA1.hmac(key: Array("Jefe".utf8), Array("what do ya want for nothing?".utf8)).hex
        == "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79")
    for (iterations, key) in [
      (1, "0c60c80f961f0e71f3a9b524af6012062fe037a6"),
      (2, "ea6c014dc72d6f8ccd1ed92ace1d41f0d8de8957"),
      (4096, "4b007901b765489abead49d926f721d065a429c1"),
    ] {
      #expect(
        SHA1.pbkdf2(
          password: Array("password".utf8), salt: Array("salt".utf8), iterations: iterations
        )
        .hex == key)
    }
  }

  @Test func constantTimeEqual() {
    #expect(SHA256.constantTimeEqual([1, 2, 3], [1, 2, 3]))
    #expect(!SHA256.constantTimeEqual([1, 2, 3], [1, 2, 4]))
    #expect(!SHA256.constantTimeEqual([1, 2], [1, 2, 3]))
  }

  /// "Compared in time that does not depend on where they differ", measured: 64 KiB inputs
  /// that are equal, differ in the first byte, or differ in the last. Each case's fastest
  /// batch (the cases interleaved, so the machine's load falls on all alike) must be within
  /// 1.5× of the others'. The same measurement of a comparison that stops at the first
  /// difference must tell the first byte from the last (it does by 100× and more), so the
  /// measurement can see what it looks for.
  @Test func constantTimeEqualTakesAsLongWhereverTheInputsDiffer() {
    let size = 1 << 16
    let base = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31) }
    var first = base
    first[0] ^= 1
    var last = base
    last[size - 1] ^= 1
    let cases = [base, first, last]

    func earlyExit(_ a: [UInt8], _ b: [UInt8]) -> Bool {
      guard a.count == b.count else { return false }
      for index in a.indices where a[index] != b[index] { return false }
      return true
    }

    func fastest(_ compare: ([UInt8], [UInt8]) -> Bool) -> [Duration] {
      var best = [Duration](repeating: .seconds(1_000), count: cases.count)
      let clock = ContinuousClock()
      var outcomes = 0
      for _ in 0..<15 {
        for (index, other) in cases.enumerated() {
          let start = clock.now
          for _ in 0..<4 where compare(base, other) { outcomes += 1 }
          best[index] = min(best[index], clock.now - start)
        }
      }
      // Equal inputs compare equal, the others not: 15 rounds of 4.
      #expect(outcomes == 60)
      return best
    }

    let constant = fastest(SHA256.constantTimeEqual)
    let spread = constant.max()! / constant.min()!
    #expect(spread < 1.5, "equal, first byte, last byte: \(constant)")

    let stopping = fastest(earlyExit)
    #expect(stopping[2] / stopping[1] > 10, "first byte, last byte: \(stopping)")
  }
}

/// The server's own SHA-256, HMAC and PBKDF2 against a reference on random inputs (issue
/// 45): Python's `hashlib` and `hmac`, which call OpenSSL. Lengths cluster around SHA-256's
/// block and padding boundaries, keys around HMAC's block size, and PBKDF2 asks for more
/// than one block of output.
@Suite("SHA-256, HMAC-SHA-256 and PBKDF2 against Python's hashlib")
struct CredentialsReferenceTests {
  static let script = """
    import sys, json, hashlib, hmac
    for line in sys.stdin:
        case = json.loads(line)
        op = case["op"]
        if op == "sha256":
            out = hashlib.sha256(bytes.fromhex(case["m"])).hexdigest()
        elif op == "sha1":
            out = hashlib.sha1(bytes.fromhex(case["m"])).hexdigest()
        elif op == "hmac":
            out = hmac.new(bytes.fromhex(case["k"]), bytes.fromhex(case["m"]), case.get("h", "sha256")).hexdigest()
        else:
            out = hashlib.pbkdf2_hmac(case.get("h", "sha256"), bytes.fromhex(case["p"]), bytes.fromhex(case["s"]), case["i"], case["l"]).hex()
        print(out)
    """

  /// Runs the reference over `cases` (one JSON object a line), one hex digest a line back.
  static func reference(_ cases: [JSON]) throws -> [String] {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["python3", "-c", script]
    let input = ChildPipe()
    let output = ChildPipe()
    try process.run(output: output, errors: nil, input: input)
    let text = cases.map { JSONWriter.string($0) }.joined(separator: "\n") + "\n"
    // Written from another thread: the reference's answers could fill the pipe first.
    let writer = Thread {
      input.fileHandleForWriting.writeAllBytes(Array(text.utf8))
      try? input.fileHandleForWriting.close()
    }
    writer.start()
    let answer = output.fileHandleForReading.readAllBytes()
    process.waitUntilExit()
    #expect(process.terminationStatus == 0, "python3 failed: is it installed?")
    return String(decoding: answer, as: UTF8.self).split(separator: "\n").map(String.init)
  }

  static func bytes(_ count: Int, _ random: inout SplitMix64) -> [UInt8] {
    (0..<count).map { _ in UInt8.random(in: 0...255, using: &random) }
  }

  @Test func agreesWithTheReferenceOnRandomInputs() throws {
    let seed = UInt64(Date().timeIntervalSince1970)
    var random = SplitMix64(seed: seed)
    let lengths = [0, 1, 3, 31, 32, 55, 56, 57, 63, 64, 65, 119, 120, 127, 128, 129, 1_000]
    var cases: [JSON] = []
    var ours: [String] = []
    for _ in 0..<150 {
      let message = Self.bytes(
        Bool.random(using: &random)
          ? lengths.randomElement(using: &random)! : Int.random(in: 0...600, using: &random),
        &random)
      cases.append(["op": "sha256", "m": .string(message.hex)])
      ours.append(SHA256.hash(message).hex)
    }
    for _ in 0..<150 {
      let key = Self.bytes(
        [0, 1, 32, 63, 64, 65, 100, 200].randomElement(using: &random)!, &random)
      let message = Self.bytes(Int.random(in: 0...300, using: &random), &random)
      cases.append(["op": "hmac", "k": .string(key.hex), "m": .string(message.hex)])
      ours.append(SHA256.hmac(key: key, message).hex)
    }
    for _ in 0..<40 {
      let password = Self.bytes(Int.random(in: 0...100, using: &random), &random)
      let salt = Self.bytes(Int.random(in: 0...40, using: &random), &random)
      let iterations = Int.random(in: 1...300, using: &random)
      let length = Int.random(in: 1...100, using: &random)
      cases.append([
        "op": "pbkdf2", "p": .string(password.hex), "s": .string(salt.hex),
        "i": .int(Int64(iterations)), "l": .int(Int64(length)),
      ])
      ours.append(
        SHA256.pbkdf2(password: password, salt: salt, iterations: iterations, length: length).hex)
    }
    // SHA-1, for the hashes CouchDB wrote before 3.4.
    for _ in 0..<100 {
      let message = Self.bytes(
        Bool.random(using: &random)
          ? lengths.randomElement(using: &random)! : Int.random(in: 0...600, using: &random),
        &random)
      cases.append(["op": "sha1", "m": .string(message.hex)])
      ours.append(SHA1.hash(message).hex)
    }
    for _ in 0..<60 {
      let key = Self.bytes(
        [0, 1, 20, 63, 64, 65, 100].randomElement(using: &random)!, &random)
      let message = Self.bytes(Int.random(in: 0...300, using: &random), &random)
      cases.append(["op": "hmac", "h": "sha1", "k": .string(key.hex), "m": .string(message.hex)])
      ours.append(SHA1.hmac(key: key, message).hex)
    }
    for _ in 0..<30 {
      let password = Self.bytes(Int.random(in: 0...100, using: &random), &random)
      let salt = Self.bytes(Int.random(in: 0...40, using: &random), &random)
      let iterations = Int.random(in: 1...100, using: &random)
      let length = Int.random(in: 1...60, using: &random)
      cases.append([
        "op": "pbkdf2", "h": "sha1", "p": .string(password.hex), "s": .string(salt.hex),
        "i": .int(Int64(iterations)), "l": .int(Int64(length)),
      ])
      ours.append(
        SHA1.pbkdf2(password: password, salt: salt, iterations: iterations, length: length).hex)
    }
    let theirs = try Self.reference(cases)
    #expect(theirs.count == cases.count, "the reference answered \(theirs.count) of \(cases.count)")
    for (index, (mine, reference)) in zip(ours, theirs).enumerated() where mine != reference {
      Issue.record(
        "\(JSONWriter.string(cases[index])): \(mine), the reference \(reference) (seed \(seed))")
    }
  }
}
