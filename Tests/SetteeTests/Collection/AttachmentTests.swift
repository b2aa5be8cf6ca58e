import Foundation
import Settee
import SetteeCore
import SetteeTestSupport
import Testing

/// Attachments: inline and streamed writes, stubs, stored once per digest and removed with
/// their last revision, kept across edits, peers' stubs and encodings, `atts_since`.
@Suite("Attachments")
struct AttachmentTests {
  let db: Database
  let docs: DocumentCollection

  init() throws {
    db = try Database(inMemoryWith: .init())
    docs = db.collection("docs")
  }

  private func json(_ text: String) throws -> JSONObject {
    guard case .object(let object) = try JSONParser.parse(text) else {
      throw SetteeError(.invalidJSON, text)
    }
    return object
  }

  @Test func inlineAttachmentsReadBackAsStubsOrData() throws {
    // "hello" in base64 is aGVsbG8=; its MD5 in base64 is XUFAKrxLKna5cZ2REBfFkg==.
    let written = try docs.put(
      json(
        #"{"_id":"a","n":1,"_attachments":{"hi.txt":{"content_type":"text/plain","data":"aGVsbG8="}}}"#
      ))
    let stub = try #require(try docs.document("a", RevisionReadOptions()))
    // Text is stored gzip-encoded, as CouchDB stores it: the digest is that of the gzip
    // form (CouchDB's for the same bytes), the length that of the text.
    #expect(
      JSONWriter.string(.object(stub))
        == #"{"_id":"a","_rev":"\#(written.rev)","n":1,"_attachments":{"hi.txt":{"content_type":"text/plain","revpos":1,"digest":"md5-iMaiC8wqiFlD2NjLTemvCQ==","length":5,"stub":true}}}"#
    )
    let full = try #require(try docs.document("a", RevisionReadOptions(attachments: true)))
    #expect(full["_attachments"]?["hi.txt"]?["data"] == "aGVsbG8=")
    // Inline data carries no length (CouchDB's shape).
    #expect(full["_attachments"]?["hi.txt"]?["length"] == nil)
    #expect(try docs.attachment("hi.txt", of: "a")?.data == Array("hello".utf8))
    #expect(try docs.attachments(of: "a").map(\.name) == ["hi.txt"])
    #expect(try docs.attachment("nope", of: "a") == nil)
  }

  /// Lists show a document's attachments as a read of that document does (issue 55):
  /// find results and rows with their documents, as stubs or, when asked, with data.
  @Test func listsCarryTheRevisionsAttachments() throws {
    try docs.put(
      json(
        #"{"_id":"a","n":1,"_attachments":{"hi.txt":{"content_type":"text/plain","data":"aGVsbG8="}}}"#
      ))
    try docs.put(["_id": "b", "n": 2])
    let stub = try #require(try docs.document("a", RevisionReadOptions())?["_attachments"])
    let found = try docs.find(FindQuery(selector: try SelectorParser.parse(#"{"n": 1}"#)))
    #expect(found.count == 1 && found[0].json["_attachments"] == stub)
    #expect(try docs.get(["a"], attachments: .stubs)[0]?.json["_attachments"] == stub)
    #expect(try docs.get(["a"])[0]?.attachments == nil)
    let rows = try docs.allDocuments(ViewQuery(includeDocs: true)).rows
    #expect(rows.map { $0.document?.json["_attachments"] } == [stub, nil])
    var withData = ViewQuery(includeDocs: true)
    withData.attachments = AttachmentListing(data: true)
    let data = try docs.allDocuments(withData).rows[0].document?.json["_attachments"]
    #expect(data?["hi.txt"]?["data"] == "aGVsbG8=")
    // A projection shows attachments only when it names them.
    var projected = try FindQuery(json: ["selector": ["n": 1], "fields": ["n"]])
    #expect(try docs.find(projected)[0].json["_attachments"] == nil)
    projected.fields?.append(try FieldPath(parsing: "_attachments"))
    #expect(try docs.find(projected)[0].json["_attachments"] == stub)
  }

  /// An attachment read by revision: the winner's, a losing leaf's (a branched document),
  /// none of a deleted winner without a revision, none of a revision the tree lacks.
  @Test func attachmentsOfEachLeafAndOfADeletedWinner() throws {
    try docs.putAll(
      [
        try json(#"{"_id":"b","_rev":"1-x","_attachments":{"t":{"data":"eA=="}}}"#),
        try json(#"{"_id":"b","_rev":"1-y","_attachments":{"t":{"data":"eQ=="}}}"#),
      ], newEdits: false)
    let (x, y) = (try RevisionID(parsing: "1-x"), try RevisionID(parsing: "1-y"))
    #expect(try docs.attachment("t", of: "b")?.data == Array("y".utf8), "1-y wins")
    #expect(try docs.attachment("t", of: "b", rev: y)?.data == Array("y".utf8))
    #expect(try docs.attachment("t", of: "b", rev: x)?.data == Array("x".utf8))
    #expect(try docs.attachment("t", of: "b", rev: try RevisionID(parsing: "1-z")) == nil)
    let single = try docs.putAttachment("t", to: "c", rev: nil, data: [7])
    #expect(try docs.attachment("t", of: "c", rev: single.rev)?.data == [7])
    try docs.delete("c", rev: single.rev.description)
    #expect(try docs.attachment("t", of: "c") == nil)
    #expect(try docs.attachment("t", of: "c", rev: single.rev)?.data == [7])
  }

  @Test func editsKeepAttachmentsUnlessTheyStateThem() throws {
    let first = try docs.put(
      json(#"{"_id":"a","_attachments":{"x":{"data":"aGVsbG8="},"y":{"data":"d29ybGQ="}}}"#))
    // No _attachments: kept (as stubs of the edited revision).
    let second = try docs.put(["_id": "a", "_rev": .string(first.rev.description), "n": 2])
    #expect(try docs.attachments(of: "a").map(\.name) == ["x", "y"])
    #expect(try docs.attachments(of: "a").map(\.revpos) == [1, 1])
    // A stub keeps one, leaving one out removes it; replaced revisions keep theirs until
    // compaction, and a blob goes with its last revision.
    let third = try docs.put(
      json(#"{"_id":"a","_rev":"\#(second.rev)","_attachments":{"y":{"stub":true}}}"#))
    #expect(try docs.attachments(of: "a").map(\.name) == ["y"])
    #expect(try db.storedAttachmentBlobs() == 2)
    #expect(try docs.attachment("x", of: "a", rev: second.rev)?.data == Array("hello".utf8))
    #expect(try docs.compact() == 2)
    #expect(try docs.attachment("x", of: "a", rev: second.rev) == nil)
    #expect(try db.storedAttachmentBlobs() == 1)
    try docs.put(json(#"{"_id":"a","_rev":"\#(third.rev)","_attachments":{}}"#))
    #expect(try docs.attachments(of: "a").isEmpty)
    #expect(try db.check().isHealthy)
    #expect(try docs.compact() == 1)
    #expect(try db.storedAttachmentBlobs() == 0)
    #expect(try db.check().isHealthy)
  }

  @Test func theSameBytesAreStoredOnceAndGoWithTheirLastHolder() throws {
    let bytes = Array(repeating: UInt8(7), count: 1000)
    let a = try docs.putAttachment("p", to: "a", rev: nil, data: bytes)
    let b = try docs.putAttachment("q", to: "b", rev: nil, data: bytes)
    #expect(try db.storedAttachmentBlobs() == 1)
    try docs.deleteAttachment("p", from: "a", rev: a.rev)
    #expect(try db.storedAttachmentBlobs() == 1)
    try docs.delete("b", rev: b.rev)
    #expect(try db.storedAttachmentBlobs() == 1, "replaced revisions keep theirs")
    try docs.compact()
    #expect(try db.storedAttachmentBlobs() == 0, "a deletion keeps no attachments")
    // A revision that is no longer the leaf is a conflict (CouchDB's 409); an attachment
    // the leaf lacks is not found.
    expectError(.conflict) { try docs.deleteAttachment("p", from: "a", rev: a.rev) }
    let current = try #require(try docs.getRevision("a"))
    expectError(.notFound) { try docs.deleteAttachment("p", from: "a", rev: current.rev!) }
  }

  @Test func largeAttachmentsAreWrittenAndReadAsStreams() throws {
    let directory = TemporaryDirectory()
    let url = URL(fileURLWithPath: directory.path("big.bin"))
    var random = SplitMix64(seed: 7)
    let bytes = (0..<(1_300_000)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
    try Data(bytes).write(to: url)
    let created = try docs.put(["_id": "big", "kind": "photo"])
    let written = try docs.putAttachment(
      "photo.bin", to: "big", rev: created.rev, contentType: "image/x-test", contentsOf: url)
    #expect(written.rev.generation == 2)
    #expect(try docs.get("big")?["kind"] == "photo", "the body stays")
    var chunks = 0
    var read: [UInt8] = []
    let info = try docs.readAttachment("photo.bin", of: "big") { chunk in
      chunks += 1
      #expect(chunk.count <= 256 * 1024)
      read += chunk
    }
    #expect(chunks >= 5)
    #expect(read == bytes)
    #expect(info?.digest == Attachment.digest(of: bytes))
    #expect(info?.length == Int64(bytes.count))
    #expect(info?.contentType == "image/x-test")
    #expect(info?.revpos == 2)
    #expect(try db.check().isHealthy)
  }

  @Test func onlyAttachmentChangesMakeNewRevisions() throws {
    let created = try docs.put(["_id": "a", "n": 1])
    let one = try docs.putAttachment("x", to: "a", rev: created.rev, data: [1])
    let two = try docs.putAttachment("x", to: "a", rev: one.rev, data: [2])
    #expect(Set([created.rev, one.rev, two.rev]).count == 3)
    #expect(try docs.attachment("x", of: "a")?.data == [2])
    #expect(try docs.attachment("x", of: "a")?.revpos == 3)
    expectError(.conflict) { try docs.putAttachment("x", to: "a", rev: one.rev, data: [3]) }
    expectError(.conflict) { try docs.putAttachment("x", to: "a", rev: nil, data: [3]) }
    expectError(.invalidDocument) { try docs.putAttachment("_x", to: "a", rev: two.rev, data: [3]) }
  }

  @Test func peersSendStubsByDigestAndEncodedBytesAreKeptAsReceived() throws {
    try docs.put(
      json(
        #"{"_id":"a","_rev":"1-a","_attachments":{"x":{"data":"aGVsbG8=","content_type":"text/plain"}}}"#
      ),
      newEdits: false)
    // A peer's next revision refers to the attachment by a stub with its digest.
    try docs.put(
      json(
        #"{"_id":"a","_rev":"2-b","_revisions":{"start":2,"ids":["b","a"]},"_attachments":{"x":{"stub":true,"digest":"md5-XUFAKrxLKna5cZ2REBfFkg==","revpos":1,"content_type":"text/plain","length":5}}}"#
      ),
      newEdits: false)
    #expect(try docs.attachment("x", of: "a")?.data == Array("hello".utf8))
    // The attachment the stub names, as the first revision stored it: that came without
    // a revpos, kept as 0 (CouchDB's).
    #expect(try docs.attachment("x", of: "a")?.revpos == 0)
    let missing = expectError(.missingStub) {
      try docs.put(
        json(
          #"{"_id":"m","_rev":"1-m","_attachments":{"x":{"stub":true,"digest":"md5-AAAAAAAAAAAAAAAAAAAAAA=="}}}"#
        ),
        newEdits: false)
    }
    #expect(missing?.message.contains("no revision of it one with digest") == true)
    // A stub never reaches another document's attachment (CouchDB: 412 missing_stub),
    // even with the right digest: knowing a digest must not give the bytes.
    expectError(.missingStub) {
      try docs.put(
        json(
          #"{"_id":"other","_rev":"1-o","_attachments":{"x":{"stub":true,"digest":"md5-XUFAKrxLKna5cZ2REBfFkg=="}}}"#
        ),
        newEdits: false)
    }
    #expect(try docs.get("other") == nil)
  }

  /// CouchDB stores its compressible types gzip-encoded and replicates them so: the bytes
  /// are kept as received (their digest is the peer's), and every reader that did not ask
  /// for the encoding gets what they stand for.
  @Test func gzipFromAPeerIsKeptAndReadDecoded() throws {
    let text = Array(
      String(repeating: "the quick brown fox jumps over the lazy dog\n", count: 200).utf8)
    let gzip = Gzip.encode(text)
    let base64 = Data(gzip).base64EncodedString()
    // The length a peer states is checked against what the data decodes to.
    try docs.put(
      json(
        #"{"_id":"z","_rev":"1-z","_attachments":{"t":{"data":"\#(base64)","encoding":"gzip","length":3,"content_type":"text/plain"}}}"#
      ),
      newEdits: false)
    let stub = try #require(try docs.attachments(of: "z").first)
    #expect(stub.encoding == "gzip")
    #expect(stub.length == Int64(text.count))
    #expect(stub.encodedLength == Int64(gzip.count))
    #expect(
      stub.digest == Attachment.digest(of: gzip), "the digest of the stored form, as CouchDB's")
    // Read as JSON: decoded, and no word of the encoding unless asked.
    let read = try #require(try docs.document("z", RevisionReadOptions(attachments: true)))
    #expect(read["_attachments"]?["t"]?["data"]?.stringValue == Data(text).base64EncodedString())
    #expect(read["_attachments"]?["t"]?["encoding"] == nil)
    let plainStub = try #require(try docs.document("z", RevisionReadOptions()))
    #expect(plainStub["_attachments"]?["t"]?["encoding"] == nil)
    #expect(plainStub["_attachments"]?["t"]?["length"] == .int(Int64(text.count)))
    let info = try #require(
      try docs.document("z", RevisionReadOptions(attachmentEncodingInfo: true)))
    #expect(info["_attachments"]?["t"]?["encoding"] == "gzip")
    #expect(info["_attachments"]?["t"]?["encoded_length"] == .int(Int64(gzip.count)))
    // As stored, for a replica: the gzip bytes, marked, with both lengths.
    let stored = try #require(
      try docs.document("z", RevisionReadOptions(attachments: true, encodedAttachmentData: true)))
    #expect(stored["_attachments"]?["t"]?["data"]?.stringValue == base64)
    #expect(stored["_attachments"]?["t"]?["length"] == .int(Int64(text.count)))
    #expect(stored["_attachments"]?["t"]?["encoded_length"] == .int(Int64(gzip.count)))
    // The Swift reads decode.
    let whole = try #require(try docs.attachment("t", of: "z"))
    #expect(whole.data == text)
    #expect(whole.encoding == nil)
    var streamed: [UInt8] = []
    try docs.readAttachment("t", of: "z") { streamed += $0 }
    #expect(streamed == text)
    // Data marked gzip that is not gzip is refused; so is a coding Settee cannot decode.
    expectError(.invalidDocument) {
      try docs.put(
        json(
          #"{"_id":"bad","_rev":"1-b","_attachments":{"t":{"data":"aGVsbG8=","encoding":"gzip"}}}"#
        ),
        newEdits: false)
    }
    expectError(.invalidDocument) {
      try docs.put(
        json(#"{"_id":"bad","_attachments":{"t":{"data":"aGVsbG8=","encoding":"br"}}}"#))
    }
    #expect(try docs.get("bad") == nil)
  }

  /// CouchDB's `_bulk_get` sends a compressible attachment decoded with the digest of its
  /// gzip form: the data is accepted and its digest computed again, as CouchDB does.
  @Test func aPeersDigestOfAnotherFormIsComputedAgain() throws {
    try docs.put(
      json(
        #"{"_id":"d","_rev":"1-d","_attachments":{"t":{"data":"aGVsbG8=","digest":"md5-jYfVstTe1SCbhvUqG97vCA==","revpos":0,"content_type":"text/plain"}}}"#
      ),
      newEdits: false)
    // Stored gzip-encoded as CouchDB stores text: the digest is then CouchDB's again.
    let stub = try #require(try docs.attachments(of: "d").first)
    #expect(stub.digest == Attachment.digest(of: Gzip.encode(Array("hello".utf8), level: 8)))
    #expect(stub.digest == "md5-iMaiC8wqiFlD2NjLTemvCQ==")
    #expect(try docs.attachment("t", of: "d")?.data == Array("hello".utf8))
  }

  @Test func attachmentsSinceGivesDataOnlyForWhatIsNewer() throws {
    let first = try docs.putAttachment("old", to: "a", rev: nil, data: [1])
    let second = try docs.putAttachment("new", to: "a", rev: first.rev, data: [2])
    let read = try #require(
      try docs.document("a", RevisionReadOptions(attachmentsSince: [first.rev])))
    #expect(read["_attachments"]?["old"]?["stub"] == true)
    #expect(read["_attachments"]?["new"]?["data"] == "Ag==")
    let none = try #require(
      try docs.document("a", RevisionReadOptions(attachmentsSince: [second.rev])))
    #expect(none["_attachments"]?["new"]?["stub"] == true)
    let open = try docs.openRevisions(
      "a", [second.rev],
      options: RevisionReadOptions(attachmentsSince: [RevisionID(parsing: "9-z")]))
    #expect(open.first?.json["ok"]?["_attachments"]?["old"]?["data"] == "AQ==")
    // With `attachments` too (as replicators ask: `attachments=true&atts_since=…`), the
    // revisions named still decide, as in CouchDB.
    let both = try #require(
      try docs.document(
        "a", RevisionReadOptions(attachments: true, attachmentsSince: [first.rev])))
    #expect(both["_attachments"]?["old"]?["stub"] == true)
    #expect(both["_attachments"]?["new"]?["data"] == "Ag==")
    let all = try #require(try docs.document("a", RevisionReadOptions(attachments: true)))
    #expect(all["_attachments"]?["old"]?["data"] == "AQ==")
  }

  @Test func losingLeavesKeepTheirAttachments() throws {
    try docs.put(
      json(#"{"_id":"c","_rev":"1-a","_attachments":{"x":{"data":"AQ=="}}}"#), newEdits: false)
    try docs.put(
      json(
        #"{"_id":"c","_rev":"2-b","_revisions":{"start":2,"ids":["b","a"]},"_attachments":{"x":{"data":"Ag=="}}}"#
      ),
      newEdits: false)
    try docs.put(
      json(
        #"{"_id":"c","_rev":"2-c","_revisions":{"start":2,"ids":["c","a"]},"_attachments":{"x":{"data":"Aw=="}}}"#
      ),
      newEdits: false)
    #expect(try docs.attachment("x", of: "c")?.data == [3])
    #expect(try docs.attachment("x", of: "c", rev: RevisionID(parsing: "2-b"))?.data == [2])
    #expect(try docs.attachment("x", of: "c", rev: RevisionID(parsing: "1-a"))?.data == [1])
    #expect(try db.storedAttachmentBlobs() == 3, "1-a keeps its own until compaction")
    try docs.resolveConflicts(of: "c") { _ in .keep(try RevisionID(parsing: "2-b")) }
    #expect(try docs.attachment("x", of: "c")?.data == [2])
    #expect(try db.check().isHealthy)
    #expect(try docs.compact() == 2, "1-a and 2-c, which its deletion replaced")
    #expect(try docs.attachment("x", of: "c", rev: RevisionID(parsing: "1-a")) == nil)
    #expect(try db.storedAttachmentBlobs() == 1)
    #expect(try db.check().isHealthy)
  }

  @Test(arguments: [
    ("UPDATE attachment_chunks SET data = x'00'", "is damaged"),
    ("DELETE FROM attachment_blobs", "names no stored blob"),
    ("DELETE FROM attachments", "held by no revision"),
    ("UPDATE documents SET attachments = 0", "not marked"),
  ])
  func damagedAttachmentsAreNamedByCheck(_ sql: String, _ named: String) throws {
    let directory = TemporaryDirectory()
    let file = try Database(path: directory.path("a.settee"))
    try file.collection("docs").putAttachment("x", to: "a", rev: nil, data: [1, 2, 3])
    #expect(try file.check().isHealthy)
    try file.damage(sql)
    let text = try file.check().problems.map(\.message).joined(separator: "\n")
    #expect(text.contains(named), "\(sql): \(text)")
  }

  @Test(arguments: [
    #"{"_id":"x","_attachments":[]}"#, #"{"_id":"x","_attachments":{"":{"data":""}}}"#,
    #"{"_id":"x","_attachments":{"a":{"data":"***"}}}"#,
    #"{"_id":"x","_attachments":{"a":{"content_type":"t"}}}"#,
    #"{"_id":"x","_attachments":{"a":{"data":"AQ==","encoding":"deflate"}}}"#,
    #"{"_id":"x","_attachments":{"a":{"data":"AQ==","encoding":"gzip"}}}"#,
  ])
  func badAttachmentsAreRefused(_ text: String) throws {
    expectError(.invalidDocument) { try docs.put(try json(text)) }
    #expect(try docs.count() == 0)
    #expect(try db.storedAttachmentBlobs() == 0)
  }

  /// A peer's revision (`new_edits: false`, import) keeps the `revpos` its inline
  /// attachments came with, 0 when none, as CouchDB does: `atts_since` reads it to tell
  /// what a replica holds (0 as "unknown": its data is sent). An edit writes its inline
  /// attachments at its own generation.
  @Test(arguments: [
    // (given revpos, the document exists already, stored revpos)
    (2, false, 2), (2, true, 2), (3, false, 3), (0, false, 0), (7, false, 7), (1, true, 1),
  ])
  func aPeersRevisionKeepsItsAttachmentsRevpos(given: Int, exists: Bool, stored: Int) throws {
    if exists {
      try docs.put(
        json(#"{"_id":"p","_rev":"1-aaa","v":0}"#), newEdits: false)
    }
    try docs.put(
      json(
        #"{"_id":"p","_rev":"3-ccc","_revisions":{"start":3,"ids":["ccc","bbb","aaa"]},"_attachments":{"a.txt":{"content_type":"text/plain","revpos":\#(given),"data":"aGVsbG8="}}}"#
      ), newEdits: false)
    #expect(try docs.attachment("a.txt", of: "p")?.revpos == stored)
    let edited = try docs.put(
      json(#"{"_id":"e","_attachments":{"a.txt":{"data":"aGVsbG8=","revpos":1}}}"#))
    _ = try docs.put(
      json(
        #"{"_id":"e","_rev":"\#(edited.rev)","_attachments":{"b.txt":{"data":"aGVsbG8=","revpos":1}}}"#
      ))
    #expect(try docs.attachment("b.txt", of: "e")?.revpos == 2)
  }

  @Test func aStubThatNamesNothingIsMissingStub() throws {
    let error = expectError(.missingStub) {
      try docs.put(try json(#"{"_id":"x","_attachments":{"a":{"stub":true}}}"#))
    }
    #expect(error?.code.name == "missing_stub")
    #expect(try docs.count() == 0)
    #expect(try db.storedAttachmentBlobs() == 0)
  }
}
