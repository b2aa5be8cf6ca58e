import Foundation
import Settee
import SetteeCore
import SetteeTestSupport
import Testing

@Suite("Import and export")
struct ImportExportTests {
  let db: Database

  init() throws { db = try Database(inMemoryWith: .init()) }

  func export(_ collection: DocumentCollection) throws -> String {
    var bytes: [UInt8] = []
    try collection.exportDocuments { bytes.append(contentsOf: $0) }
    return String(decoding: bytes, as: UTF8.self)
  }

  @Test func importsNDJSONAndArraysAlike() throws {
    var ndjson = JSONRecordReader(text: SampleData.ndjson(500), chunkSize: 333)
    let summary = try db.collection("a").importDocuments(from: &ndjson)
    #expect(summary == ImportSummary(documents: 500, batches: 1))
    let array =
      "[\n" + SampleData.people(500).map { JSONWriter.string(.object($0)) }.joined(separator: ",\n")
      + "\n]"
    var arrayReader = JSONRecordReader(text: array, chunkSize: 100)
    try db.collection("b").importDocuments(from: &arrayReader)
    #expect(try export(db.collection("a")) == export(db.collection("b")))
    #expect(try db.collection("b").get(SampleData.id(42))?["docNumber"] == 42)
  }

  /// A collection without indexes takes records from their text to their stored form
  /// directly; one with an index parses them. Both store the same documents, revisions
  /// included, from records written every which way.
  @Test func recordsReadFromTextAreStoredAsParsedOnes() throws {
    var random = RandomQueries(seed: 16)
    var lines: [String] = []
    for number in 0..<300 {
      var document = random.document(number)
      if random.chance(20) { document["_id"] = nil }
      if random.chance(20) { document["_rev"] = "3-00112233445566778899aabbccddeeff" }
      if random.chance(10) { document["price"] = .double(Double(number) / 8) }
      var line = JSONWriter.string(.object(document))
      if random.chance(30) { line = line.replacingOccurrences(of: ",", with: " , ") }
      lines.append(line)
    }
    let text = lines.joined(separator: "\n")
    let plain = db.collection("plain")
    let indexed = db.collection("indexed")
    try indexed.ensureIndexed(["a"], name: "a")
    var first = JSONRecordReader(text: text)
    var second = JSONRecordReader(text: text)
    try plain.importDocuments(from: &first)
    try indexed.importDocuments(from: &second)
    // Generated ids differ; everything else must not.
    func stored(_ collection: DocumentCollection) throws -> [String] {
      try collection.find(FindQuery()).map { document in
        var json = document.json
        if document.id.count == 32 { json["_id"] = "generated" }
        return JSONWriter.string(.object(json))
      }.sorted()
    }
    #expect(try stored(plain) == stored(indexed))
    #expect(try plain.count(FindQuery()) == 300)
  }

  @Test func exportImportsBackUnchanged() throws {
    let source = db.collection("source")
    try source.putAll(SampleData.people(300))
    let first = try source.put(["_id": "edited", "v": 1])
    try source.put(["_id": "edited", "_rev": .string(first.rev.description), "v": 2])
    let gone = try source.put(["_id": "gone"])
    try source.delete("gone", rev: gone.rev)
    let exported = try export(source)
    #expect(exported.split(separator: "\n").count == 301)  // the tombstone is not exported
    #expect(exported.contains(#"{"_id":"edited","_rev":"2-"#))

    let copy = db.collection("copy")
    var input = JSONRecordReader(text: exported, chunkSize: 1000)
    try copy.importDocuments(from: &input)
    #expect(try export(copy) == exported)
    #expect(try copy.get("edited")?.rev?.generation == 2)
  }

  @Test func importingOverExistingDocumentsFollowsTheRevisionRules() throws {
    let people = db.collection("people")
    let created = try people.put(["_id": "mike", "age": 1])
    // The current _rev updates; no _rev on an existing document is a conflict.
    var update = JSONRecordReader(text: #"{"_id":"mike","_rev":"\#(created.rev)","age":2}"#)
    try people.importDocuments(from: &update)
    #expect(try people.get("mike")?["age"] == 2)
    var stale = JSONRecordReader(text: #"{"_id":"new","a":1}"# + "\n" + #"{"_id":"mike","age":3}"#)
    #expect {
      try people.importDocuments(from: &stale)
    } throws: { error in
      guard let error = error as? SetteeError else { return false }
      return error.code == .conflict && error.location?.line == 2 && error.location?.record == 1
    }
    #expect(try people.get("new") == nil)
  }

  @Test func batchesCommitAsTheyGo() throws {
    let people = db.collection("people")
    var text = SampleData.ndjson(25)
    text += "{broken\n"
    var input = JSONRecordReader(text: text, chunkSize: 64)
    #expect {
      try people.importDocuments(from: &input, batchSize: 10)
    } throws: { error in
      guard let error = error as? SetteeError else { return false }
      return error.location?.line == 26 && error.message.contains("20 documents in 2 batches")
    }
    #expect(try people.count() == 20)

    var good = JSONRecordReader(
      text: SampleData.ndjson(30).replacingOccurrences(of: "doc-", with: "new-"))
    #expect(
      try people.importDocuments(from: &good, batchSize: 10)
        == ImportSummary(documents: 30, batches: 3))
    #expect(try people.count() == 50)
  }

  @Test func reportsProgress() throws {
    var input = JSONRecordReader(text: SampleData.ndjson(25_000))
    var reports: [ImportProgress] = []
    try db.collection("p").importDocuments(from: &input) { reports.append($0) }
    #expect(reports.map(\.documents) == [10_000, 20_000, 25_000])
    #expect(reports.last?.bytes == SampleData.ndjson(25_000).utf8.count)
  }
}
