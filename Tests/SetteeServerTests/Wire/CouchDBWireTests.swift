import Foundation
import SetteeCore
import SetteeTestSupport
import Testing

/// The smaller differences a real CouchDB showed (issue 43), each as CouchDB answers it,
/// over a raw socket so that the test sees every header as sent.
@Suite("CouchDB's answers, one by one")
struct CouchDBWireTests {
  let directory = TemporaryDirectory()

  private func send(
    _ server: ServerProcess, _ method: String, _ path: String, json: JSON? = nil,
    body: [UInt8]? = nil, headers: [(String, String)] = []
  ) throws -> WireMessage {
    var request = WireMessage(method: method, path: path)
    request.headers = headers
    if let json {
      request.body = JSONWriter.bytes(json)
      request.headers.append(("Content-Type", "application/json"))
    }
    if let body { request.body = body }
    return try RawHTTP.send(request, to: server)
  }

  /// Six changes x1…x6, a selector matching x1, x3 and x5, `limit=2`: CouchDB answers two
  /// rows and `last_seq` at the 4th change (everything examined), so the next filtered
  /// read neither examines again nor skips anything.
  @Test func aFilteredFeedStoppedByItsLimitEndsWhereItStoppedLooking() throws {
    let server = try ServerProcess(db: directory.path("f.settee"))
    _ = try send(server, "PUT", "/db")
    for n in 1...6 {
      _ = try send(server, "PUT", "/db/x\(n)", json: ["odd": .bool(n % 2 == 1)])
    }
    let all = try #require(try send(server, "GET", "/db/_changes").json?["results"]?.arrayValue)
    let seqs = all.map { $0["seq"]! }
    let selector: JSON = ["selector": ["odd": true]]
    let first = try #require(
      try send(server, "POST", "/db/_changes?filter=_selector&limit=2", json: selector).json)
    #expect(first["results"]?.arrayValue?.map { $0["id"] } == ["x1", "x3"])
    #expect(first["last_seq"] == seqs[3])
    let since = try #require(first["last_seq"]?.stringValue)
    let second = try #require(
      try send(server, "POST", "/db/_changes?filter=_selector&limit=2&since=\(since)", json: selector)
        .json)
    #expect(second["results"]?.arrayValue?.map { $0["id"] } == ["x5"])
    #expect(second["last_seq"] == seqs[5])
    // Unfiltered, a limited feed still ends at the last change it lists.
    let plain = try #require(try send(server, "GET", "/db/_changes?limit=2").json)
    #expect(plain["last_seq"] == seqs[1])
  }

  /// `_index` writes `options.def` as CouchDB does: the field names it was given.
  @Test func aMangoIndexDesignDocumentIsCouchDBs() throws {
    let server = try ServerProcess(db: directory.path("i.settee"))
    _ = try send(server, "PUT", "/db")
    let made = try send(
      server, "POST", "/db/_index",
      json: ["index": ["fields": ["type", "n"]], "ddoc": "mango-type-n", "name": "type-n"])
    #expect(made.status == 200)
    let design = try #require(try send(server, "GET", "/db/_design/mango-type-n").json)
    let view = design["views"]?["type-n"]
    #expect(view?["options"]?["def"] == ["fields": ["type", "n"]])
    #expect(view?["map"]?["fields"] == ["type": "asc", "n": "asc"])
    #expect(design["language"] == "query")
  }

  /// `COPY` (WebDAV's, which CouchDB and its Python client use): the body and attachments
  /// to a new id, or over an existing one with `?rev=` in `Destination`.
  @Test func copyWritesTheDocumentUnderTheDestination() throws {
    let server = try ServerProcess(db: directory.path("c.settee"))
    _ = try send(server, "PUT", "/db")
    let text = Array(String(repeating: "copied text ", count: 100).utf8)
    let source = try send(
      server, "PUT", "/db/a",
      json: [
        "n": 1,
        "_attachments": [
          "t.txt": ["content_type": "text/plain", "data": .string(Data(text).base64EncodedString())]
        ],
      ])
    #expect(source.status == 201)
    let copied = try send(server, "COPY", "/db/a", headers: [("Destination", "b")])
    #expect(copied.status == 201, "\(String(decoding: copied.body, as: UTF8.self))")
    #expect(copied.json?["id"] == "b")
    #expect(copied.header("location")?.hasSuffix("/db/b") == true)
    let b = try #require(try send(server, "GET", "/db/b?attachments=true").json)
    #expect(b["n"] == 1)
    #expect(b["_attachments"]?["t.txt"]?["data"]?.stringValue == Data(text).base64EncodedString())
    #expect(try send(server, "GET", "/db/b/t.txt").body == text)
    // Over an existing document only with its revision.
    #expect(try send(server, "COPY", "/db/a", headers: [("Destination", "b")]).status == 409)
    let rev = try #require(copied.json?["rev"]?.stringValue)
    let again = try send(server, "COPY", "/db/a", headers: [("Destination", "b?rev=\(rev)")])
    #expect(again.status == 201)
    #expect(again.json?["rev"]?.stringValue?.hasPrefix("2-") == true)
    #expect(try send(server, "COPY", "/db/a").status == 400)
    #expect(
      try send(server, "COPY", "/db/nothing", headers: [("Destination", "c")]).status == 404)
  }

  /// An attachment CouchDB sent gzip-encoded (`multipart/related`, as its replicator
  /// writes): kept as sent, read decoded by clients that do not accept gzip, encoded by
  /// those that do, and shown as encoded only with `att_encoding_info` (beside decoded
  /// data too, as CouchDB shows it).
  @Test func aGzipAttachmentIsReadAsEachClientAccepts() throws {
    let server = try ServerProcess(db: directory.path("g.settee"))
    _ = try send(server, "PUT", "/db")
    let text = Array(String(repeating: "the quick brown fox\n", count: 500).utf8)
    let gzip = Gzip.encode(text)
    let boundary = "abc123"
    let json: JSON = [
      "_id": "g", "_rev": "1-aaaa", "_revisions": ["start": 1, "ids": ["aaaa"]],
      "_attachments": [
        "n.txt": [
          "content_type": "text/plain", "revpos": 1,
          "digest": .string(Attachment.digest(of: gzip)), "length": .int(Int64(text.count)),
          "follows": true, "encoding": "gzip", "encoded_length": .int(Int64(gzip.count)),
        ]
      ],
    ]
    var body = Array("--\(boundary)\r\nContent-Type: application/json\r\n\r\n".utf8)
    body += JSONWriter.bytes(json)
    body += Array(
      "\r\n--\(boundary)\r\nContent-Disposition: attachment; filename=\"n.txt\"\r\nContent-Type: text/plain\r\nContent-Length: \(gzip.count)\r\nContent-Encoding: gzip\r\n\r\n"
        .utf8)
    body += gzip
    body += Array("\r\n--\(boundary)--".utf8)
    let put = try send(
      server, "PUT", "/db/g?new_edits=false", body: body,
      headers: [("Content-Type", "multipart/related; boundary=\"\(boundary)\"")])
    #expect(put.status == 201, "\(String(decoding: put.body, as: UTF8.self))")
    let plain = try send(server, "GET", "/db/g/n.txt")
    #expect(plain.status == 200)
    #expect(plain.header("content-encoding") == nil)
    #expect(plain.body == text)
    let encoded = try send(server, "GET", "/db/g/n.txt", headers: [("Accept-Encoding", "gzip, deflate")])
    #expect(encoded.header("content-encoding") == "gzip")
    #expect(encoded.body == gzip)
    let refused = try send(server, "GET", "/db/g/n.txt", headers: [("Accept-Encoding", "gzip;q=0")])
    #expect(refused.header("content-encoding") == nil)
    let stub = try #require(try send(server, "GET", "/db/g").json?["_attachments"]?["n.txt"])
    #expect(stub["encoding"] == nil)
    #expect(stub["length"] == .int(Int64(text.count)))
    #expect(stub["digest"]?.stringValue == Attachment.digest(of: gzip))
    let info = try #require(
      try send(server, "GET", "/db/g?att_encoding_info=true").json?["_attachments"]?["n.txt"])
    #expect(info["encoding"] == "gzip")
    #expect(info["encoded_length"] == .int(Int64(gzip.count)))
    let inline = try #require(
      try send(server, "GET", "/db/g?attachments=true").json?["_attachments"]?["n.txt"])
    #expect(inline["data"]?.stringValue == Data(text).base64EncodedString())
    #expect(inline["length"] == nil)
    #expect(inline["encoding"] == nil)
    // Data and encoding both: the data decoded, and how it is stored beside it, in
    // CouchDB's member order (recording #421).
    let both = try #require(
      try send(server, "GET", "/db/g?attachments=true&att_encoding_info=true").json?["_attachments"]?["n.txt"])
    #expect(both.objectValue.map { Array($0.map(\.key)) } == ["content_type", "revpos", "digest", "data", "encoding", "encoded_length"])
    #expect(both["data"]?.stringValue == Data(text).base64EncodedString())
    #expect(both["encoding"] == "gzip")
    #expect(both["encoded_length"] == .int(Int64(gzip.count)))
    let listed = try #require(
      try send(server, "GET", "/db/_all_docs?include_docs=true&attachments=true&att_encoding_info=true")
        .json?["rows"]?[0]?["doc"]?["_attachments"]?["n.txt"])
    #expect(listed == both)
  }

  /// A replicated batch with a stub the target lacks writes nothing (CouchDB: 412 for the
  /// request), so that the replicator's second try with the data finds a clean target.
  @Test func aMissingStubRefusesTheWholeReplicatedBatch() throws {
    let server = try ServerProcess(db: directory.path("s.settee"))
    _ = try send(server, "PUT", "/db")
    let answer = try send(
      server, "POST", "/db/_bulk_docs",
      json: [
        "new_edits": false,
        "docs": [
          ["_id": "fine", "_rev": "1-a", "n": 1],
          [
            "_id": "stubbed", "_rev": "2-b", "_revisions": ["start": 2, "ids": ["b", "a"]],
            "_attachments": ["x": ["stub": true, "digest": "md5-AAAAAAAAAAAAAAAAAAAAAA==", "revpos": 1]],
          ],
        ],
      ])
    #expect(answer.status == 412)
    #expect(answer.json?["error"] == "missing_stub")
    #expect(
      answer.json?["reason"]?.stringValue?.hasPrefix("Invalid attachment stub in stubbed for x")
        == true)
    #expect(try send(server, "GET", "/db/fine").status == 404)
  }

  /// Names and content types that could not travel in a header are refused where they are
  /// written (issue 44), and ids CouchDB refuses are refused.
  @Test func whatCannotTravelInAHeaderIsRefused() throws {
    let server = try ServerProcess(db: directory.path("h.settee"))
    _ = try send(server, "PUT", "/db")
    let doc = try send(server, "PUT", "/db/doc", json: ["n": 1])
    let rev = try #require(doc.json?["rev"]?.stringValue)
    let injected = try send(
      server, "PUT", "/db/doc/inj%22%0D%0AX-Injected%3A%201%0D%0A%0D%0ABODY?rev=\(rev)",
      body: Array("x".utf8), headers: [("Content-Type", "text/plain")])
    #expect(injected.status == 400)
    let inline = try send(
      server, "PUT", "/db/inline",
      json: [
        "_attachments": [
          "a.txt": ["content_type": "text/plain\r\nSet-Cookie: x=1", "data": "aGk="]
        ]
      ])
    #expect(inline.status == 400)
    #expect(inline.json?["reason"]?.stringValue?.contains("control character") == true)
    // Ids: a design document needs a name; an _id in a body must be a string.
    #expect(try send(server, "POST", "/db", json: ["_id": "_design/"]).status == 400)
    let typed = try send(server, "PUT", "/db/x", json: ["_id": ["x": 1]])
    #expect(typed.status == 400)
    #expect(typed.json?["reason"] == "Document id must be a string")
    #expect(try send(server, "GET", "/db/x").status == 404)
  }

  @Test func aCheckpointWithRevisionsIsTakenAsCouchDBTakesIt() throws {
    let server = try ServerProcess(db: directory.path("l.settee"))
    _ = try send(server, "PUT", "/db")
    let first = try send(server, "PUT", "/db/_local/ckpt", json: ["session_id": "s1"])
    #expect(first.json?["rev"] == "0-1")
    #expect(first.header("location")?.hasSuffix("/db/_local%2Fckpt") == true)
    let second = try send(
      server, "PUT", "/db/_local/ckpt",
      json: ["_rev": "0-1", "session_id": "s2", "_revisions": ["start": 0, "ids": ["1"]]])
    #expect(second.status == 201)
    #expect(second.json?["rev"] == "0-2")
    let read = try #require(try send(server, "GET", "/db/_local/ckpt").json)
    #expect(read["_revisions"] == nil)
    #expect(read["session_id"] == "s2")
  }
}
