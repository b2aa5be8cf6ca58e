import Foundation
import Settee
import SetteeJavaScript
import SetteeCore
import SetteeTestSupport
import Testing

/// What replicators use: `_bulk_docs` with `new_edits`, `_revs_diff`, `_bulk_get`,
/// `open_revs`, `_changes` in every feed, checkpoints in `_local`.
@Suite("settee serve: the replication endpoints and the changes feed")
struct ServerReplicationTests {
  let directory = TemporaryDirectory()

  func start() async throws -> ServerProcess {
    let server = try await ServerProcess(db: directory.path("served.db"))
    try await server.request("PUT", "/db")
    return server
  }

  /// A body past what `_bulk_docs` keeps in memory (4 MB of documents) is spooled and
  /// written in batches after it is read whole: answers in the documents' order, refusals
  /// in place, `new_edits` after `docs` (as PouchDB sends it) obeyed, and a body broken at
  /// its very end writes nothing.
  @Test func largeBulkDocsAreSpooled() async throws {
    let server = try await start()
    let padding = JSON.string(String(repeating: "p", count: 700))
    var docs: [JSON] = (0..<10_000).map { ["_id": .string("d\($0)"), "pad": padding] }
    docs[9_500] = ["_id": "d9499", "pad": "again"]
    let written = try await server.post("/db/_bulk_docs", ["docs": .array(docs)])
    #expect(written.status == 201)
    let answers = try #require(written.json.arrayValue)
    #expect(answers.count == 10_000)
    #expect(answers[9_999]["id"] == "d9999" && answers[9_999]["ok"] == true)
    #expect(answers[9_500]["error"] == "conflict")
    #expect(answers.filter { $0["ok"] == true }.count == 9_999)

    let peer: [JSON] = (0..<8_000).map {
      ["_id": .string("r\($0)"), "_rev": "1-abc", "pad": padding]
    }
    let replicated = try await server.post(
      "/db/_bulk_docs", ["docs": .array(peer), "new_edits": false])
    #expect(replicated.status == 201 && replicated.json == [])
    #expect(try await server.get("/db/r7999").json["_rev"] == "1-abc")
    #expect(try await server.get("/db").json["doc_count"] == 17_999)

    var broken = JSONWriter.bytes(["docs": .array(peer.map { _ in ["pad": padding] })])
    broken.removeLast()
    let refused = try await server.request(
      "POST", "/db/_bulk_docs", body: broken, headers: ["Content-Type": "application/json"])
    #expect(refused.status == 400 && refused.error == "bad_request")
    #expect(try await server.get("/db").json["doc_count"] == 17_999)
  }

  @Test func bulkDocsAndConflicts() async throws {
    let server = try await start()
    let first = try await server.post(
      "/db/_bulk_docs", ["docs": [["_id": "a", "n": 1], ["_id": "b"], ["_id": "a", "n": 2], "x"]])
    #expect(first.status == 400, "a document that is not an object refuses the batch")
    let written = try await server.post(
      "/db/_bulk_docs",
      ["docs": [["_id": "a", "n": 1], ["_id": "b"], ["_id": "a", "n": 2], ["n": 3]]])
    #expect(written.status == 201)
    let answers = try #require(written.json.arrayValue)
    #expect(answers.count == 4)
    #expect(answers[0]["ok"] == true && answers[1]["ok"] == true && answers[3]["ok"] == true)
    #expect(answers[2] == ["id": "a", "error": "conflict", "reason": "Document update conflict."])

    // Two branches from a peer: a conflict, listed by style=all_docs and ?conflicts.
    let branches: [JSON] = [
      ["_id": "c", "_rev": "2-bbb", "_revisions": ["start": 2, "ids": ["bbb", "aaa"]], "v": "b"],
      ["_id": "c", "_rev": "2-ccc", "_revisions": ["start": 2, "ids": ["ccc", "aaa"]], "v": "c"],
    ]
    // A document without its revision refuses the whole batch, as CouchDB refuses it.
    let refused = try await server.post(
      "/db/_bulk_docs",
      ["new_edits": false, "docs": .array(branches + [["_id": "d", "v": "no rev"]])])
    #expect(refused.status == 400 && refused.error == "bad_request", "\(refused.text)")
    #expect(try await server.get("/db/c").status == 404)
    let peer = try await server.post(
      "/db/_bulk_docs", ["new_edits": false, "docs": .array(branches)])
    #expect(peer.status == 201)
    #expect(peer.json == [], "new_edits=false lists only refused documents: \(peer.text)")
    let document = try await server.get("/db/c?conflicts=true&meta=true").json
    #expect(document["_rev"] == "2-ccc")
    #expect(document["_conflicts"] == ["2-bbb"])
    let changes = try await server.get("/db/_changes?style=all_docs").json["results"]?.arrayValue
    let entry = try #require(changes?.first { $0["id"] == "c" })
    #expect(entry["changes"] == [["rev": "2-ccc"], ["rev": "2-bbb"]])
    let withConflicts = try await server.get("/db/_changes?include_docs=true&conflicts=true").json
    let changed = withConflicts["results"]?.arrayValue?.first { $0["id"] == "c" }
    #expect(changed?["doc"]?["_conflicts"] == ["2-bbb"])
    let listed = try await server.get("/db/_all_docs?include_docs=true&conflicts=true").json
    let row = listed["rows"]?.arrayValue?.first { $0["id"] == "c" }
    #expect(row?["doc"]?["_conflicts"] == ["2-bbb"])
    #expect(listed["rows"]?[0]?["doc"]?["_conflicts"] == nil)
    let open = try await server.get("/db/c?open_revs=all&revs=true").json.arrayValue ?? []
    #expect(Set(open.compactMap { $0["ok"]?["_rev"]?.stringValue }) == ["2-bbb", "2-ccc"])
    let asked = try await server.get("/db/c?open_revs=%5B%222-bbb%22,%223-zzz%22%5D").json
    #expect(asked[0]?["ok"]?["v"] == "b")
    #expect(asked[1] == ["missing": "3-zzz"])
  }

  @Test func revsDiffBulkGetAndCheckpoints() async throws {
    let server = try await start()
    let rev = try #require(try await server.put("/db/a", ["n": 1]).json["rev"]?.stringValue)
    let diff = try await server.post("/db/_revs_diff", ["a": [.string(rev), "2-x"], "z": ["1-y"]])
    #expect(
      diff.json == [
        "a": ["missing": ["2-x"], "possible_ancestors": [.string(rev)]], "z": ["missing": ["1-y"]],
      ])
    let missing = try await server.post("/db/_missing_revs", ["a": [.string(rev), "2-x"]])
    #expect(missing.json == ["missing_revs": ["a": ["2-x"]]])

    let bulk = try await server.post(
      "/db/_bulk_get?revs=true",
      ["docs": [["id": "a", "rev": .string(rev)], ["id": "a"], ["id": "nope"]]])
    let results = try #require(bulk.json["results"]?.arrayValue)
    #expect(results.count == 3)
    #expect(results[0]["docs"]?[0]?["ok"]?["_revisions"]?["start"] == 1)
    #expect(results[1]["docs"]?[0]?["ok"]?["_id"] == "a")
    #expect(results[2]["docs"]?[0]?["error"]?["error"] == "not_found")
    let probe = try await server.get("/db/_bulk_get")
    #expect(probe.status == 405 && probe.error == "method_not_allowed")

    let commit = try await server.request("POST", "/db/_ensure_full_commit", json: [:])
    #expect(commit.status == 201 && commit.json == ["ok": true, "instance_start_time": "0"])
    #expect(try await server.get("/db/_revs_limit").json == 1000)
    #expect(try await server.put("/db/_revs_limit", 20).json == ["ok": true])
    #expect(try await server.get("/db/_revs_limit").json == 20)
    #expect(try await server.put("/db/_revs_limit", "x").status == 400)
    #expect(
      try await server.put("/db/_security", ["members": ["names": ["bob"]]]).json == ["ok": true])
    #expect(try await server.get("/db/_security").json["members"]?["names"] == ["bob"])
    // It goes with its database.
    try await server.request("PUT", "/gone")
    try await server.put("/gone/_security", ["admins": ["names": ["x"]]])
    try await server.request("DELETE", "/gone")
    try await server.request("PUT", "/gone")
    #expect(
      try await server.get("/gone/_security").json == [
        "members": ["roles": ["_admin"]], "admins": ["roles": ["_admin"]],
      ])

    let purged = try await server.post("/db/_purge", ["a": [.string(rev)]])
    #expect(purged.json["purged"] == ["a": [.string(rev)]])
    #expect(try await server.get("/db/a").status == 404)
    #expect(try await server.get("/db").json["purge_seq"] == "1")
  }

  @Test func changesFeeds() async throws {
    let server = try await start()
    for id in ["a", "b", "c"] {
      try await server.put("/db/\(id)", ["id": .string(id), "even": .bool(id != "b")])
    }
    let all = try await server.get("/db/_changes").json
    #expect(all["results"]?.arrayValue?.map { $0["id"] } == ["a", "b", "c"])
    let lastSeq = try #require(all["last_seq"]?.stringValue)
    let limited = try await server.get("/db/_changes?limit=1").json
    #expect(limited["results"]?.arrayValue?.count == 1)
    #expect(limited["pending"] == 2)
    let since = try #require(limited["last_seq"]?.stringValue)
    #expect(
      try await server.get("/db/_changes?since=\(since)").json["results"]?.arrayValue?.map {
        $0["id"]
      } == ["b", "c"])
    #expect(try await server.get("/db/_changes?since=now").json["results"] == [])
    #expect(
      try await server.get("/db/_changes?descending=true&limit=1").json["results"]?[0]?["id"] == "c"
    )
    #expect(try await server.get("/db/_changes?since=garbage").status == 400)
    let byIDs = try await server.post("/db/_changes?filter=_doc_ids", ["doc_ids": ["c", "a"]]).json
    #expect(byIDs["results"]?.arrayValue?.map { $0["id"] } == ["a", "c"])
    let bySelector = try await server.post(
      "/db/_changes?filter=_selector&include_docs=true", ["selector": ["even": false]]
    ).json
    #expect(bySelector["results"]?.arrayValue?.map { $0["doc"]?["id"] } == ["b"])
    #expect(try await server.get("/db/_changes?filter=app/mine").status == 404)
    if DesignFunctions.isAvailable {
      // A design document's JavaScript filter, with the request's query parameters in
      // req.query, as CouchDB passes them (issue 47), in a database of its own.
      #expect(try await server.put("/filtered", [:]).status == 201)
      for id in ["a", "b", "c"] {
        try await server.put("/filtered/\(id)", ["even": .bool(id != "b")])
      }
      try await server.put(
        "/filtered/_design/app",
        [
          "filters": [
            "even": "function (doc, req) { return doc.even === (req.query.even === 'true'); }",
            "broken": "function (doc, req) { return doc.nothing.here; }",
          ]
        ])
      let even = try await server.get("/filtered/_changes?filter=app/even&even=true").json
      #expect(even["results"]?.arrayValue?.map { $0["id"] } == ["a", "c"], "\(even)")
      let odd = try await server.get("/filtered/_changes?filter=app/even&even=false").json
      #expect(odd["results"]?.arrayValue?.map { $0["id"] } == ["b"], "\(odd)")
      #expect(try await server.get("/filtered/_changes?filter=app/none").status == 404)
      let broken = try await server.get("/filtered/_changes?filter=app/broken")
      #expect(broken.status == 500 && broken.json["error"] == "filter_error", "\(broken.json)")
      try await couchDBsFilteredChanges(server)
    }

    // A long poll answers with the first change made while it waits.
    async let waiting = server.get("/db/_changes?feed=longpoll&since=\(lastSeq)&timeout=20000")
    try await Task.sleep(for: .milliseconds(300))
    let deleted = try await server.delete(
      "/db/a?rev=\(try await server.get("/db/a").json["_rev"]!.stringValue!)")
    #expect(deleted.status == 200)
    let woke = try await waiting.json
    #expect(woke["results"]?[0]?["id"] == "a")
    #expect(woke["results"]?[0]?["deleted"] == true)

    // A continuous feed without changes ends with its last_seq line after the timeout.
    let continuous = try await server.get(
      "/db/_changes?feed=continuous&timeout=200&include_docs=true")
    let lines = continuous.text.split(separator: "\n").map { try? JSONParser.parse(String($0)) }
    #expect(lines.count == 4)
    #expect(lines[2]?["doc"]?["_deleted"] == true)
    #expect(lines.last??["last_seq"] != nil)
    // Heartbeats are newlines, and keep the feed open past its timeout; one a second at
    // most (50 ms asked).
    let raw = try server.raw(
      Array(
        "GET /db/_changes?feed=continuous&since=now&heartbeat=50&timeout=100 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
          .utf8),
      timeout: 3.5)
    #expect(!raw.contains("last_seq"))
    #expect(raw.contains("200 OK"))
    let heartbeats = raw.components(separatedBy: "\r\n1\r\n\n\r\n").count - 1
    #expect((2...4).contains(heartbeats), "heartbeat chunks: \(raw)")
    let eventSource = try await server.get("/db/_changes?feed=eventsource&timeout=100")
    #expect(eventSource.headers["content-type"] == "text/event-stream")
    #expect(eventSource.text.hasPrefix("data: {"))
  }

  @Test func findIndexesAndViews() async throws {
    let server = try await start()
    let docs: [JSON] = (0..<20).map { ["_id": .string("p\($0)"), "age": .int(Int64($0))] }
    try await server.post("/db/_bulk_docs", ["docs": .array(docs)])
    let made = try await server.post(
      "/db/_index", ["index": ["fields": ["age"]], "name": "by-age", "ddoc": "ages"])
    #expect(made.json == ["result": "created", "id": "_design/ages", "name": "by-age"])
    #expect(
      try await server.post(
        "/db/_index", ["index": ["fields": ["age"]], "name": "by-age", "ddoc": "ages"]
      ).json["result"] == "exists")
    let listed = try await server.get("/db/_index").json
    #expect(listed["total_rows"] == 2)
    let found = try await server.post(
      "/db/_find", ["selector": ["age": ["$gte": 18]], "fields": ["_id"], "sort": [["age": "asc"]]])
    // Settee's documented choice: results always carry _id and _rev.
    #expect(found.json["docs"]?.arrayValue?.map { $0["_id"] } == ["p18", "p19"])
    let plan = try await server.post("/db/_explain", ["selector": ["age": ["$gte": 18]]]).json
    #expect(plan["index"]?["name"] == "by-age")
    #expect(plan["index"]?["ddoc"] == "_design/ages")
    #expect(plan["dbname"] == "db")
    #expect(try await server.post("/db/_find", ["selector": ["age": ["$bogus": 1]]]).status == 400)
    #expect(try await server.delete("/db/_index/ages/json/by-age").json == ["ok": true])
    #expect(try await server.get("/db/_index").json["total_rows"] == 1)
    let page = try await server.get(
      "/db/_all_docs?startkey=%22p1%22&endkey=%22p2%22&include_docs=true"
    ).json
    #expect(
      page["rows"]?.arrayValue?.map { $0["id"] } == [
        "p1", "p10", "p11", "p12", "p13", "p14", "p15", "p16", "p17", "p18", "p19", "p2",
      ])
    let keyed = try await server.post("/db/_all_docs", ["keys": ["p3", "nope"]]).json
    #expect(keyed["rows"]?[0]?["id"] == "p3")
    #expect(keyed["rows"]?[1]?["error"] == "not_found")
    #expect(try await server.get("/db/_all_docs?limit=x").status == 400)
    // A declarative view (made here by the CLI, another process) answers as CouchDB's views.
    let made2 = try await SetteeBinary.run([
      "--db", directory.path("served.db"), "--collection", "db", "view", "create",
      #"{"name":"by-age","key":"age","reduce":"_count"}"#,
    ])
    #expect(made2.status == 0, "\(made2.stderr)")
    let rows = try await server.get(
      "/db/_design/app/_view/by-age?startkey=17&endkey=18&reduce=false"
    ).json
    #expect(rows["rows"]?.arrayValue?.map { $0["id"] } == ["p17", "p18"])
    #expect(try await server.get("/db/_design/app/_view/by-age").json["rows"]?[0]?["value"] == 20)
  }

  /// Settee to itself over the wire: documents with conflicts and attachments, read
  /// through open_revs and _bulk_get and written to a second database with new_edits=false,
  /// arrive whole: the same leaves, winner, ancestry and attachment bytes.
  @Test func wireRoundTrip() async throws {
    let server = try await start()
    try await server.request("PUT", "/copy")
    var docs: [JSON] = []
    for number in 0..<10 {
      let id = JSON.string("d\(number)")
      docs.append([
        "_id": id, "_rev": .string("2-a\(number)"),
        "_revisions": ["start": 2, "ids": .array([.string("a\(number)"), "root"])], "side": "a",
      ])
      if number % 2 == 0 {
        docs.append([
          "_id": id, "_rev": .string("3-b\(number)"),
          "_revisions": ["start": 3, "ids": .array([.string("b\(number)"), "mid", "root"])],
          "side": "b",
        ])
      }
    }
    try await server.post("/db/_bulk_docs", ["new_edits": false, "docs": .array(docs)])
    let bytes = (0..<5000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
    let winner = try await server.get("/db/d0").json["_rev"]!.stringValue!
    try await server.request(
      "PUT", "/db/d0/blob.bin?rev=\(winner)", body: bytes,
      headers: ["Content-Type": "application/x-blob"])

    // The replicator's loop, by hand: changes (all leaves), revs_diff, fetch, write.
    let changes =
      try await server.get("/db/_changes?style=all_docs").json["results"]?.arrayValue ?? []
    var offered = JSONObject()
    for change in changes {
      let id: String = change["id"]?.stringValue ?? ""
      let revs: [JSON] = (change["changes"]?.arrayValue ?? []).compactMap { $0["rev"] }
      offered[id] = .array(revs)
    }
    let missing = try await server.post("/copy/_revs_diff", .object(offered)).json
    var fetched: [JSON] = []
    var viaBulkGet: [JSON] = []
    for member in missing.objectValue ?? [:] {
      let revs: JSON = member.value["missing"] ?? []
      let path =
        "/db/\(member.key)?revs=true&attachments=true&open_revs=" + JSONWriter.string(revs)
        .addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
      for answer in try await server.get(path).json.arrayValue ?? [] {
        fetched.append(answer["ok"]!)
      }
      let asked: [JSON] = revs.arrayValue!.map { ["id": .string(member.key), "rev": $0] }
      let bulk = try await server.post(
        "/db/_bulk_get?revs=true&attachments=true", ["docs": .array(asked)]
      ).json
      for result in bulk["results"]?.arrayValue ?? [] {
        viaBulkGet.append(result["docs"]![0]!["ok"]!)
      }
    }
    #expect(fetched.count == 15)
    #expect(Set(fetched) == Set(viaBulkGet))
    let written = try await server.post(
      "/copy/_bulk_docs", ["new_edits": false, "docs": .array(fetched)])
    #expect(written.json == [])
    for number in 0..<10 {
      let source = try await server.get("/db/d\(number)?open_revs=all&revs=true").json
      let copy = try await server.get("/copy/d\(number)?open_revs=all&revs=true").json
      #expect(Set(source.arrayValue ?? []) == Set(copy.arrayValue ?? []))
      #expect(
        try await server.get("/db/d\(number)?conflicts=true").json
          == (try await server.get("/copy/d\(number)?conflicts=true").json))
    }
    #expect(try await server.get("/copy/d0/blob.bin").body == bytes)
    #expect(try await server.post("/copy/_revs_diff", .object(offered)).json == [:])
  }

  /// What CouchDB's replicator does: open_revs as multipart/mixed (each revision with
  /// attachments a multipart/related part), written to the target as multipart/related
  /// PUTs with new_edits=false; both sides then hold the same leaves and bytes.
  @Test func multipartRoundTrip() async throws {
    let server = try await start()
    try await server.request("PUT", "/copy")
    let docs: [JSON] = [
      [
        "_id": "m", "_rev": "2-left", "_revisions": ["start": 2, "ids": ["left", "root"]],
        "side": "left",
      ],
      [
        "_id": "m", "_rev": "2-right", "_revisions": ["start": 2, "ids": ["right", "root"]],
        "side": "right",
      ],
    ]
    try await server.post("/db/_bulk_docs", ["new_edits": false, "docs": .array(docs)])
    let bytes = (0..<4000).map { UInt8(truncatingIfNeeded: $0 &* 13) } + Array("\r\n--".utf8)
    let winner = try await server.get("/db/m").json["_rev"]!.stringValue!
    try await server.request(
      "PUT", "/db/m/file.bin?rev=\(winner)", body: bytes,
      headers: ["Content-Type": "application/x-bin"])

    let mixed = try await server.request(
      "GET", "/db/m?open_revs=all&revs=true&attachments=true&latest=true",
      headers: ["Accept": "multipart/mixed"])
    let type = try #require(mixed.headers["content-type"])
    #expect(type.hasPrefix("multipart/mixed"))
    let parts = Self.parts(mixed.body, boundary: Self.boundary(type))
    #expect(parts.count == 2)
    for part in parts {
      // Each part is a document: JSON, or multipart/related with its attachment.
      let partType = part.headers["content-type"] ?? ""
      let answer = try await server.request(
        "PUT", "/copy/m?new_edits=false", body: part.body, headers: ["Content-Type": partType])
      #expect(answer.status == 201, "\(answer.text)")
    }
    #expect(parts.contains { ($0.headers["content-type"] ?? "").hasPrefix("multipart/related") })
    let source =
      try await server.get("/db/m?open_revs=all&revs=true&attachments=true").json.arrayValue ?? []
    let copy =
      try await server.get("/copy/m?open_revs=all&revs=true&attachments=true").json.arrayValue ?? []
    #expect(Set(source) == Set(copy))
    #expect(try await server.get("/copy/m/file.bin").body == bytes)
    // A missing revision is an error part.
    let missing = try await server.request(
      "GET", "/db/m?open_revs=%5B%229-nope%22%5D", headers: ["Accept": "multipart/mixed"])
    #expect(missing.text.contains("error=\"true\""))
    #expect(missing.text.contains(#"{"missing":"9-nope"}"#))
    // One document with its attachments as multipart/related.
    let related = try await server.request(
      "GET", "/db/m?attachments=true", headers: ["Accept": "multipart/related"])
    #expect(related.headers["content-type"]?.hasPrefix("multipart/related") == true)
    #expect(related.text.contains(#""follows":true"#))
  }

  static func boundary(_ type: String) -> String {
    let value = type.components(separatedBy: "boundary=").last ?? ""
    return value.trimmingCharacters(in: CharacterSet(charactersIn: "\""))
  }

  /// The parts of a multipart body, split by hand (headers lowercased).
  static func parts(_ body: [UInt8], boundary: String) -> [(
    headers: [String: String], body: [UInt8]
  )] {
    let delimiter = Array("--\(boundary)".utf8)
    var positions: [Int] = []
    var index = 0
    while index + delimiter.count <= body.count {
      if Array(body[index..<(index + delimiter.count)]) == delimiter {
        positions.append(index)
        index += delimiter.count
      } else {
        index += 1
      }
    }
    var parts: [(headers: [String: String], body: [UInt8])] = []
    for (start, end) in zip(positions, positions.dropFirst()) {
      var section = Array(body[(start + delimiter.count + 2)..<(end - 2)])
      var headers: [String: String] = [:]
      while let lineEnd = (0..<max(0, section.count - 1)).first(where: {
        section[$0] == 13 && section[$0 + 1] == 10
      }) {
        let line = String(decoding: section[0..<lineEnd], as: UTF8.self)
        section.removeFirst(lineEnd + 2)
        if line.isEmpty { break }
        let pair = line.split(separator: ":", maxSplits: 1)
        headers[pair[0].lowercased()] = pair[1].trimmingCharacters(in: .whitespaces)
      }
      parts.append((headers, section))
    }
    return parts
  }

  /// Indexes travel as Mango design documents: _index writes one, a replicated one
  /// defines its index on the target, deleting it drops the index; JavaScript is stored,
  /// never run; Settee's views answer under _design/{d}/_view/{v}.
  @Test func designDocuments() async throws {
    let server = try await start()
    try await server.request("PUT", "/copy")
    try await server.post(
      "/db/_bulk_docs", ["docs": [["_id": "a", "age": 30], ["_id": "b", "age": 40]]])
    try await server.post(
      "/db/_index", ["index": ["fields": ["age"]], "ddoc": "ages", "name": "by-age"])
    let design = try await server.get("/db/_design/ages").json
    #expect(design["language"] == "query")
    // CouchDB writes the names it was given.
    #expect(design["views"]?["by-age"]?["options"]?["def"]?["fields"] == ["age"])
    #expect(design["views"]?["by-age"]?["map"]?["fields"] == ["age": "asc"])

    // Replicated by hand: the copy gets the index with the document.
    let revisions = try await server.get("/db/_design/ages?revs=true").json
    try await server.post("/copy/_bulk_docs", ["new_edits": false, "docs": [revisions]])
    let indexes = try await server.get("/copy/_index").json["indexes"]?.arrayValue ?? []
    #expect(indexes.contains { $0["name"] == "by-age" && $0["ddoc"] == "_design/ages" })
    try await server.post("/copy/_bulk_docs", ["docs": [["_id": "c", "age": 50]]])
    let plan = try await server.post("/copy/_explain", ["selector": ["age": ["$gt": 1]]]).json
    #expect(plan["index"]?["name"] == "by-age")

    // Written by hand as CouchDB's clients write them.
    let written = try await server.put(
      "/copy/_design/names",
      [
        "language": "query",
        "views": [
          "by-name": [
            "map": ["fields": ["name": "asc"]], "reduce": "_count",
            "options": ["def": ["fields": ["name"]]],
          ]
        ],
      ])
    #expect(written.status == 201)
    #expect(try await server.get("/copy/_index").json["total_rows"] == 3)
    let rev = try #require(written.json["rev"]?.stringValue)
    #expect(try await server.delete("/copy/_design/names?rev=\(rev)").status == 200)
    #expect(try await server.get("/copy/_index").json["total_rows"] == 2)
    // Deleting through _index edits the design document.
    #expect(try await server.delete("/copy/_index/ages/json/by-age").json == ["ok": true])
    #expect(try await server.get("/copy/_design/ages").json["reason"] == "deleted")

    // Settee's declarative views travel in "language": "settee" design documents.
    let viewDoc: JSON = [
      "language": "settee",
      "views": ["by-age": ["key": "age", "reduce": "_count"], "odd": "not a view"],
    ]
    #expect(try await server.put("/db/_design/people", viewDoc).status == 201)
    let rows = try await server.get("/db/_design/people/_view/by-age?reduce=false").json["rows"]
    #expect(rows?.arrayValue?.map { $0["id"] } == ["a", "b"])
    let viewRevisions = try await server.get("/db/_design/people?revs=true").json
    try await server.post("/copy/_bulk_docs", ["new_edits": false, "docs": [viewRevisions]])
    #expect(
      try await server.get("/copy/_design/people/_view/by-age").json["rows"]?[0]?["value"] == 1)
    let viewRev = try #require(viewRevisions["_rev"]?.stringValue)
    #expect(try await server.delete("/db/_design/people?rev=\(viewRev)").status == 200)
    #expect(try await server.get("/db/_design/people/_view/by-age").status == 404)

    // Text indexes are kept as Cloudant keeps them, under the design document's "indexes",
    // and travel with it.
    try await server.post(
      "/db/_bulk_docs",
      ["docs": [["_id": "t1", "bio": "quick brown fox"], ["_id": "t2", "bio": "lazy dog"]]])
    let created = try await server.post(
      "/db/_index", ["index": ["fields": ["bio"]], "ddoc": "texts", "name": "bios", "type": "text"])
    #expect(created.json["result"] == "created")
    let textDesign = try await server.get("/db/_design/texts").json
    #expect(textDesign["language"] == "query" && textDesign["views"] == nil)
    #expect(textDesign["indexes"]?["bios"]?["index"]?["fields"] == [["bio": "string"]])
    let textRevisions = try await server.get("/db/_design/texts?revs=true").json
    try await server.post("/copy/_bulk_docs", ["new_edits": false, "docs": [textRevisions]])
    try await server.post("/copy/_bulk_docs", ["docs": [["_id": "t3", "bio": "brown bear"]]])
    let found = try await server.post("/copy/_find", ["selector": ["$text": ["$search": "brown"]]])
      .json
    #expect(found["docs"]?.arrayValue?.map { $0["_id"] } == ["t3"], "\(found)")
    #expect(try await server.delete("/copy/_index/texts/text/bios").json == ["ok": true])
    #expect(try await server.get("/copy/_design/texts").status == 404)
    #expect(
      try await server.post("/copy/_find", ["selector": ["$text": ["$search": "brown"]]]).status
        == 400)

    // A JavaScript view runs on JavaScriptCore (issue 47) where it is installed; a design
    // document with a function that does not compile is refused, CouchDB's
    // compilation_error.
    let view: JSON = ["map": "function (doc) { if (doc._id.indexOf('t') === 0) emit(doc._id, 1) }"]
    let withBroken = try await server.put(
      "/db/_design/js", ["views": ["v": view, "broken": ["map": "function (doc) { emit(doc._id, }"]]])
    try await server.put("/db/_design/js", ["views": ["v": view]])
    if DesignFunctions.isAvailable {
      #expect(withBroken.status == 400 && withBroken.error == "compilation_error", "\(withBroken.text)")
      let rows = try await server.get("/db/_design/js/_view/v?reduce=false").json
      #expect(rows["rows"]?.arrayValue?.isEmpty == false, "\(rows)")
      #expect(
        rows["rows"]?.arrayValue?.allSatisfy { $0["value"] == 1 && $0["key"] == $0["id"] } == true)
    }
    #expect(try await server.get("/db/_design/js/_view/nothing").status == 404)
  }

  /// CouchDB's own tests of filtered changes (`changes_test.exs`, "function filtered
  /// changes" and "map function filtered changes"), with the answers they assert: a filter
  /// that follows a document's edits, one that reads `req.query`, and `filter=_view` that
  /// passes the documents a view's map function emits a row for.
  func couchDBsFilteredChanges(_ server: ServerProcess) async throws {
    #expect(try await server.put("/cdb", [:]).status == 201)
    try await server.put(
      "/cdb/_design/changes_filter",
      [
        "filters": [
          "bop": "function(doc, req) { return (doc.bop);}",
          "dynamic": "function(doc, req) {\n  var field = req.query.field;\n  return doc[field];\n}\n",
        ],
        "views": [
          "blah": ["map": "function(doc) {\n  if (doc._id == \"blah\") {\n    emit(null, null);\n  }\n}\n"]
        ],
      ])
    func changes(_ query: String) async throws -> [JSON] {
      try await server.get("/cdb/_changes?" + query).json["results"]?.arrayValue ?? []
    }
    #expect(try await changes("filter=changes_filter/bop").isEmpty)
    let created = try await server.post("/cdb", ["bop": "foom"]).json
    try await server.post("/cdb", ["bop": false])
    let first = try await changes("filter=changes_filter/bop")
    #expect(first.count == 1 && first[0]["changes"]?[0]?["rev"] == created["rev"], "\(first)")
    let id = try #require(created["id"]?.stringValue)
    var document = try #require(try await server.get("/cdb/" + id).json.objectValue)
    document["newattr"] = "a"
    let saved = try await server.put("/cdb/" + id, .object(document)).json
    let second = try await changes("filter=changes_filter/bop")
    #expect(second.count == 1 && second[0]["changes"]?[0]?["rev"] == saved["rev"], "\(second)")
    #expect(try await changes("filter=changes_filter/dynamic&field=woox").isEmpty)
    let dynamic = try await changes("filter=changes_filter/dynamic&field=bop")
    #expect(dynamic.count == 1 && dynamic[0]["changes"]?[0]?["rev"] == saved["rev"])
    #expect(try await server.get("/cdb/_changes?filter=nothingtosee/bop").status == 404)
    #expect(try await server.get("/cdb/_changes?filter=changes_filter/movealong").status == 404)
    // filter=_view: the documents the view's map function emits a row for.
    try await server.put("/cdb/blah", ["bop": "plankton"])
    let byView = try await changes("filter=_view&view=changes_filter/blah")
    #expect(byView.map { $0["id"] } == ["blah"], "\(byView)")
    #expect(try await server.get("/cdb/_changes?filter=_view").status == 400)
    #expect(try await server.get("/cdb/_changes?filter=_view&view=changes_filter/none").status == 404)
  }
}
