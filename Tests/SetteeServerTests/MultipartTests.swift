import Foundation
import Settee
import SetteeCore
import SetteeReplication
import Testing

/// CouchDB's multipart bodies as the server and the replicator write and read them, and
/// which documents the replicator sends on their own as `multipart/related`.
@Suite("Multipart bodies")
struct MultipartTests {
  private static func base64(_ bytes: [UInt8]) -> JSON {
    .string(Data(bytes).base64EncodedString())
  }

  /// A document with `count` attachments of `size` bytes each (their data inline, base64),
  /// and a stub.
  private static func document(attachments count: Int, size: Int) -> JSONObject {
    var attachments = JSONObject()
    for number in 0..<count {
      let bytes = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ number) }
      attachments["file \"\(number)\".bin"] = [
        "content_type": "application/octet-stream", "revpos": 1, "data": base64(bytes),
      ]
    }
    attachments["kept.txt"] = [
      "stub": true, "content_type": "text/plain", "length": 3, "revpos": 1,
      "digest": "md5-abc",
    ]
    return [
      "_id": "doc", "_rev": "2-b", "n": 1,
      "_revisions": ["start": 2, "ids": ["b", "a"]],
      "_attachments": .object(attachments),
    ]
  }

  /// The attachments' data as bytes, by name (stubs as empty).
  private static func data(_ document: JSONObject) -> [String: [UInt8]] {
    var data: [String: [UInt8]] = [:]
    for member in document["_attachments"]?.objectValue ?? [:] {
      let text = member.value["data"]?.stringValue ?? ""
      data[member.key] = Array(Data(base64Encoded: text) ?? Data())
    }
    return data
  }

  @Test(arguments: [(1, 10), (3, 70_000), (10, 0)])
  func aRelatedDocumentReadsBackWhole(count: Int, size: Int) throws {
    let original = Self.document(attachments: count, size: size)
    let boundary = Multipart.boundary()
    let body = try #require(Multipart.related(original, boundary: boundary))
    // The bytes travel as they are: no base64 in the body.
    #expect(body.count < (count * size) + 4_000 + count * 200)
    let read = try Multipart.document(fromRelated: body, boundary: boundary)
    #expect(Self.data(read) == Self.data(original))
    #expect(read["_revisions"] == original["_revisions"] && read["n"] == 1)
    let stub = read["_attachments"]?["kept.txt"]
    #expect(stub?["stub"] == true && stub?["digest"] == "md5-abc")
    for number in 0..<count {
      let attachment = read["_attachments"]?["file \"\(number)\".bin"]
      #expect(attachment?["follows"] == nil && attachment?["length"] == .int(Int64(size)))
    }
  }

  @Test func aMixedAnswerGivesEachRevisionFoundAndLeavesOutTheMissing() throws {
    let plain: JSONObject = ["_id": "doc", "_rev": "1-a", "v": "plain"]
    let withFiles = Self.document(attachments: 2, size: 100)
    let boundary = Multipart.boundary()
    let body = Multipart.mixed(
      [["ok": .object(plain)], ["missing": "3-c"], ["ok": .object(withFiles)]],
      boundary: boundary)
    let documents = try Multipart.documents(fromMixed: body, boundary: boundary)
    #expect(documents.count == 2)
    #expect(documents.first == plain)
    #expect(Self.data(documents[1]) == Self.data(withFiles))
  }

  @Test(arguments: [
    "no delimiter at all",
    "--B\r\nContent-Type: application/json\r\n\r\nnot json\r\n--B--",
    "--B\r\nContent-Type: multipart/related\r\n\r\n{}\r\n--B--",
    "--B\r\nContent-Type: application/json\r\n\r\n[1]\r\n--B--",
    "--B\r\nContent-Type: application/json\r\n{\"a\":1}\r\n--B--",
  ])
  func aMalformedMixedAnswerIsRefused(body: String) {
    #expect(throws: (any Error).self) {
      try Multipart.documents(fromMixed: Array(body.utf8), boundary: "B")
    }
  }

  /// A name or content type holding CR or LF (which writes refuse, but a file may hold
  /// from before) never ends a part header: the part reads back as written.
  @Test func namesAndTypesNeverWriteHeadersOfTheirOwn() throws {
    let document: JSONObject = [
      "_id": "d",
      "_attachments": [
        "a\r\nX-Injected: 1\r\n\r\nBODY": [
          "content_type": "text/plain\r\nSet-Cookie: x=1", "data": Self.base64(Array("hi".utf8)),
        ]
      ],
    ]
    let body = try #require(Multipart.related(document, boundary: "b"))
    let text = String(decoding: body, as: UTF8.self)
    #expect(!text.contains("\r\nX-Injected"))
    #expect(!text.contains("\r\nSet-Cookie"))
    let parts = try Multipart.parts(body, boundary: "b")
    #expect(parts.count == 2)
    #expect(parts[1].headers["x-injected"] == nil && parts[1].headers["set-cookie"] == nil)
    #expect(parts[1].body == Array("hi".utf8))
  }

  @Test func anAttachmentThatFollowsWithoutItsPartIsRefused() {
    let body = """
      --B\r\nContent-Type: application/json\r\n\r\n{"_id":"a","_attachments":{"f":{"follows":true}}}\r\n--B--
      """
    #expect(throws: MultipartError.self) {
      try Multipart.document(fromRelated: Array(body.utf8), boundary: "B")
    }
  }

  /// A `multipart/related` body of `count` one-byte parts, each named in its
  /// `Content-Disposition`, with the lengths the document declares.
  private static func related(parts count: Int, declaring length: (Int) -> JSON = { _ in 1 })
    -> [UInt8]
  {
    var attachments: [(String, JSON)] = []
    for number in 0..<count {
      attachments.append(
        ("a\(number)", ["follows": true, "content_type": "text/plain", "length": length(number)]))
    }
    var body = Array("--B\r\nContent-Type: application/json\r\n\r\n".utf8)
    body += JSONWriter.bytes(["_id": "many", "_attachments": .object(JSONObject(attachments))])
    // Sent in reverse, so that every part is found by its name, not by its place.
    for number in (0..<count).reversed() {
      body += Array(
        "\r\n--B\r\nContent-Disposition: attachment; filename=\"a\(number)\"\r\n\r\nx".utf8)
    }
    return body + Array("\r\n--B--".utf8)
  }

  /// Issue 44: 1,000 one-byte parts took 0.2 s, 4,000 2.7 s and 10,000 15 s (each part was
  /// searched for in all the others). Four times the parts now take about four times as
  /// long, never the sixteen a quadratic parse takes (best of three, so that a busy machine
  /// does not decide).
  @Test func manyPartsCostTimeLinearInTheirNumber() throws {
    func seconds(_ count: Int) throws -> Double {
      let body = Self.related(parts: count)
      var best = Double.infinity
      for _ in 0..<3 {
        let start = ContinuousClock.now
        let document = try Multipart.document(fromRelated: body, boundary: "B")
        let elapsed = ContinuousClock.now - start
        #expect(document["_attachments"]?.objectValue?.count == count)
        #expect(document["_attachments"]?["a7"]?["data"] == Self.base64([UInt8(ascii: "x")]))
        best = min(
          best,
          Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
      }
      return best
    }
    let small = try seconds(2_500)
    let large = try seconds(10_000)
    #expect(large < small * 9, "2,500 parts: \(small) s, 10,000: \(large) s")
  }

  /// A part whose length is not the one its attachment declares is refused with CouchDB's
  /// words (it is how a truncated upload shows); no declared length, no check.
  @Test(arguments: [
    (JSON.int(5), "longer than expected"), (100, "shorter than expected"),
    (1e15, "shorter than expected"), (-1, "longer than expected"),
    ("11", "not an integer"), (5.5, "not an integer"),
  ])
  func aPartLongerOrShorterThanDeclaredIsRefused(_ length: JSON, _ reason: String) throws {
    func body(_ attachment: JSONObject) -> [UInt8] {
      Array("--B\r\nContent-Type: application/json\r\n\r\n".utf8)
        + JSONWriter.bytes(["_attachments": ["a": .object(attachment)]])
        + Array("\r\n--B\r\n\r\nhello world\r\n--B--".utf8)
    }
    #expect {
      try Multipart.document(
        fromRelated: body(["follows": true, "length": length]), boundary: "B")
    } throws: { ($0 as? MultipartError)?.reason.contains(reason) == true }
    for fitting: JSONObject in [
      ["follows": true, "length": 11], ["follows": true],
      // An encoded attachment declares its encoded length.
      ["follows": true, "length": 90, "encoding": "gzip", "encoded_length": 11],
    ] {
      let document = try Multipart.document(fromRelated: body(fitting), boundary: "B")
      #expect(document["_attachments"]?["a"]?["data"] == Self.base64(Array("hello world".utf8)))
    }
  }

  @Test(arguments: [
    // (attachments with data, bytes each, sent alone)
    (0, 0, false), (1, 10, false), (8, 100, false), (9, 100, true),
    (1, 64 * 1024, false), (1, 64 * 1024 + 3, true), (2, 200_000, true),
  ])
  func largeOrManyAttachmentsAreSentAlone(count: Int, size: Int, alone: Bool) throws {
    var document = Self.document(attachments: count, size: size)
    if count == 0 { document["_attachments"] = nil }
    let text = JSONWriter.bytes(.object(document))
    #expect((BulkDocument.object(document).sentAlone != nil) == alone)
    #expect((BulkDocument.text(text).sentAlone != nil) == alone)
    let prepared = try BulkDocument(text: text, limits: .default)
    #expect((prepared.sentAlone != nil) == alone)
  }

  @Test func onlyStubsOrTheNameInAStringAreNotAttachments() throws {
    var stubs = JSONObject()
    for number in 0..<20 {
      stubs["f\(number)"] = ["stub": true, "length": 1_000_000, "digest": "md5-x", "revpos": 1]
    }
    let document: JSONObject = ["_id": "a", "_attachments": .object(stubs)]
    #expect(BulkDocument.object(document).sentAlone == nil)
    let named = Array(#"{"_id":"a","note":"_attachments","x":"\"_attachments\""}"#.utf8)
    #expect(BulkDocument.text(named).sentAlone == nil)
  }

  /// Which documents of a batch read with stubs are read again with attachment data: those
  /// with a stub written after the newest revision the target holds of their history.
  @Test(arguments: [
    // (stubs' revpos, the target's revisions, bytes needed or nil)
    ([] as [Int], ["2-b"], nil as Int?), ([1, 2], ["2-b"], nil), ([3], ["2-b"], 100),
    ([1, 3], ["2-b"], 100), ([2], [], 100), ([2, 3], ["2-zz"], 200), ([1], ["1-a", "2-b"], nil),
  ])
  func attachmentDataIsReadAgainOnlyWhenTheTargetLacksIt(
    revpos: [Int], held: [String], bytes: Int?
  ) throws {
    var attachments = JSONObject()
    for (number, position) in revpos.enumerated() {
      attachments["f\(number)"] = [
        "stub": true, "length": 100, "revpos": .int(Int64(position)), "digest": "md5-x",
      ]
    }
    var document: JSONObject = [
      "_id": "doc", "_rev": "3-c", "_revisions": ["start": 3, "ids": ["c", "b", "a"]],
    ]
    if !revpos.isEmpty { document["_attachments"] = .object(attachments) }
    let since = try held.map { try RevisionID(parsing: $0) }
    for form in [BulkDocument.object(document), .text(JSONWriter.bytes(.object(document)))] {
      let needed = form.attachmentDataNeeded { $0 == "doc" ? since : [] }
      #expect(needed?.bytes == bytes)
      #expect(needed.map { $0.id == "doc" && $0.rev.description == "3-c" } ?? true)
    }
  }
}
