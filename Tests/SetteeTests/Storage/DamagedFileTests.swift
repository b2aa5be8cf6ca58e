import Foundation
import SetteeCore
import SetteeTestSupport
import Testing

@testable import Settee

/// Data damaged inside the file is reported as damage (`corruption`, naming the document),
/// never as the user's mistake, and `check` finds every kind.
@Suite("Damaged files")
struct DamagedFileTests {
  let directory = TemporaryDirectory()
  var path: String { directory.path("damaged.db") }

  /// A database of 20 documents with a JSON index over an array field and a TEXT index.
  func makeDatabase() throws -> Database {
    let db = try Database(path: path)
    let people = db.collection("people")
    try people.putAll(
      (0..<20).map { ["_id": .string("p\($0)"), "n": .int(Int64($0)), "tags": ["a", "b"]] })
    try people.ensureIndexed(["n", "tags"], name: "nt")
    try people.ensureIndexed(["_id"], name: "text", type: .text)
    return db
  }

  @Test func aHealthyDatabaseChecksClean() throws {
    let report = try makeDatabase().check()
    #expect(report.isHealthy && report.documents == 20 && report.indexEntries == 60)
  }

  @Test func aDamagedBodyIsCorruptionNamingTheDocument() throws {
    let db = try makeDatabase()
    let people = db.collection("people")
    let rev = try #require(try people.get("p3")?.rev)
    try db.damage("UPDATE documents SET body = '{\"n\": 3' WHERE id = 'p3'")
    let reads: [() throws -> Void] = [
      { _ = try people.get("p3") },
      { _ = try people.find(FindQuery()) },
      { _ = try people.find(["n": ["$gte": 0]], sort: ["n"]) },
      {
        _ = try people.find(FindQuery(selector: try SelectorParser.parse(["tags": ["$size": 2]])))
      },
      { _ = try people.count(FindQuery(selector: try SelectorParser.parse(["x": 1]))) },
      { try people.exportDocuments { _ in } },
      { try people.put(["_id": "p3", "_rev": .string(rev.description)]) },
    ]
    for (number, read) in reads.enumerated() {
      let error = expectError(.corruption, read)
      #expect(error != nil, "read \(number)")
      #expect(error?.documentID == "p3", "\(String(describing: error))")
    }
    // Other documents are still readable.
    #expect(try people.get("p4")?["n"] == 4)
    let report = try db.check()
    #expect(!report.isHealthy && report.problems.map(\.documentID) == ["p3"])
  }

  /// `_bulk_get` and a replication send a stored body on as its text, checked first: a
  /// damaged one is corruption naming the document, never passed on; a valid one written
  /// with spaces (not by Settee) still makes a valid document.
  @Test func aDamagedBodyIsNotSentOnAsText() async throws {
    let db = try makeDatabase()
    let people = db.collection("people")
    let rev = try #require(try await people.get("p3")?.rev)
    let request = RevisionsRequest("p3", [rev], options: .init(revs: true))
    try db.damage("UPDATE documents SET body = '{\"n\": 3' WHERE id = 'p3'")
    do {
      let texts = try await people.openRevisionTexts([request])
      Issue.record("a damaged body was read as \(texts)")
    } catch let error as SetteeError {
      #expect(error.code == .corruption && error.documentID == "p3", "\(error)")
    }
    for body in [#" { "n" : 3 , "m" : [ ] } "#, "{ }"] {
      try db.damage("UPDATE documents SET body = '\(body)' WHERE id = 'p3'")
      let texts = try await people.openRevisionTexts([request])
      guard case .found(let text)? = texts.first?.first,
        case .object(var object) = try JSONParser.parse(text)
      else {
        Issue.record("\(texts)")
        continue
      }
      #expect(object.removeValue(forKey: "_revisions") != nil)
      let expected: JSONObject =
        body == "{ }"
        ? ["_id": "p3", "_rev": .string(rev.description)]
        : ["_id": "p3", "_rev": .string(rev.description), "n": 3, "m": []]
      #expect(object == expected)
    }
  }

  /// A declarative view maps in SQL: a damaged body met by its first build, or by a
  /// catch-up after the document changed, is corruption naming the document; the failed
  /// catch-up is rolled back, and resumes once the body is whole.
  @Test func aViewMeetingADamagedBodyNamesTheDocument() throws {
    let db = try makeDatabase()
    let people = db.collection("people")
    let view = try people.defineView(json: ["name": "byN", "key": "n", "value": "n"])
    #expect(try view.query().totalRows == 20)
    let current = try #require(try people.get("p3"))
    try people.put(["_id": "p3", "_rev": .string(current.rev!.description), "n": 30])
    try db.damage("UPDATE documents SET body = '{\"n\": 3' WHERE id = 'p3'")
    let caughtUp = expectError(.corruption) { _ = try view.query() }
    #expect(caughtUp?.documentID == "p3", "\(String(describing: caughtUp))")
    let fresh = try people.defineView(json: ["name": "fresh", "key": "n"])
    let built = expectError(.corruption) { _ = try fresh.query() }
    #expect(built?.documentID == "p3", "\(String(describing: built))")
    // Repaired (as a restore would), the pending change is mapped.
    try db.damage("UPDATE documents SET body = '{\"n\": 31}' WHERE id = 'p3'")
    #expect(try view.query(ViewQuery(key: 31)).rows.map(\.id) == ["p3"])
    #expect(try view.query().totalRows == 20)
  }

  @Test func aDamagedRevisionIsCorruption() throws {
    let db = try makeDatabase()
    try db.damage("UPDATE documents SET rev = '0-nogeneration' WHERE id = 'p4'")
    let error = expectError(.corruption) { _ = try db.collection("people").get("p4") }
    #expect(error?.documentID == "p4")
    expectError(.corruption) { _ = try db.collection("people").changes() }
    #expect(try db.check().problems.map(\.documentID) == ["p4"])
  }

  @Test func indexEntriesThatDoNotMatchTheirDocumentsAreFound() throws {
    let db = try makeDatabase()
    try db.damage("DELETE FROM ix_1 WHERE id = 'p5'")
    try db.damage("UPDATE ix_1 SET rev = '1-0' WHERE id = 'p6'")
    try db.damage("DELETE FROM fts_2 WHERE docid = (SELECT rid FROM documents WHERE id = 'p7')")
    let report = try db.check()
    let found = Set(report.problems.compactMap(\.documentID))
    #expect(found == ["p5", "p7"] || found == ["p5", "p6", "p7"])
    #expect(report.problems.contains { $0.documentID == "p5" && $0.index == "nt" })
    #expect(report.problems.contains { $0.documentID == "p7" && $0.index == "text" })
    // The planner's count of multi-entry documents is checked too.
    #expect(report.problems.contains { $0.documentID == nil && $0.index == "nt" })
  }

  @Test func whereFieldRowsThatDoNotMatchTheirDocumentsAreFound() throws {
    let db = try makeDatabase()
    let people = db.collection("people")
    try people.addQueryableFields("[n]")
    try people.addUniqueIndex("[tags.0], [n]")
    #expect(try db.check().isHealthy)
    try db.damage(
      "UPDATE wf_1 SET c0 = 99 WHERE rid = (SELECT rid FROM documents WHERE id = 'p3')")
    try db.damage("DELETE FROM wf_1 WHERE rid = (SELECT rid FROM documents WHERE id = 'p4')")
    try db.damage("INSERT INTO wf_1 (rid, c0, c1) VALUES (1000, 1000, 'z')")
    let report = try db.check()
    #expect(Set(report.problems.compactMap(\.documentID)) == ["p3", "p4"], "\(report)")
    #expect(report.problems.count == 3)
    #expect(report.problems.allSatisfy { $0.index == "where fields" })
  }
}
