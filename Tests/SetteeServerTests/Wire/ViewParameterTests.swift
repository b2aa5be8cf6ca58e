import Foundation
import Settee
import SetteeCore
import SetteeJavaScript
import SetteeTestSupport
import Testing

/// View parameters as CouchDB 3.5 reads them (issue 55, item 7; the conformance
/// recording is the contract): `keys` wins over `key` and the range, one key reduces
/// without grouping, a key's range excludes its end with `inclusive_end=false`, refusals
/// are `query_parse_error`s, and `conflicts=true` adds `_conflicts` to included documents.
@Suite(
  "settee serve: view parameters, as CouchDB 3.5",
  .enabled(if: DesignFunctions.isAvailable, "JavaScriptCore is not installed"))
struct ViewParameterTests {
  let directory = TemporaryDirectory()

  /// A database with documents `d0` … `d9` (`k` = n mod 3) and a view `t/k` emitting
  /// `[k, 1]` with a `_count` reduce.
  private func server(_ name: String) async throws -> ServerProcess {
    let server = try await ServerProcess(db: directory.path(name))
    try await server.request("PUT", "/db")
    var docs: [JSON] = (0..<10).map { ["_id": .string("d\($0)"), "k": .int(Int64($0 % 3))] }
    docs.append([
      "_id": "_design/t",
      "views": ["k": ["map": "function(doc) { if ('k' in doc) emit(doc.k, 1); }", "reduce": "_count"]],
    ])
    #expect(try await server.post("/db/_bulk_docs", ["docs": .array(docs)]).status == 201)
    return server
  }

  @Test func keysAndRanges() async throws {
    let server = try await server("keys.db")
    // (path, status, rows) with k = 0: d0 d3 d6 d9, k = 1: d1 d4 d7, k = 2: d2 d5 d8.
    let table: [(path: String, status: Int, rows: JSON?)] = [
      // keys win over key and the range.
      ("/db/_design/t/_view/k?reduce=false&keys=%5B2%5D&key=0&startkey=0", 200,
       [["id": "d2", "key": 2, "value": 1], ["id": "d5", "key": 2, "value": 1], ["id": "d8", "key": 2, "value": 1]]),
      // One key reduces without grouping: one row, key null.
      ("/db/_design/t/_view/k?keys=%5B1%5D", 200, [["key": .null, "value": 3]]),
      ("/db/_design/t/_view/k?keys=%5B1%2C2%5D&group=true", 200,
       [["key": 1, "value": 3], ["key": 2, "value": 3]]),
      // A key's range starts and ends at it: inclusive_end=false leaves nothing.
      ("/db/_design/t/_view/k?reduce=false&keys=%5B1%5D&inclusive_end=false", 200, []),
      ("/db/_design/t/_view/k?reduce=false&key=1&inclusive_end=false&descending=true", 200, []),
      // Several keys on a reduce need whole-key grouping.
      ("/db/_design/t/_view/k?keys=%5B1%2C2%5D", 400, nil),
      ("/db/_design/t/_view/k?keys=%5B1%2C2%5D&group_level=1&limit=0", 400, nil),
      ("/db/_design/t/_view/k?group=true&reduce=false", 400, nil),
      ("/db/_design/t/_view/k?include_docs=true", 400, nil),
      ("/db/_design/t/_view/k?startkey=2&endkey=1", 400, nil),
    ]
    for row in table {
      let answer = try await server.get(row.path)
      #expect(answer.status == row.status, "\(row.path): \(answer.text)")
      if let rows = row.rows {
        #expect(answer.json["rows"] == rows, "\(row.path): \(answer.text)")
      } else {
        #expect(answer.json["error"] == "query_parse_error", "\(row.path): \(answer.text)")
      }
    }
  }

  /// `"options": {"collation": "raw"}` orders a design document's view keys by code point,
  /// as CouchDB does; without it, ICU's order.
  @Test func rawCollation() async throws {
    let server = try await ServerProcess(db: directory.path("raw.db"))
    try await server.request("PUT", "/db")
    let docs: [JSON] = ["b", "B", "a"].map { ["_id": .string($0), "k": .string($0)] }
    try await server.post("/db/_bulk_docs", ["docs": .array(docs)])
    let map: JSON = ["map": "function(doc) { emit(doc.k, null); }"]
    try await server.put("/db/_design/raw", ["options": ["collation": "raw"], "views": ["v": map]])
    try await server.put("/db/_design/icu", ["views": ["v": map]])
    func keys(_ design: String) async throws -> [JSON] {
      try await server.get("/db/_design/\(design)/_view/v").json["rows"]?.arrayValue?.compactMap {
        $0["key"]
      } ?? []
    }
    #expect(try await keys("raw") == ["B", "a", "b"])
    #expect(try await keys("icu") == ["a", "b", "B"])
  }

  @Test func includedDocumentsCarryTheirConflicts() async throws {
    let server = try await server("conflicts.db")
    let branch: JSON = [
      "new_edits": false,
      "docs": [["_id": "d1", "_rev": "1-ffff", "k": 1]],
    ]
    #expect(try await server.post("/db/_bulk_docs", branch).status == 201)
    let answer = try await server.get(
      "/db/_design/t/_view/k?reduce=false&key=1&include_docs=true&conflicts=true")
    let rows = try #require(answer.json["rows"]?.arrayValue, "\(answer.text)")
    #expect(rows.count == 3)
    for row in rows {
      let conflicts = row["doc"]?["_conflicts"]
      // d1's winner is 1-ffff (the greater revision); its loser is the first write.
      #expect(
        row["id"] == "d1" ? conflicts?.arrayValue?.count == 1 : conflicts == nil,
        "\(row)")
    }
  }
}

/// `_bulk_get` without `rev` lists a document's leaves in CouchDB's order (depth first
/// through its revision tree, siblings by revision, trees from the greatest root down),
/// and a `new_edits: false` attachment written without `revpos` keeps 0 as CouchDB keeps
/// it.
@Suite("settee serve: revision trees and attachments as CouchDB 3.5 lists them")
struct RevisionTreeOrderTests {
  let directory = TemporaryDirectory()

  @Test func bulkGetListsLeavesInTreeOrder() async throws {
    let server = try await ServerProcess(db: directory.path("tree.db"))
    try await server.request("PUT", "/db")
    func branch(_ id: String, _ revs: [String]) -> JSON {
      let leaf = revs[0]
      let generation = Int64(revs.count)
      return [
        "_id": .string(id), "_rev": .string("\(generation)-\(leaf)"),
        "_revisions": ["start": .int(generation), "ids": .array(revs.map { .string($0) })],
      ]
    }
    // One tree: 1-a0 with children 2-b0 (→ 3-c1, and 3-c0 → 4-d0) and 2-b1 (a leaf).
    // Two more roots: 1-e0 (a leaf) and 1-f0 → 2-f1.
    let docs: [JSON] = [
      branch("x", ["b1", "a0"]), branch("x", ["d0", "c0", "b0", "a0"]),
      branch("x", ["c1", "b0", "a0"]), branch("x", ["e0"]), branch("x", ["f1", "f0"]),
    ]
    #expect(
      try await server.post("/db/_bulk_docs", ["new_edits": false, "docs": .array(docs)]).status
        == 201)
    let answer = try await server.post("/db/_bulk_get", ["docs": [["id": "x"]]])
    let revs = answer.json["results"]?[0]?["docs"]?.arrayValue?.compactMap { $0["ok"]?["_rev"] }
    // Trees from the greatest root (1-f0, then 1-e0, then 1-a0), each depth first.
    #expect(revs == ["2-f1", "1-e0", "4-d0", "3-c1", "2-b1"], "\(answer.text)")
  }

  @Test func attachmentsWrittenWithoutRevposKeepZero() async throws {
    let server = try await ServerProcess(db: directory.path("revpos.db"))
    try await server.request("PUT", "/db")
    let docs: JSON = [
      "new_edits": false,
      "docs": [
        [
          "_id": "a", "_rev": "3-aaaa",
          "_revisions": ["start": 3, "ids": ["aaaa", "bbbb", "cccc"]],
          "_attachments": [
            "given.bin": ["content_type": "application/octet-stream", "data": "AQID", "revpos": 2],
            "none.bin": ["content_type": "application/octet-stream", "data": "BAUG"],
          ],
        ]
      ],
    ]
    #expect(try await server.post("/db/_bulk_docs", docs).status == 201)
    let stubs = try await server.get("/db/a").json["_attachments"]
    #expect(stubs?["given.bin"]?["revpos"] == 2, "\(stubs ?? nil)")
    #expect(stubs?["none.bin"]?["revpos"] == 0, "\(stubs ?? nil)")
    // revpos 0 tells nothing of when it was written: atts_since still sends its data.
    let since = try await server.get("/db/a?atts_since=%5B%222-bbbb%22%5D").json["_attachments"]
    #expect(since?["none.bin"]?["data"] == "BAUG", "\(since ?? nil)")
    #expect(since?["given.bin"]?["stub"] == true, "\(since ?? nil)")
  }
}
