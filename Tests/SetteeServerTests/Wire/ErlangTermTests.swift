import Foundation
import SetteeCore
import SetteeTestSupport
import Testing

@testable import SetteeServer

/// `term_to_binary` as CouchDB's Erlang writes it, and the index names Mango derives from
/// it (issue 56: an unnamed index gets CouchDB's name).
@Suite("Erlang's term format and Mango's index names")
struct ErlangTermTests {
  /// Names CouchDB 3.5.0 gave unnamed indexes (the conformance recording, requests 304
  /// and 906).
  @Test(arguments: [
    (#"{"index": {"fields": ["name"]}, "ddoc": "mango-c", "type": "json"}"#,
     "7e7070ae9a407fc3705687d27d573409610c4966"),
    (#"{"index": {"fields": []}}"#, "16d64bc5aa5ac9a0662f02b45a7d70d4a6923ccc"),
  ])
  func namesAsCouchDBGivesThem(request: String, name: String) throws {
    let body = try #require(try JSONParser.parse(request).objectValue)
    #expect(ErlangTerm.mangoIndexName(body) == name)
  }

  /// Each kind of term, byte for byte as `erlang:term_to_binary/1` gives it.
  @Test(arguments: [
    (JSON.null, [131, 100, 0, 4] + Array("null".utf8)),
    (JSON.int(7), [131, 97, 7]),
    (JSON.int(-1), [131, 98, 255, 255, 255, 255]),
    (JSON.int(300), [131, 98, 0, 0, 1, 44]),
    // 2^32: SMALL_BIG_EXT, 5 bytes, positive, least significant first.
    (JSON.int(4_294_967_296), [131, 110, 5, 0, 0, 0, 0, 0, 1]),
    (JSON.int(-4_294_967_296), [131, 110, 5, 1, 0, 0, 0, 0, 1]),
    (JSON.largeInteger("18446744073709551616"), [131, 110, 9, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]),
    (JSON.double(1.5), [131, 70, 63, 248, 0, 0, 0, 0, 0, 0]),
    (JSON.string("ab"), [131, 109, 0, 0, 0, 2, 97, 98]),
    (JSON.array([]), [131, 106]),
    (JSON.array([1]), [131, 108, 0, 0, 0, 1, 97, 1, 106]),
    (JSON.object([:]), [131, 104, 1, 106]),
    (["a": true], [131, 104, 1, 108, 0, 0, 0, 1, 104, 2, 109, 0, 0, 0, 1, 97, 100, 0, 4] + Array("true".utf8) + [106]),
  ] as [(JSON, [UInt8])])
  func termsAsErlangWritesThem(json: JSON, bytes: [UInt8]) {
    #expect(ErlangTerm.bytes(ErlangTerm.Term(json)) == bytes, "\(json)")
  }
}
