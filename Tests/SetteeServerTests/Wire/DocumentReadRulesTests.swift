import Foundation
import Settee
import SetteeCore
import SetteeTestSupport
import Testing

/// `GET /{db}/{id}` with CouchDB 3.5's rules for meta members and `ETag` (issue 55, item 8;
/// the conformance recording is the contract): `_revs_info`, `_conflicts`,
/// `_deleted_conflicts` and `_local_seq` come with the winner (which `latest` opens whatever
/// the `rev`), never with a given `rev` alone or with `open_revs`; an answer that
/// carries any of them has no `ETag`.
@Suite("settee serve: a document's meta members and ETag, as CouchDB 3.5")
struct DocumentReadRulesTests {
  let directory = TemporaryDirectory()

  @Test func metaMembersAndETags() async throws {
    let server = try await ServerProcess(db: directory.path("meta.db"))
    try await server.request("PUT", "/db")
    // Two branches from 1-a: 2-b (the winner) and 2-c.
    let branches: JSON = [
      "new_edits": false,
      "docs": [
        ["_id": "d", "_rev": "2-bbbb", "n": 2, "_revisions": ["start": 2, "ids": ["bbbb", "aaaa"]]],
        ["_id": "d", "_rev": "2-cccc", "n": 3, "_revisions": ["start": 2, "ids": ["cccc", "aaaa"]]],
      ],
    ]
    #expect(try await server.post("/db/_bulk_docs", branches).status == 201)
    let meta: Set = ["_revs_info", "_conflicts", "_deleted_conflicts", "_local_seq"]
    let table: [(query: String, rev: String, members: Set<String>)] = [
      ("", "2-cccc", []),
      ("?conflicts=true", "2-cccc", ["_conflicts"]),
      ("?local_seq=true", "2-cccc", ["_local_seq"]),
      ("?revs_info=true", "2-cccc", ["_revs_info"]),
      ("?meta=true", "2-cccc", ["_revs_info", "_conflicts"]),
      ("?revs=true", "2-cccc", []),
      // A given revision: no meta members.
      ("?rev=2-bbbb&meta=true&local_seq=true", "2-bbbb", []),
      // With latest, CouchDB 3.5 opens the winner whatever the rev (a leaf that lost
      // included: recording #533), with its meta members.
      ("?rev=2-bbbb&latest=true&local_seq=true&conflicts=true", "2-cccc", ["_local_seq", "_conflicts"]),
      ("?rev=1-aaaa&latest=true", "2-cccc", []),
      // A revision the document does not know, with latest: the winner.
      ("?rev=7-ffff&latest=true", "2-cccc", []),
    ]
    for row in table {
      let answer = try await server.get("/db/d" + row.query)
      #expect(answer.status == 200, "\(row.query): \(answer.text)")
      let keys = Set(answer.json.objectValue?.keys ?? [])
      #expect(keys.intersection(meta) == row.members, "\(row.query): \(answer.text)")
      #expect(answer.json["_rev"]?.stringValue == row.rev, "\(row.query)")
      let etag = answer.headers["etag"]
      #expect((etag == nil) == !row.members.isEmpty, "\(row.query): ETag \(etag ?? "none")")
      if let etag { #expect(etag == "\"\(row.rev)\"") }
    }
    let local = try await server.get("/db/d?local_seq=true").json["_local_seq"]
    #expect(local?.int64Value ?? 0 > 0)
    // open_revs: never meta members, with or without latest.
    for query in ["open_revs=all&meta=true&local_seq=true", "open_revs=all&latest=true&revs_info=true"] {
      let answer = try await server.get("/db/d?" + query).json.arrayValue ?? []
      #expect(answer.count == 2)
      for entry in answer {
        let keys = Set(entry["ok"]?.objectValue?.keys ?? [])
        #expect(keys.intersection(meta).isEmpty, "\(query): \(entry)")
      }
    }
  }

  /// `_bulk_get` without `rev` gives every leaf, tombstones too; leaves come in CouchDB's
  /// order (generation, then digest) there, in `open_revs` and in `_revs_diff` (issue 55,
  /// items 5 and 8).
  @Test func leavesInCouchDBsOrder() async throws {
    let server = try await ServerProcess(db: directory.path("leaves.db"))
    try await server.request("PUT", "/db")
    let docs: JSON = [
      "new_edits": false,
      "docs": [
        ["_id": "d", "_rev": "2-cccc", "n": 3, "_revisions": ["start": 2, "ids": ["cccc", "aaaa"]]],
        ["_id": "d", "_rev": "1-ffff", "n": 1],
        ["_id": "d", "_rev": "2-bbbb", "_deleted": true, "_revisions": ["start": 2, "ids": ["bbbb", "aaaa"]]],
        ["_id": "gone", "_rev": "1-dddd", "_deleted": true],
      ],
    ]
    #expect(try await server.post("/db/_bulk_docs", docs).status == 201)
    let ascending: JSON = ["1-ffff", "2-bbbb", "2-cccc"]
    let all = try await server.get("/db/d?open_revs=all").json.arrayValue ?? []
    #expect(JSON.array(all.map { $0["ok"]?["_rev"] ?? nil }) == ascending)
    let bulk = try await server.post(
      "/db/_bulk_get", ["docs": [["id": "d"], ["id": "gone"], ["id": "nobody"]]]
    ).json["results"]
    #expect(JSON.array(bulk?[0]?["docs"]?.arrayValue?.map { $0["ok"]?["_rev"] ?? nil } ?? []) == ascending)
    #expect(bulk?[1]?["docs"]?[0]?["ok"]?["_deleted"] == true)
    #expect(bulk?[2]?["docs"]?[0]?["error"]?["rev"] == "undefined")
    let diff = try await server.post("/db/_revs_diff", ["d": ["9-aaaa", "3-bbbb", "3-aaaa", "1-ffff"]])
    #expect(diff.json["d"]?["missing"] == ["3-aaaa", "3-bbbb", "9-aaaa"], "\(diff.text)")
  }
}
