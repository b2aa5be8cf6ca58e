import Settee
import SetteeCore
import SetteeTestSupport
import Testing

/// Collections made and deleted on purpose (CouchDB's `PUT` and `DELETE /{db}`), and
/// `putEach`, CouchDB's `_bulk_docs` with an outcome per document.
@Suite("Collections created and deleted; putEach")
struct CollectionLifecycleTests {
  let directory = TemporaryDirectory()

  @Test func createListDelete() throws {
    let db = try Database(path: directory.path("c.db"))
    #expect(try !db.collectionExists("people"))
    #expect(try db.createCollection("people"))
    #expect(try !db.createCollection("people"))
    #expect(try db.collectionExists("people"))
    #expect(try db.collectionNames() == ["people"])
    #expect(try db.collection("people").count() == 0)
    try db.deleteCollection("people")
    #expect(try !db.collectionExists("people"))
    #expect(try db.collectionNames() == [])
    expectError(.notFound) { try db.deleteCollection("people") }
    // A write makes it again, as a first write always does.
    try db.collection("people").put(["_id": "a"])
    #expect(try db.collectionExists("people"))
  }

  @Test func deletingRemovesEverythingAndSequencesGoOn() throws {
    let path = directory.path("d.db")
    let db = try Database(path: path)
    let people = db.collection("people")
    let other = db.collection("other")
    try people.putAll((0..<20).map { ["_id": .string("p\($0)"), "age": .int(Int64($0))] })
    let written = try people.put(["_id": "att"])
    try people.putAttachment("a.txt", to: "att", rev: written.rev, data: Array("shared".utf8))
    let otherWritten = try other.put(["_id": "o"])
    try other.putAttachment("b.txt", to: "o", rev: otherWritten.rev, data: Array("shared".utf8))
    try people.ensureIndexed(["age"], name: "age")
    try people.defineView(json: ["name": "by-age", "key": "age"])
    _ = try people.view(named: "by-age").query()
    try people.addIndex("[age]")
    _ = try people.putLocal(["_id": "_local/check", "n": 1])
    try people.setRevsLimit(5)
    let lastSeq = try people.lastSequence()

    // Another process (another Database value) knows the collection's id already.
    let second = try Database(path: path)
    #expect(try second.collection("people").count() == 21)

    try db.deleteCollection("people")
    #expect(try people.count() == 0)
    #expect(try people.indexes().isEmpty)
    #expect(try people.views().isEmpty)
    #expect(try people.whereIndexes().isEmpty)
    #expect(try people.localDocuments().isEmpty)
    #expect(try people.revsLimit() == DocumentCollection.defaultRevsLimit)
    #expect(try people.changes().isEmpty)
    // The other collection's attachment keeps the blob both shared.
    var read: [UInt8] = []
    try other.readAttachment("b.txt", of: "o") { read += $0 }
    #expect(read == Array("shared".utf8))
    #expect(try db.check().isHealthy)

    // Made again, it starts empty; its sequence numbers go on.
    #expect(try db.createCollection("people"))
    let again = try people.put(["_id": "p1", "age": 1])
    #expect(again.rev.generation == 1)
    #expect(again.seq > lastSeq)
    #expect(try second.collection("people").get("p1")?.json["age"] == 1)
    #expect(try second.collection("people").count() == 1)
    #expect(try db.check().isHealthy)
  }

  @Test func putEachReportsEachDocument() throws {
    let people = try Database(inMemoryWith: .init()).collection("people")
    let first = try people.put(["_id": "a", "n": 1])
    try people.ensureIndexed(["n"], name: "n")
    let outcomes = try people.putEach([
      ["_id": "a", "_rev": .string(first.rev.description), "n": 2],
      ["_id": "a", "n": 3],  // a conflict: no _rev for an existing document
      ["_id": "b", "n": 4],
      ["_id": "_bad", "n": 5],  // an illegal id
      ["_id": "b", "n": 6],  // a conflict with the write two places above
    ])
    #expect(outcomes.count == 5)
    #expect((try? outcomes[0].get())?.rev.generation == 2)
    #expect(failure(outcomes[1])?.code == .conflict)
    #expect((try? outcomes[2].get())?.id == "b")
    #expect(failure(outcomes[3])?.code == .invalidID)
    #expect(failure(outcomes[4])?.code == .conflict)
    #expect(try people.get("a")?.json["n"] == 2)
    #expect(try people.get("b")?.json["n"] == 4)
    #expect(
      try people.find(FindQuery(json: ["selector": ["n": ["$gt": 0]]])).map(\.id) == ["a", "b"])
    #expect(try people.changes().map(\.id) == ["a", "b"])

    // As a peer sends them: each revision on its own too.
    let replicated = try people.putEach(
      [
        ["_id": "c", "_rev": "1-abc", "n": 7],
        ["_id": "d", "n": 8],  // no _rev: refused
      ], newEdits: false)
    #expect((try? replicated[0].get())?.rev.description == "1-abc")
    #expect(failure(replicated[1]) != nil)
    #expect(try people.database.check().isHealthy)
  }

  @Test func theAsyncForms() async throws {
    let db = try Database(path: directory.path("a.db"))
    #expect(try await db.createCollection("x"))
    #expect(try await db.collectionExists("x"))
    let outcomes = try await db.collection("x").putEach([["_id": "a"]])
    #expect((try? outcomes[0].get())?.id == "a")
    try await db.deleteCollection("x")
    #expect(try await !db.collectionExists("x"))
  }

  private func failure(_ outcome: Result<WriteResult, SetteeError>) -> SetteeError? {
    if case .failure(let error) = outcome { return error }
    return nil
  }
}

/// An attachment read as an async sequence of chunks, each in a read of its own.
@Suite("Attachment streams")
struct AttachmentStreamTests {
  let directory = TemporaryDirectory()

  @Test func chunksInOrderAndRemovalMidway() async throws {
    let notes = try Database(path: directory.path("s.db")).collection("notes")
    let bytes = (0..<700_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 9) }
    let first = try await notes.put(["_id": "n"])
    let written = try await notes.putAttachment(
      "big.bin", to: "n", rev: first.rev, contentType: "application/x-big", data: bytes)
    let stream = try #require(try await notes.attachmentStream("big.bin", of: "n"))
    #expect(stream.attachment.length == 700_000)
    #expect(stream.attachment.contentType == "application/x-big")
    var read: [UInt8] = []
    var chunks = 0
    for try await chunk in stream {
      read += chunk
      chunks += 1
    }
    #expect(read == bytes)
    #expect(chunks == 3)
    // A range seeks to the chunk holding its first byte; ranges past the end are clamped.
    for range: Range<Int64> in [0..<10, 262_140..<262_200, 600_000..<800_000, 5..<5] {
      var part: [UInt8] = []
      for try await chunk in try stream.bytes(range) { part += chunk }
      let end = Int(min(range.upperBound, 700_000))
      #expect(part == Array(bytes[Int(range.lowerBound)..<end]), "\(range)")
    }
    #expect(try await notes.attachmentStream("none", of: "n") == nil)
    #expect(try await notes.attachmentStream("big.bin", of: "nobody") == nil)

    // Removed after the first chunk (the replaced revision keeps it until compaction): the
    // next one says so rather than end early.
    let again = try #require(try await notes.attachmentStream("big.bin", of: "n"))
    var iterator = again.makeAsyncIterator()
    #expect(try await iterator.next()?.count == 256 * 1024)
    try await notes.deleteAttachment("big.bin", from: "n", rev: written.rev)
    #expect(try await iterator.next()?.count == 256 * 1024)
    #expect(try await notes.compact() == 2, "the first revision and the one with big.bin")
    await #expect(throws: SetteeError.self) { _ = try await iterator.next() }
  }
}
