import Foundation
import SetteeCore
import SetteeTestSupport
import Testing

/// Compressed request bodies, inflated by the server's `RequestDecompression` middleware
/// before any handler reads them: gzip as it arrives, `deflate` (zlib) whole within the
/// request limit, another coding `415`.
@Suite("Compressed request bodies")
struct RequestDecompressionTests {
  let directory = TemporaryDirectory()

  /// `bytes` as a zlib stream (what `Content-Encoding: deflate` means in HTTP): gzip's
  /// deflate data between zlib's header and its Adler-32.
  static func zlib(_ bytes: [UInt8]) -> [UInt8] {
    let gzip = Gzip.encode(bytes)
    var (a, b): (UInt32, UInt32) = (1, 0)
    for byte in bytes {
      a = (a + UInt32(byte)) % 65_521
      b = (b + a) % 65_521
    }
    let adler = b << 16 | a
    return [0x78, 0x9C] + gzip[10..<(gzip.count - 8)]
      + [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: adler >> $0) }
  }

  @Test func bodiesAreInflatedBeforeHandlers() async throws {
    let server = try await ServerProcess(
      db: directory.path("inflate.db"), ["--log-level", "none", "--max-request-size", "100000"])
    defer { server.stop() }
    _ = try await RawHTTP.send(WireMessage(method: "PUT", path: "/db"), to: server)
    let json = Array(#"{"text":"\#(String(repeating: "abc ", count: 1_000))"}"#.utf8)
    for (coding, body) in [("gzip", Gzip.encode(json)), ("deflate", Self.zlib(json))] {
      let put = try await RawHTTP.send(
        WireMessage(
          method: "PUT", path: "/db/\(coding)",
          headers: [("Content-Type", "application/json"), ("Content-Encoding", coding)],
          body: body), to: server)
      #expect(put.status == 201, "\(coding): \(String(decoding: put.body, as: UTF8.self))")
      let read = try await RawHTTP.send(
        WireMessage(method: "GET", path: "/db/\(coding)"), to: server)
      #expect(read.json?["text"]?.stringValue?.count == 4_000, "\(coding)")
    }
    // Past the request limit once inflated, either way: 413.
    let large = Array(#"{"text":"\#(String(repeating: "x", count: 200_000))"}"#.utf8)
    for (coding, body) in [("gzip", Gzip.encode(large)), ("deflate", Self.zlib(large))] {
      let put = try await RawHTTP.send(
        WireMessage(
          method: "PUT", path: "/db/large-\(coding)",
          headers: [("Content-Type", "application/json"), ("Content-Encoding", coding)],
          body: body), to: server)
      #expect(put.status == 413, "\(coding): \(String(decoding: put.body, as: UTF8.self))")
    }
    let broken = try await RawHTTP.send(
      WireMessage(
        method: "PUT", path: "/db/broken",
        headers: [("Content-Type", "application/json"), ("Content-Encoding", "gzip")],
        body: Array("not gzip".utf8)), to: server)
    #expect(broken.status == 400 && broken.json?["error"] == "bad_request")
    let unknown = try await RawHTTP.send(
      WireMessage(
        method: "PUT", path: "/db/unknown",
        headers: [("Content-Type", "application/json"), ("Content-Encoding", "br")],
        body: json), to: server)
    #expect(unknown.status == 415 && unknown.json?["error"] == "bad_content_type")
  }
}
