import Foundation
import Hummingbird
import HummingbirdTesting
import NIOCore
import Settee
import SetteeCore
import SetteeTestSupport
import Testing

@testable import SetteeReplication

/// A large document is asked for as `multipart/mixed`; a peer that answers `open_revs`
/// with JSON instead (older CouchDB proxies, PouchDB Server's express layer, a peer that
/// ignores `Accept`) still replicates it: its inline attachments are moved into the
/// spool's file, the document marks them as following, and a `missing` revision is left
/// out. Served by a small Hummingbird app on loopback, as any peer is.
@Suite("Large documents from a peer that answers JSON")
struct SpoolFallbackTests {
  static let big: [UInt8] = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 8) }

  /// The peer: `GET /db/doc` answers a JSON array, whatever `Accept` says; the `Accept`
  /// headers it saw are kept.
  static func peer(accepts: Locked<[String]>) -> some ApplicationProtocol {
    let router = Router()
    router.get("/db/doc") { request, _ -> Response in
      accepts.withLock { $0.append(request.headers[.accept] ?? "") }
      let revision: JSON = [
        "ok": [
          "_id": "doc", "_rev": "2-bb", "n": 1,
          "_revisions": ["start": 2, "ids": ["bb", "aa"]],
          "_attachments": [
            "big.bin": [
              "content_type": "application/octet-stream", "revpos": 2,
              "digest": "md5-whatever", "length": .int(Int64(big.count)),
              "data": .string(Data(big).base64EncodedString()),
            ],
            "kept.txt": [
              "content_type": "text/plain", "revpos": 1, "stub": true, "length": 5,
              "digest": "md5-kept",
            ],
          ],
        ]
      ]
      let body = JSONWriter.string(.array([revision, ["missing": "3-cc"]]))
      return Response(
        status: .ok, headers: [.contentType: "application/json"],
        body: ResponseBody(byteBuffer: ByteBuffer(string: body)))
    }
    router.get("/db/gone") { _, _ -> Response in
      Response(
        status: .notFound, headers: [.contentType: "application/json"],
        body: ResponseBody(
          byteBuffer: ByteBuffer(string: #"{"error":"not_found","reason":"missing"}"#)))
    }
    return Application(
      router: router, configuration: ApplicationConfiguration(address: .hostname("127.0.0.1", port: 0)))
  }

  @Test func aJSONAnswerIsSpooledAsMultipartWouldBe() async throws {
    let accepts = Locked<[String]>([])
    try await Self.peer(accepts: accepts).test(.live) { client in
      let peer = try HTTPPeer(url: URL(string: "http://127.0.0.1:\(client.port!)/db")!)
      let wanted = WantedRevisions(
        id: "doc", revs: [try RevisionID(parsing: "2-bb"), try RevisionID(parsing: "3-cc")],
        attachmentsSince: [try RevisionID(parsing: "1-aa")])
      let spooled = try await peer.spool(wanted)
      defer { for document in spooled { document.close() } }
      #expect(accepts.withLock { $0 } == ["multipart/mixed"])
      // The missing revision is not a document.
      try #require(spooled.count == 1)
      let document = spooled[0]
      #expect(document.id == "doc")
      #expect(document.document["n"] == 1)
      let attachment = try #require(document.document["_attachments"]?["big.bin"])
      #expect(attachment["data"] == nil)
      #expect(attachment["follows"] == true)
      #expect(document.parts["big.bin"]?.length == Self.big.count)
      // The stub stays a stub, with no part.
      #expect(document.document["_attachments"]?["kept.txt"]?["stub"] == true)
      #expect(document.parts["kept.txt"] == nil)
      #expect(document.following.map(\.name) == ["big.bin"])
      // The bytes come back from the file as the peer sent them.
      let source = try #require(document.source("big.bin"))
      var read: [UInt8] = []
      while let chunk = try source.read() { read += chunk }
      #expect(read == Self.big)
    }
  }

  @Test func anErrorAnswerIsAnError() async throws {
    try await Self.peer(accepts: Locked([])).test(.live) { client in
      let peer = try HTTPPeer(url: URL(string: "http://127.0.0.1:\(client.port!)/db")!)
      let wanted = WantedRevisions(
        id: "gone", revs: [try RevisionID(parsing: "1-aa")], attachmentsSince: [])
      await #expect(throws: ReplicationError.self) { _ = try await peer.spool(wanted) }
    }
  }
}
