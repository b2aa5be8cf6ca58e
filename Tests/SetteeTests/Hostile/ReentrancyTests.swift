import Foundation
import Settee
import SetteeCore
import SetteeTestSupport
import Testing

/// Calls made from inside a closure the collection is running (a streaming `find`, an
/// export, an import's progress) work, or fail with a typed error; never a trap.
@Suite("Reentrant calls")
struct ReentrancyTests {
  let directory = TemporaryDirectory()

  func people() throws -> DocumentCollection {
    let people = try Database(path: directory.path("people.db")).collection("people")
    try people.putAll((0..<50).map { ["_id": .string("p\($0)"), "n": .int(Int64($0))] })
    try people.ensureIndexed(["n"], name: "n")
    return people
  }

  @Test func aStreamingFindMayReadAndWriteFromItsClosure() throws {
    let people = try people()
    let query = FindQuery(selector: try SelectorParser.parse(["n": ["$lt": 10]]))
    var seen: [String] = []
    try people.find(query) { document in
      seen.append(document.id)
      #expect(try people.get(document.id)?.rev == document.rev)
      #expect(try people.find(query).count == 10)  // the same snapshot, the same query
      #expect(try people.count(query) == 10)
      var changed = document.json
      changed["n"] = .int(100 + Int64(document.id.dropFirst())!)
      try people.put(changed)  // commits at once; the stream keeps its snapshot
      try people.find(query) { _ in }  // a stream inside a stream
      _ = try people.explain(query)
      _ = try people.indexes()
      #expect(people.database.isTextSearchEnabled)
    }
    #expect(seen.count == 10)
    #expect(try people.find(query).isEmpty)
    #expect(try people.get("p3")?["n"] == 103)
  }

  @Test func anExportMayReadFromItsClosure() throws {
    let people = try people()
    var chunks = 0
    try people.exportDocuments { _ in
      chunks += 1
      let inner = try people.get("p1")
      #expect(inner != nil)
      try people.exportDocuments { _ in }
    }
    #expect(chunks == 1)
  }

  @Test func anImportsProgressMayReadButNotWrite() throws {
    let people = try people()
    let lines = (0..<25_000).map { #"{"_id": "i\#($0)"}"# }.joined(separator: "\n")
    var bytes = Array(lines.utf8)
    var reader = JSONRecordReader(maxRecordBytes: 1 << 20) {
      defer { bytes = [] }
      return bytes.isEmpty ? nil : bytes
    }
    var refused = 0
    var written = 0
    try people.importDocuments(from: &reader, batchSize: 10_000) { progress in
      let inner = try? people.get("p1")
      #expect(inner != nil)
      do {
        try people.put(["_id": .string("during-\(progress.documents)")])
        written += 1  // the last report comes after the import's write has ended
      } catch let error as SetteeError {
        #expect(error.code == .invalidArgument)
        refused += 1
      } catch {
        Issue.record("\(error)")
      }
    }
    #expect(refused >= 2 && written <= 1)
    #expect(try people.count() == 25_050 + written)
  }
}
