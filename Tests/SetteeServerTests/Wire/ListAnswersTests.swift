import Foundation
import Settee
import SetteeCore
import SetteeJavaScript
import SetteeTestSupport
import Testing

/// `_all_docs`, `_design_docs` and views answer `total_rows`, `offset` and `update_seq` as
/// CouchDB 3.5 does, and `_changes` carries an `ETag` (issue 55, items 4, 7 and 8; the
/// conformance recording is the contract).
@Suite("settee serve: list answers' counts, offsets and ETags, as CouchDB 3.5")
struct ListAnswersTests {
  let directory = TemporaryDirectory()

  @Test func offsetsTotalsAndSequences() async throws {
    let server = try await ServerProcess(db: directory.path("lists.db"))
    try await server.request("PUT", "/db")
    // Ids in code-point order: the two design documents, then d0 … d9.
    var docs: [JSON] = (0..<10).map { ["_id": .string("d\($0)"), "n": .int(Int64($0 % 5))] }
    docs.append(["_id": "_design/a", "language": "settee", "views": ["n": ["key": "n"]]])
    docs.append(["_id": "_design/b"])
    #expect(try await server.post("/db/_bulk_docs", ["docs": .array(docs)]).status == 201)

    let table: [(method: String, path: String, body: JSON?, total: JSON, offset: JSON, rows: Int)] = [
      ("GET", "/db/_all_docs?startkey=%22d3%22&limit=2", nil, 12, 5, 2),
      // startkey_docid stands for a missing startkey.
      ("GET", "/db/_all_docs?startkey_docid=d3&limit=2", nil, 12, 5, 2),
      // key wins over startkey and endkey.
      ("GET", "/db/_all_docs?key=%22d5%22&startkey=%22d1%22&endkey=%22d2%22", nil, 12, 7, 1),
      ("GET", "/db/_all_docs?key=%22d5%22&startkey_docid=_design%2Fz", nil, 12, 7, 1),
      // A reversed range: no rows, the offset where it starts.
      ("GET", "/db/_all_docs?startkey=%22d7%22&endkey=%22d2%22", nil, 12, 9, 0),
      // By keys: no offset.
      ("POST", "/db/_all_docs", ["keys": ["d1", "d2"]], 12, nil, 2),
      // _design_docs counts the design documents, and gives that count as its offset.
      ("GET", "/db/_design_docs", nil, 2, 2, 2),
      ("GET", "/db/_design_docs?descending=true", nil, 2, 2, 2),
      // Views give their offset, by keys too (where the first key's rows start).
      ("GET", "/db/_design/a/_view/n?key=3", nil, 10, 6, 2),
      ("GET", "/db/_design/a/_view/n?startkey=2&skip=1", nil, 10, 5, 5),
      ("GET", "/db/_design/a/_view/n?descending=true&key=3", nil, 10, 2, 2),
      ("POST", "/db/_design/a/_view/n", ["keys": [4, 0]], 10, 8, 4),
    ]
    for row in table {
      let answer = try await server.request(row.method, row.path, json: row.body)
      #expect(answer.status == 200, "\(row.path): \(answer.text)")
      #expect(answer.json["total_rows"] == row.total, "\(row.path): \(answer.text)")
      #expect(answer.json["offset"] == row.offset, "\(row.path): \(answer.text)")
      #expect(answer.json["rows"]?.arrayValue?.count == row.rows, "\(row.path): \(answer.text)")
    }
    for path in ["/db/_all_docs?update_seq=true&limit=0", "/db/_design/a/_view/n?update_seq=true&limit=0"] {
      let sequence = try await server.get(path).json["update_seq"]?.stringValue
      #expect(sequence?.hasPrefix("12-") == true, "\(path): \(sequence ?? "none")")
    }
  }

  @Test func changesCarryAnETag() async throws {
    let server = try await ServerProcess(db: directory.path("changes.db"))
    try await server.request("PUT", "/db")
    try await server.put("/db/a", ["n": 1])
    let first = try await server.get("/db/_changes")
    let etag = try #require(first.headers["etag"])
    #expect(try await server.get("/db/_changes").headers["etag"] == etag)
    // The same state and query: 304; another query or a write: another ETag.
    let again = try await server.request("GET", "/db/_changes", headers: ["If-None-Match": etag])
    #expect(again.status == 304)
    #expect(try await server.get("/db/_changes?limit=1").headers["etag"] != etag)
    try await server.put("/db/b", ["n": 2])
    #expect(try await server.get("/db/_changes").headers["etag"] != etag)
  }

  /// A deletion is given as its tombstone, with the body it was deleted with, to
  /// `include_docs` and to a selector (`{"_deleted": true}` finds deletions), as CouchDB
  /// gives it.
  @Test func deletionsAsTheirTombstones() async throws {
    let server = try await ServerProcess(db: directory.path("tombstones.db"))
    try await server.request("PUT", "/db")
    let written = try await server.put("/db/a", ["n": 1])
    let rev = try #require(written.json["rev"]?.stringValue)
    try await server.put("/db/a", ["_rev": .string(rev), "_deleted": true, "note": "gone"])
    try await server.put("/db/b", ["n": 2])
    let changes = try await server.get("/db/_changes?include_docs=true").json["results"]
    let deleted = changes?.arrayValue?.first { $0["id"] == "a" }
    #expect(deleted?["deleted"] == true && deleted?["doc"]?["note"] == "gone", "\(changes ?? nil)")
    #expect(deleted?["doc"]?["_deleted"] == true)
    let selected = try await server.post(
      "/db/_changes?filter=_selector", ["selector": ["_deleted": true]]
    ).json["results"]
    #expect(selected?.arrayValue?.compactMap { $0["id"] } == ["a"], "\(selected ?? nil)")
  }

  /// A map function sees `_conflicts` (CouchDB's documented way to list conflicts with a
  /// view), and the view follows a document as its branches come and go.
  @Test(.enabled(if: DesignFunctions.isAvailable))
  func mapFunctionsSeeConflicts() async throws {
    let server = try await ServerProcess(db: directory.path("conflicts.db"))
    try await server.request("PUT", "/db")
    try await server.put(
      "/db/_design/c",
      ["views": ["conflicts": ["map": "function(doc) { if (doc._conflicts) emit(doc._conflicts.length, doc._conflicts); }"]]])
    let branches: JSON = [
      "new_edits": false,
      "docs": [
        ["_id": "d", "_rev": "2-bbbb", "_revisions": ["start": 2, "ids": ["bbbb", "aaaa"]]],
        ["_id": "d", "_rev": "2-cccc", "_revisions": ["start": 2, "ids": ["cccc", "aaaa"]]],
        ["_id": "e", "_rev": "1-eeee"],
      ],
    ]
    #expect(try await server.post("/db/_bulk_docs", branches).status == 201)
    let rows = try await server.get("/db/_design/c/_view/conflicts").json["rows"]
    #expect(rows == [["id": "d", "key": 1, "value": ["2-bbbb"]]], "\(rows ?? nil)")
    // Deleting the losing branch ends the conflict, and the view follows.
    #expect(try await server.request("DELETE", "/db/d?rev=2-bbbb").status == 200)
    #expect(try await server.get("/db/_design/c/_view/conflicts").json["rows"] == [])
  }

  /// With `style=all_docs`, a selector judges every leaf and the entry lists those that
  /// pass, as CouchDB's feed does.
  @Test func allDocsStyleJudgesEachLeaf() async throws {
    let server = try await ServerProcess(db: directory.path("leaves.db"))
    try await server.request("PUT", "/db")
    let branches: JSON = [
      "new_edits": false,
      "docs": [
        ["_id": "d", "_rev": "2-bbbb", "_revisions": ["start": 2, "ids": ["bbbb", "aaaa"]], "t": "x"],
        ["_id": "d", "_rev": "2-cccc", "_revisions": ["start": 2, "ids": ["cccc", "aaaa"]], "t": "y"],
        ["_id": "e", "_rev": "1-eeee", "t": "y"],
      ],
    ]
    #expect(try await server.post("/db/_bulk_docs", branches).status == 201)
    func listed(_ t: String, style: String) async throws -> [JSON] {
      let answer = try await server.post(
        "/db/_changes?filter=_selector&style=\(style)", ["selector": ["t": .string(t)]])
      return answer.json["results"]?.arrayValue ?? []
    }
    // The winner 2-cccc is "y"; the losing leaf 2-bbbb is "x".
    let x = try await listed("x", style: "all_docs")
    #expect(x.map { $0["id"] } == ["d"] && x.first?["changes"] == [["rev": "2-bbbb"]], "\(x)")
    #expect(try await listed("x", style: "main_only").isEmpty)
    let y = try await listed("y", style: "all_docs")
    #expect(y.map { $0["id"] } == ["d", "e"] && y.first?["changes"] == [["rev": "2-cccc"]], "\(y)")
  }

  /// A design document's `_info` in CouchDB's shape: its language, a signature of its
  /// views, and how many changes its views have yet to read.
  @Test(.enabled(if: DesignFunctions.isAvailable))
  func designInfo() async throws {
    let server = try await ServerProcess(db: directory.path("info.db"))
    try await server.request("PUT", "/db")
    try await server.put("/db/_design/v", ["views": ["n": ["map": "function(doc) { emit(doc.n); }"]]])
    try await server.put("/db/a", ["n": 1])
    let before = try await server.get("/db/_design/v/_info").json["view_index"]
    #expect(before?["language"] == "javascript")
    #expect(before?["signature"]?.stringValue?.count == 32)
    #expect(before?["updates_pending"]?["total"] == 2, "\(before ?? nil)")
    _ = try await server.get("/db/_design/v/_view/n")
    let after = try await server.get("/db/_design/v/_info").json["view_index"]
    #expect(after?["updates_pending"]?["total"] == 0, "\(after ?? nil)")
    #expect(after?["signature"] == before?["signature"])
  }

  /// `_index` as CouchDB keeps it: an unnamed index named (and put in a design document
  /// named) as CouchDB names it, the listing by design document then name with
  /// `partitioned`, and the design document's `options.def` as the request gave it.
  @Test func indexesAsCouchDBNamesAndListsThem() async throws {
    let server = try await ServerProcess(db: directory.path("indexes.db"))
    try await server.request("PUT", "/db")
    let unnamed = try await server.post(
      "/db/_index", ["index": ["fields": ["name"]], "ddoc": "mango-c", "type": "json"])
    #expect(unnamed.json["name"] == "7e7070ae9a407fc3705687d27d573409610c4966", "\(unnamed.text)")
    #expect(unnamed.json["id"] == "_design/mango-c")
    let anonymous = try await server.post("/db/_index", ["index": ["fields": ["n"]]])
    let name = try #require(anonymous.json["name"]?.stringValue)
    #expect(name.count == 40 && anonymous.json["id"] == .string("_design/" + name))
    try await server.post(
      "/db/_index",
      ["index": ["fields": ["score"], "partial_filter_selector": ["active": true]], "ddoc": "a", "name": "z"])
    let listed = try await server.get("/db/_index").json["indexes"]?.arrayValue ?? []
    let order = listed.dropFirst().map { "\($0["ddoc"]?.stringValue ?? "") \($0["name"]?.stringValue ?? "")" }
    #expect(order == order.sorted(), "\(order)")
    #expect(listed.dropFirst().allSatisfy { $0["partitioned"] == false })
    #expect(listed.last.map { Array(($0.objectValue ?? [:]).map(\.key)) } == ["ddoc", "name", "type", "partitioned", "def"])
    let design = try await server.get("/db/_design/a").json
    #expect(design["views"]?["z"]?["options"]?["def"] == ["fields": ["score"], "partial_filter_selector": ["active": true]])
    #expect(design["views"]?["z"]?["map"]?["partial_filter_selector"] == ["active": ["$eq": true]])
    // The same index again: "exists", and its design document keeps its revision
    // (recording #908).
    let again = try await server.post(
      "/db/_index",
      ["index": ["fields": ["score"], "partial_filter_selector": ["active": true]], "ddoc": "a", "name": "z"])
    #expect(again.json["result"] == "exists", "\(again.text)")
    #expect(try await server.get("/db/_design/a").json["_rev"] == design["_rev"])
  }
}
