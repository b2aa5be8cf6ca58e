import Foundation
import Settee
import SetteeCore
import SetteeTestSupport
import Testing

/// Local documents (`_local/…`): `0-N` revisions as CouchDB counts them, kept apart from
/// documents: never in the changes feed, all-docs, queries, views or exports.
@Suite("Local documents")
struct LocalDocumentTests {
  let db: Database
  let docs: DocumentCollection

  init() throws {
    db = try Database(inMemoryWith: .init())
    docs = db.collection("docs")
  }

  /// CouchDB's rules: no revision control, the new revision is the given one plus one.
  @Test func aWriteReplacesWhatIsThereAndCountsFromTheGivenRevision() throws {
    let first = try docs.putLocal(["_id": "_local/checkpoint", "seq": 10])
    #expect(first.rev == "0-1")
    #expect(first.json == ["_id": "_local/checkpoint", "_rev": "0-1", "seq": 10])
    let second = try docs.putLocal(["_id": "checkpoint", "_rev": "0-1", "seq": 20])
    #expect(second.rev == "0-2")
    #expect(try docs.localDocument("_local/checkpoint")?.body == ["seq": 20])
    #expect(try docs.localDocument("checkpoint")?.rev == "0-2")
    // A write naming no revision, or an old one, replaces the document all the same.
    #expect(try docs.putLocal(["_id": "checkpoint", "seq": 30]).rev == "0-1")
    #expect(try docs.putLocal(["_id": "checkpoint", "_rev": "0-7", "seq": 40]).rev == "0-8")
    #expect(try docs.localDocument("checkpoint")?.body == ["seq": 40])
    try docs.deleteLocal("checkpoint", rev: "0-8")
    #expect(try docs.localDocument("checkpoint") == nil)
    try docs.deleteLocal("checkpoint")  // none: nothing happens
    #expect(try docs.putLocal(["_id": "_local/checkpoint"]).rev == "0-1")
  }

  @Test(arguments: [
    (#"{"seq":1}"#, SetteeError.Code.invalidID),
    (#"{"_id":"_local/"}"#, .invalidID),
    (#"{"_id":"_local/x","_rev":"1-a"}"#, .invalidRevision),
    (#"{"_id":"_local/x","_rev":"0-x"}"#, .invalidRevision),
    (#"{"_id":"_local/x","_rev":"0-9223372036854775807"}"#, .invalidRevision),
    (#"{"_id":"_local/x","_rev":"0-99999999999999999999"}"#, .invalidRevision),
    (#"{"_id":"_local/x","_bad":1}"#, .reservedField),
  ])
  func badLocalDocumentsAreTypedErrors(_ text: String, _ code: SetteeError.Code) throws {
    guard case .object(let json) = try JSONParser.parse(text) else { return }
    expectError(code) { try docs.putLocal(json) }
    #expect(try docs.localDocuments().isEmpty)
  }

  @Test func localDocumentsStayOutOfEveryOtherFace() throws {
    try docs.put(["_id": "a", "n": 1])
    try docs.putLocal(["_id": "_local/b", "n": 1])
    try docs.putLocal(["_id": "_local/a", "n": 2])
    let seq = try docs.lastSequence()
    #expect(try docs.localDocuments().map(\.id) == ["_local/a", "_local/b"])
    #expect(try docs.changes().map(\.id) == ["a"])
    #expect(try docs.lastSequence() == seq)
    #expect(try docs.count() == 1)
    #expect(try docs.find(FindQuery(matching: Field("n") >= 0)).map(\.id) == ["a"])
    var exported: [UInt8] = []
    try docs.exportDocuments { exported += $0 }
    #expect(!String(decoding: exported, as: UTF8.self).contains("_local"))
    // An ordinary write of a _local/ id says where local documents go.
    let error = expectError(.invalidID) { try docs.put(["_id": "_local/c"]) }
    #expect(error?.message.contains("putLocal") == true)
    #expect(try db.check().isHealthy)
  }
}
