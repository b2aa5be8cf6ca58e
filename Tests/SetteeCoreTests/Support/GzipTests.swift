import Foundation
import SetteeCore
import Testing

/// gzip through zlib: what CouchDB sends decodes to what it stands for, whole or a slice at
/// a time, and data that is not gzip, ends early or decodes past a limit is refused.
@Suite("Gzip")
struct GzipTests {
  /// The 145 bytes a real CouchDB 3.5.0 sent for a 9,216-byte text attachment in an
  /// `open_revs` answer (`../shared/couchdb-wire/probes__couchdb.jsonl`, exchange 8).
  static let couchDBText = Data(
    base64Encoded:
      "H4sIAAAAAAAAA+3MwQ3CMBBFwTtV/AIQ4kwbqcA4S2IgNiwbElI9Ej1we+eRprMIMy3FTW65eV/qsFfYGkoRKY+T1dDxpBhNz7nkm87elqpLW3Wdp8dL7W3+43vaPurbcNh1tLS0tLS0tLS0tLS0tLS0tLS0tLS0tLS0tLS0tLS0tLS0tLT/b79y6AbXACQAAA=="
  )!

  @Test func whatCouchDBSentDecodes() throws {
    let line = "Settee wire recording, text attachment 0: the quick brown fox jumps over the lazy dog.\n"
    let decoded = try Gzip.decode(Array(Self.couchDBText))
    #expect(decoded.count == 9216)
    #expect(decoded == Array(String(repeating: line, count: 9216 / line.utf8.count).utf8)
      + Array(line.utf8.prefix(9216 % line.utf8.count)))
    #expect(try Gzip.decodedLength(of: Array(Self.couchDBText)) == 9216)
  }

  /// zlib's encoder is the reference: random bytes of random lengths, encoded and decoded
  /// whole and in random slices, come back as they were.
  @Test(arguments: [1, 2, 3, 4, 5, 6, 7, 8])
  func randomBytesRoundTrip(seed: UInt64) throws {
    var random = SplitMix64(seed: seed)
    let count = Int(random.next() % 300_000)
    // Half random, half repetitive: both incompressible and highly compressible runs.
    let bytes = (0..<count).map { index in
      index % 2000 < 1000
        ? UInt8(truncatingIfNeeded: random.next()) : UInt8(truncatingIfNeeded: index / 2000)
    }
    let encoded = Gzip.encode(bytes, level: Int32(random.next() % 10))
    #expect(try Gzip.decode(encoded) == bytes)
    let decoder = try GzipDecoder()
    var out: [UInt8] = []
    var offset = 0
    while offset < encoded.count {
      let size = 1 + Int(random.next() % 5000)
      out += try decoder.decode(Array(encoded[offset..<min(encoded.count, offset + size)]))
      offset += size
    }
    out += try decoder.finish()
    #expect(out == bytes)
  }

  @Test func membersOneAfterAnotherDecodeAsTheirConcatenation() throws {
    let joined = Gzip.encode(Array("hello, ".utf8)) + Gzip.encode(Array("world".utf8))
    #expect(try Gzip.decode(joined) == Array("hello, world".utf8))
  }

  @Test(arguments: [
    ("not gzip", Array("hello".utf8)),
    ("empty", []),
    ("cut short", Array(Gzip.encode(Array(repeating: 65, count: 10_000)).dropLast(9))),
    ("damaged", Array(Gzip.encode(Array("hello".utf8)).enumerated().map { $0 == 12 ? ~$1 : $1 })),
  ] as [(String, [UInt8])])
  func badDataIsRefused(_ name: String, _ bytes: [UInt8]) {
    #expect(throws: GzipError.self, "\(name)") { try Gzip.decode(bytes) }
  }

  @Test func aLimitStopsABomb() throws {
    let bomb = Gzip.encode([UInt8](repeating: 0, count: 5_000_000), level: 9)
    #expect(bomb.count < 10_000)
    #expect(throws: GzipError.self) { try Gzip.decode(bomb, limit: 1_000_000) }
    #expect(try Gzip.decodedLength(of: bomb, limit: 5_000_000) == 5_000_000)
  }
}
