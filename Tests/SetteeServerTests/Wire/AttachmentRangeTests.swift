import Foundation
import Settee
import SetteeCore
import SetteeTestSupport
import Testing

/// Byte ranges of attachments, as CouchDB 3.5 serves them (issue 55, item 8): an
/// attachment stored as its bytes says `Accept-Ranges: bytes` and answers one range with
/// a `206`, a range past its end with a `416`; one stored gzip-encoded (a compressible
/// type) says `none` and is answered whole.
@Suite("settee serve: attachment byte ranges, as CouchDB 3.5")
struct AttachmentRangeTests {
  let directory = TemporaryDirectory()

  @Test func rangesOfStoredBytes() async throws {
    let server = try await ServerProcess(db: directory.path("ranges.db"))
    try await server.request("PUT", "/db")
    // Past one stored chunk (256 KiB), so that a range starts in the second.
    let bytes = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 / 256) }
    let put = try await server.request(
      "PUT", "/db/a/blob.bin", body: bytes, headers: ["Content-Type": "application/octet-stream"])
    #expect(put.status == 201, "\(put.text)")
    let table: [(range: String?, status: Int, slice: Range<Int>?, contentRange: String?)] = [
      (nil, 200, 0..<300_000, nil),
      ("bytes=5-", 206, 5..<300_000, "bytes 5-299999/300000"),
      ("bytes=0-9", 206, 0..<10, "bytes 0-9/300000"),
      ("bytes=262140-262150", 206, 262_140..<262_151, "bytes 262140-262150/300000"),
      ("bytes=-5", 206, 299_995..<300_000, "bytes 299995-299999/300000"),
      ("bytes=299990-400000", 206, 299_990..<300_000, "bytes 299990-299999/300000"),
      ("bytes=300000-", 416, nil, nil),
      // Several ranges, or a malformed one: the whole.
      ("bytes=0-1,5-6", 200, 0..<300_000, nil),
      ("bytes=9-2", 200, 0..<300_000, nil),
      ("items=0-1", 200, 0..<300_000, nil),
    ]
    for row in table {
      let answer = try await server.request(
        "GET", "/db/a/blob.bin", headers: row.range.map { ["Range": $0] } ?? [:])
      #expect(answer.status == row.status, "\(row.range ?? "none"): \(answer.status)")
      if row.status != 416 { #expect(answer.headers["accept-ranges"] == "bytes") }
      #expect(answer.headers["content-range"] == row.contentRange, "\(row.range ?? "none")")
      if let slice = row.slice {
        #expect(answer.body == Array(bytes[slice]), "\(row.range ?? "none")")
      } else {
        #expect(answer.error == "requested_range_not_satisfiable", "\(answer.text)")
      }
    }
    // HEAD tells the length.
    let head = try await server.request("HEAD", "/db/a/blob.bin")
    #expect(head.headers["content-length"] == "300000")
  }

  @Test func compressedAttachmentsAreAnsweredWhole() async throws {
    let server = try await ServerProcess(db: directory.path("whole.db"))
    try await server.request("PUT", "/db")
    let text = Array(String(repeating: "settee ", count: 100).utf8)
    try await server.request(
      "PUT", "/db/t/notes.txt", body: text, headers: ["Content-Type": "text/plain"])
    let answer = try await server.request(
      "GET", "/db/t/notes.txt", headers: ["Range": "bytes=0-9"])
    #expect(answer.status == 200 && answer.body == text)
    #expect(answer.headers["accept-ranges"] == "none")
  }
}
