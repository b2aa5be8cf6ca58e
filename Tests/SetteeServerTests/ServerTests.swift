import Foundation
import Settee
import SetteeCore
import SetteeTestSupport
import Testing

/// `settee serve` from outside: the built binary on a free loopback port, spoken to over
/// HTTP as CouchDB's clients do. Each test starts its own server on its own file.
@Suite("settee serve: CouchDB's HTTP API")
struct ServerTests {
  let directory = TemporaryDirectory()

  func start(_ name: String = "served.db") throws -> ServerProcess {
    try ServerProcess(db: directory.path(name))
  }

  @Test func serverEndpoints() async throws {
    let server = try start()
    let welcome = try await server.get("/")
    #expect(welcome.status == 200)
    #expect(welcome.json["couchdb"] == "Welcome")
    #expect(welcome.json["vendor"]?["name"] == "Settee")
    #expect(welcome.headers["content-type"] == "application/json")
    let uuid = try #require(welcome.json["uuid"]?.stringValue)
    #expect(uuid.count == 32)

    let table: [(path: String, status: Int, check: @Sendable (JSON) -> Bool)] = [
      ("/_up", 200, { $0["status"] == "ok" }),
      ("/_all_dbs", 200, { $0 == [] }),
      ("/_uuids?count=3", 200, { Set(($0["uuids"]?.arrayValue ?? [])).count == 3 }),
      ("/_uuids?count=1001", 400, { $0["error"] == "bad_request" }),
      ("/_session", 200, { $0["userCtx"]?["roles"] == ["_admin"] }),
      ("/_active_tasks", 200, { $0 == [] }),
      ("/_scheduler/jobs", 200, { $0["jobs"] == [] }),
      ("/_dbs_info", 200, { $0 == [] }),
      ("/_nonsense", 400, { $0["error"] == "illegal_database_name" }),
      ("/Bad", 400, { $0["error"] == "illegal_database_name" }),
      ("/..%2F..%2Fetc", 400, { $0["error"] == "illegal_database_name" }),
      ("/missing", 404, { $0 == ["error": "not_found", "reason": "Database does not exist."] }),
    ]
    for row in table {
      let answer = try await server.get(row.path)
      #expect(answer.status == row.status, "\(row.path): \(answer.text)")
      #expect(row.check(answer.json), "\(row.path): \(answer.text)")
    }
    // The uuid belongs to the file: a restart gives the same one.
    server.stop()
    let again = try start()
    #expect(try await again.get("/").json["uuid"]?.stringValue == uuid)
  }

  @Test func databases() async throws {
    let server = try start()
    let made = try await server.request("PUT", "/people")
    #expect(made.status == 201 && made.json == ["ok": true])
    #expect(made.headers["location"] == "/people")
    #expect(try await server.request("PUT", "/people").error == "file_exists")
    #expect(try await server.request("PUT", "/people").status == 412)
    #expect(try await server.request("PUT", "/a%2Fb").status == 201)
    #expect(try await server.get("/_all_dbs").json == ["a/b", "people"])
    #expect(try await server.request("HEAD", "/people").status == 200)
    #expect(try await server.request("HEAD", "/nobody").status == 404)
    try await server.put("/people/p1", ["n": 1])
    let info = try await server.get("/people").json
    #expect(info["db_name"] == "people")
    #expect(info["doc_count"] == 1)
    #expect(info["doc_del_count"] == 0)
    #expect(info["update_seq"]?.stringValue?.hasPrefix("1-") == true)
    #expect(info["sizes"]?["file"]?.int64Value ?? 0 > 0)
    let dbsInfo = try await server.post("/_dbs_info", ["keys": ["people", "nobody"]]).json
    #expect(dbsInfo[0]?["info"]?["doc_count"] == 1)
    #expect(dbsInfo[1]?["error"] == "not_found")

    #expect(try await server.request("DELETE", "/people?rev=1-x").status == 400)
    #expect(try await server.delete("/people").json == ["ok": true])
    #expect(try await server.get("/people").status == 404)
    #expect(try await server.delete("/people").status == 404)
    #expect(try await server.put("/people/p1", ["n": 1]).status == 404)
    #expect(try await server.request("PUT", "/people").status == 201)
    #expect(try await server.get("/people/p1").status == 404)
    #expect(try await server.get("/people").json["doc_count"] == 0)
  }

  @Test func documents() async throws {
    let server = try start()
    try await server.request("PUT", "/db")
    let created = try await server.put("/db/doc", ["n": 1])
    #expect(created.status == 201)
    let rev1 = try #require(created.json["rev"]?.stringValue)
    #expect(created.headers["etag"] == "\"\(rev1)\"")
    #expect(created.headers["location"] == "/db/doc")
    #expect(try await server.put("/db/doc", ["n": 2]).error == "conflict")
    #expect(try await server.put("/db/doc", ["n": 2]).status == 409)
    let updated = try await server.put("/db/doc?rev=\(rev1)", ["n": 2])
    #expect(updated.status == 201)
    let rev2 = try #require(updated.json["rev"]?.stringValue)
    let read = try await server.get("/db/doc")
    #expect(read.json == ["_id": "doc", "_rev": .string(rev2), "n": 2])
    #expect(read.headers["etag"] == "\"\(rev2)\"")
    let head = try await server.request("HEAD", "/db/doc")
    #expect(head.status == 200 && head.body.isEmpty && head.headers["etag"] == "\"\(rev2)\"")
    let history = try await server.get("/db/doc?revs=true&revs_info=true").json
    #expect(history["_revisions"]?["start"] == 2)
    #expect(history["_revs_info"]?.arrayValue?.count == 2)
    // A replaced revision keeps its body until _compact, as in CouchDB.
    #expect(try await server.get("/db/doc?rev=\(rev1)").json["n"] == 1)
    #expect(history["_revs_info"]?[1]?["status"] == "available")
    // A design document's views compact without touching the documents; JSON only.
    #expect(try await server.request("POST", "/db/_compact/nope", json: [:]).status == 404)
    #expect(try await server.request("POST", "/db/_compact").error == "bad_content_type")
    #expect(try await server.request("POST", "/db/_view_cleanup").status == 415)
    #expect(try await server.put("/db/_design/v", ["views": [:]]).status == 201)
    #expect(try await server.request("POST", "/db/_compact/v", json: [:]).status == 202)
    #expect(try await server.get("/db/doc?rev=\(rev1)").json["n"] == 1)
    let compacted = try await server.request("POST", "/db/_compact", json: [:])
    #expect(compacted.status == 202 && compacted.json == ["ok": true])
    #expect(try await server.get("/db").json["compact_running"] == false)
    #expect(try await server.get("/db/doc?rev=\(rev1)").json["reason"] == "missing")
    #expect(try await server.get("/db/doc?rev=bogus").error == "bad_request")
    // If-Match carries the revision too.
    let viaHeader = try await server.request(
      "PUT", "/db/doc", json: ["n": 3], headers: ["If-Match": rev2])
    #expect(viaHeader.status == 201)
    let rev3 = try #require(viaHeader.json["rev"]?.stringValue)

    #expect(try await server.delete("/db/doc").status == 409)
    let deleted = try await server.delete("/db/doc?rev=\(rev3)")
    #expect(deleted.status == 200 && deleted.json["ok"] == true)
    #expect(try await server.get("/db/doc").json == ["error": "not_found", "reason": "deleted"])
    #expect(try await server.get("/db/never").json == ["error": "not_found", "reason": "missing"])

    let posted = try await server.post("/db", ["kind": "generated"])
    #expect(posted.status == 201)
    #expect(posted.json["id"]?.stringValue?.count == 32)

    // Design documents, with or without %2F.
    #expect(try await server.put("/db/_design/app", ["views": [:]]).status == 201)
    #expect(try await server.get("/db/_design%2Fapp").json["_id"] == "_design/app")
    #expect(try await server.get("/db/_design/app/_info").json["name"] == "app")
    #expect(try await server.get("/db/_design/app/_show/x").status == 400)

    let errors:
      [(method: String, path: String, body: [UInt8]?, type: String?, status: Int, error: String)] =
        [
          ("PUT", "/db/_bad", Array("{}".utf8), nil, 400, "illegal_docid"),
          ("PUT", "/db/x", Array("{not json".utf8), nil, 400, "bad_request"),
          ("PUT", "/db/x", Array("[1]".utf8), nil, 400, "bad_request"),
          ("POST", "/db", Array("{}".utf8), "text/plain", 415, "bad_content_type"),
          ("POST", "/db/_bulk_docs", Array("{}".utf8), "application/json", 400, "bad_request"),
          ("PATCH", "/db/x", nil, nil, 405, "method_not_allowed"),
          (
            "PUT", "/db/x", Array(#"{"_attachments":{"a":{"stub":true}}}"#.utf8), nil, 412,
            "missing_stub"
          ),
        ]
    for row in errors {
      var headers: [String: String] = [:]
      if let type = row.type { headers["Content-Type"] = type }
      let answer = try await server.request(row.method, row.path, body: row.body, headers: headers)
      #expect(answer.status == row.status, "\(row.method) \(row.path): \(answer.text)")
      #expect(answer.error == row.error, "\(row.method) \(row.path): \(answer.text)")
      #expect(answer.json["reason"]?.stringValue?.isEmpty == false)
    }
  }

  @Test func attachments() async throws {
    let server = try start()
    try await server.request("PUT", "/db")
    let bytes = (0..<600_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 11) }  // three chunks
    let put = try await server.request(
      "PUT", "/db/doc/photos/a.bin", body: bytes, headers: ["Content-Type": "image/x-test"])
    #expect(put.status == 201, "\(put.text)")
    let rev = try #require(put.json["rev"]?.stringValue)
    let read = try await server.get("/db/doc/photos/a.bin")
    #expect(read.status == 200)
    #expect(read.body == bytes)
    #expect(read.headers["content-type"] == "image/x-test")
    // CouchDB's headers: the digest's base64 as the ETag, a sandbox for HTML.
    let digest = Data(MD5.hash(bytes)).base64EncodedString()
    #expect(read.headers["etag"] == "\"\(digest)\"")
    #expect(read.headers["content-security-policy"] == "sandbox")
    let stub = try await server.get("/db/doc").json["_attachments"]?["photos/a.bin"]
    #expect(stub?["stub"] == true)
    #expect(stub?["length"] == 600_000)
    let inline = try await server.get("/db/doc?attachments=true").json["_attachments"]?[
      "photos/a.bin"]
    #expect(inline?["data"]?.stringValue == Data(bytes).base64EncodedString())
    #expect(try await server.get("/db/doc/nothing.txt").status == 404)
    // Without the current revision the document is not changed.
    #expect(
      try await server.request(
        "PUT", "/db/doc/b.txt", body: [1], headers: ["Content-Type": "text/plain"]
      )
      .status == 409)
    let removed = try await server.request("DELETE", "/db/doc/photos/a.bin?rev=\(rev)")
    #expect(removed.status == 200)
    #expect(try await server.get("/db/doc/photos/a.bin").status == 404)
  }

  @Test func localDocuments() async throws {
    let server = try start()
    try await server.request("PUT", "/db")
    let put = try await server.put("/db/_local/checkpoint", ["seq": 5])
    #expect(put.status == 201)
    #expect(put.json == ["ok": true, "id": "_local/checkpoint", "rev": "0-1"])
    #expect(
      try await server.get("/db/_local/checkpoint").json == [
        "_id": "_local/checkpoint", "_rev": "0-1", "seq": 5,
      ])
    #expect(try await server.get("/db/_local%2Fcheckpoint").json["seq"] == 5)
    #expect(
      try await server.put("/db/_local/checkpoint", ["seq": 6, "_rev": "0-1"]).json["rev"] == "0-2")
    let listed = try await server.get("/db/_local_docs").json["rows"]
    #expect(
      listed == [["id": "_local/checkpoint", "key": "_local/checkpoint", "value": ["rev": "0-2"]]])
    // Local documents are not in the changes feed, all_docs or the count.
    #expect(try await server.get("/db/_changes").json["results"] == [])
    #expect(try await server.get("/db").json["doc_count"] == 0)
    #expect(try await server.delete("/db/_local/checkpoint?rev=0-2").json["ok"] == true)
    #expect(try await server.get("/db/_local/checkpoint").status == 404)
  }
}
