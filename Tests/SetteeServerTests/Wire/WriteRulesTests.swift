import Foundation
import Settee
import SetteeCore
import SetteeJavaScript
import SetteeTestSupport
import Testing

/// Writes answer as CouchDB 3.5 answers them (issue 55, items 6 and 9; the conformance
/// recording is the contract).
@Suite("settee serve: writes, as CouchDB 3.5 answers them")
struct WriteRulesTests {
  let directory = TemporaryDirectory()

  @Test func writesStatusesAndHeaders() async throws {
    let server = try await ServerProcess(db: directory.path("writes.db"))
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

  /// Tombstones, stale revisions, `_bulk_docs`' new tombstones and local documents, the
  /// whole-request refusal of a `new_edits: false` document without its revision, and
  /// the parameters CouchDB reads leniently.
  @Test func revisionsTombstonesAndBulkWrites() async throws {
    let server = try await ServerProcess(db: directory.path("revisions.db"))
    try await server.request("PUT", "/db")
    let first = try await server.put("/db/a", ["n": 1])
    let rev1 = try #require(first.json["rev"]?.stringValue)
    let deleted = try await server.request("DELETE", "/db/a?rev=\(rev1)")
    let tombstone = try #require(deleted.json["rev"]?.stringValue)
    // A deleted document is not edited through its tombstone; without a rev it comes back.
    let edit = try await server.put("/db/a", ["_rev": .string(tombstone), "n": 2])
    #expect(edit.status == 409 && edit.error == "conflict", "\(edit.text)")
    let again = try await server.put("/db/a", ["n": 3])
    #expect(again.status == 201 && again.json["rev"]?.stringValue?.hasPrefix("3-") == true)

    // ?rev= and If-Match that differ: refused; a boolean option CouchDB does not read as
    // true is false.
    let rev3 = try #require(again.json["rev"]?.stringValue)
    let both = try await server.request(
      "PUT", "/db/a?rev=\(rev3)", json: ["n": 4], headers: ["If-Match": rev1])
    #expect(both.status == 400 && both.error == "bad_request", "\(both.text)")
    let lenient = try await server.get("/db/a?revs=maybe")
    #expect(lenient.status == 200 && lenient.json["_revisions"] == nil, "\(lenient.text)")
    let changes = try await server.get("/db/_changes?limit=-5")
    #expect(changes.status == 200 && changes.json["results"]?.arrayValue?.count == 1)

    // _bulk_docs: a new document written deleted is a tombstone; a local document is
    // written as PUT writes it.
    let bulk = try await server.post(
      "/db/_bulk_docs", ["docs": [["_id": "t", "_deleted": true], ["_id": "_local/l", "v": 1]]])
    let answers = try #require(bulk.json.arrayValue, "\(bulk.text)")
    #expect(answers.count == 2)
    #expect(answers.first?["ok"] == true && answers.first?["rev"]?.stringValue?.hasPrefix("1-") == true)
    #expect(answers.last == ["ok": true, "id": "_local/l", "rev": "0-1"], "\(bulk.text)")
    #expect(try await server.get("/db/t").error == "not_found")
    #expect(try await server.get("/db/_local/l").json["v"] == 1)
    // A malformed document refuses the whole request, as CouchDB checks every document
    // first; a conflict is reported in its place.
    for (bad, error) in [
      (["_id": "_bad"] as JSON, "illegal_docid"), (["_id": "x", "_rev": "bad"], "bad_request"),
      (["_id": "x", "_foo": 1], "doc_validation"), (["_id": 5], "illegal_docid"),
      (["_id": "x", "_attachments": ["a.txt": ["stub": true]]], "missing_stub"),
    ] {
      let whole = try await server.post("/db/_bulk_docs", ["docs": [["_id": "ok"], bad]])
      #expect(whole.error == error && whole.status >= 400, "\(bad): \(whole.text)")
      #expect(try await server.get("/db/ok").status == 404, "\(bad)")
    }
    // new_edits=false without a revision refuses the whole request.
    let unnamed = try await server.post(
      "/db/_bulk_docs", ["new_edits": false, "docs": [["_id": "u", "_rev": "1-aa"], ["_id": "v"]]])
    #expect(unnamed.status == 400 && unnamed.error == "bad_request", "\(unnamed.text)")
    #expect(try await server.get("/db/u").status == 404)

    // Attachments: a stale revision is a conflict, a revision the document never had is
    // CouchDB's `not_found`/`missing_rev` 409.
    let uploaded = try await server.request(
      "PUT", "/db/b/x.txt", body: Array("x".utf8), headers: ["Content-Type": "text/plain"])
    let brev1 = try #require(uploaded.json["rev"]?.stringValue)
    let second = try await server.request(
      "PUT", "/db/b/y.txt?rev=\(brev1)", body: Array("y".utf8), headers: ["Content-Type": "text/plain"])
    #expect(second.status == 201)
    let stale = try await server.request("DELETE", "/db/b/x.txt?rev=\(brev1)")
    #expect(stale.status == 409 && stale.error == "conflict", "\(stale.text)")
    let unknown = try await server.request(
      "PUT", "/db/b/z.txt?rev=1-\(String(repeating: "a", count: 32))", body: Array("z".utf8),
      headers: ["Content-Type": "text/plain"])
    #expect(unknown.status == 409 && unknown.error == "not_found", "\(unknown.text)")
    // COPY replaces the destination whole: its old attachments go.
    let brev2 = try #require(second.json["rev"]?.stringValue)
    let copied = try await server.request(
      "COPY", "/db/a", headers: ["Destination": "b?rev=\(brev2)"])
    #expect(copied.status == 201, "\(copied.text)")
    #expect(try await server.get("/db/b").json["_attachments"] == nil)
    // `N-` names no revision held: not found, as CouchDB reads it.
    #expect(try await server.get("/db/a?rev=3-").status == 404)
  }

  /// Design documents CouchDB refuses are refused: a member of the wrong type
  /// (`invalid_design_doc`) and, where JavaScriptCore is installed, a view function that
  /// does not compile (`compilation_error`); by PUT and by `_bulk_docs` alike.
  @Test func malformedDesignDocumentsAreRefused() async throws {
    let server = try await ServerProcess(db: directory.path("designs.db"))
    try await server.request("PUT", "/db")
    let table: [(design: JSONObject, error: String?)] = [
      (["views": ["v": ["map": 5]]], "invalid_design_doc"),
      (["views": "no"], "invalid_design_doc"),
      (["filters": ["f": 1]], "invalid_design_doc"),
      (["options": ["partitioned": "yes"]], "invalid_design_doc"),
      (["views": ["v": ["map": "function(doc) { emit(doc._id, 1); }", "reduce": "_count"]]], nil),
      (["language": "query", "views": ["v": ["map": ["fields": ["a": "asc"]]]]], nil),
      (["views": ["lib": ["m": "exports.x = 1;"], "v": ["map": "function(doc) { emit(1); }"]]], nil),
    ]
    for (index, row) in table.enumerated() {
      let put = try await server.put("/db/_design/p\(index)", .object(row.design))
      #expect(put.status == (row.error == nil ? 201 : 400), "\(row.design): \(put.text)")
      #expect(put.error == row.error, "\(row.design): \(put.text)")
      var document = row.design
      document["_id"] = .string("_design/b\(index)")
      let bulk = try await server.post("/db/_bulk_docs", ["docs": [.object(document)]])
      #expect(bulk.json[0]?["error"] == row.error.map(JSON.string), "\(bulk.text)")
    }
    if DesignFunctions.isAvailable {
      let broken = try await server.put(
        "/db/_design/c", ["views": ["v": ["map": "function(doc){ emit(doc._id"]]])
      #expect(broken.status == 400 && broken.error == "compilation_error", "\(broken.text)")
    }
  }
}
