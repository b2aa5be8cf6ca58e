import Foundation
import Settee
import SetteeCore
import SetteeTestSupport
import Testing

/// Writes answer as CouchDB 3.5 answers them (issue 55, items 6 and 9; the conformance
/// recording is the contract).
@Suite("settee serve: writes, as CouchDB 3.5 answers them")
struct WriteRulesTests {
  let directory = TemporaryDirectory()

  @Test func writesStatusesAndHeaders() async throws {
    let server = try ServerProcess(db: directory.path("writes.db"))
    try await server.request("PUT", "/db")
    let first = try await server.put(
      "/db/a",
      ["n": 1, "_attachments": ["x.bin": ["content_type": "application/octet-stream", "data": "AAEC"]]])
    #expect(first.status == 201 && first.headers["etag"] != nil)
    let rev1 = try #require(first.json["rev"]?.stringValue)

    // ?rev= and a body _rev that differ: refused.
    let mismatch = try await server.put("/db/a?rev=\(rev1)", ["_rev": "1-ffff", "n": 2])
    #expect(mismatch.status == 400 && mismatch.error == "bad_request", "\(mismatch.text)")
    // A stub keeps an attachment; leaving _attachments out drops them all.
    let kept = try await server.put(
      "/db/a", ["_rev": .string(rev1), "n": 2, "_attachments": ["x.bin": ["stub": true]]])
    #expect(try await server.get("/db/a").json["_attachments"]?["x.bin"] != nil)
    let rev2 = try #require(kept.json["rev"]?.stringValue)
    #expect(try await server.put("/db/a", ["_rev": .string(rev2), "n": 3]).status == 201)
    #expect(try await server.get("/db/a").json["_attachments"] == nil)

    // ETags: a document's PUT has one; POST /{db} and attachment writes have none.
    let posted = try await server.post("/db", ["n": 4])
    #expect(posted.status == 201 && posted.headers["etag"] == nil)
    let uploaded = try await server.request(
      "PUT", "/db/b/t.txt", body: Array("text".utf8), headers: ["Content-Type": "text/plain"])
    #expect(uploaded.status == 201 && uploaded.headers["etag"] == nil, "\(uploaded.text)")
    let rev = try #require(uploaded.json["rev"]?.stringValue)
    let removed = try await server.request("DELETE", "/db/b/t.txt?rev=\(rev)")
    #expect(removed.status == 200 && removed.headers["etag"] == nil)

    // Ids: an underscore id is illegal_docid to write and a 404 to read; an _id that is
    // not a string is illegal_docid.
    let table: [(method: String, path: String, json: JSON?, status: Int, error: String)] = [
      ("PUT", "/db/_bad", ["v": 1], 400, "illegal_docid"),
      ("GET", "/db/_bogus_endpoint", nil, 404, "not_found"),
      ("PUT", "/db/c", ["_id": 5, "v": 1], 400, "illegal_docid"),
    ]
    for row in table {
      let answer = try await server.request(row.method, row.path, json: row.json)
      #expect(answer.status == row.status && answer.error == row.error, "\(row.path): \(answer.text)")
    }

    // Local documents: `revs=true` gives CouchDB's `_revisions`, a delete has an ETag.
    let local = try await server.put("/db/_local/l", ["v": 1])
    #expect(local.json["rev"] == "0-1")
    let read = try await server.get("/db/_local/l?revs=true").json
    #expect(read["_revisions"] == ["start": 0, "ids": ["1"]], "\(read)")
    let gone = try await server.request("DELETE", "/db/_local/l?rev=0-1")
    #expect(gone.status == 200 && gone.headers["etag"] != nil)
  }
}
