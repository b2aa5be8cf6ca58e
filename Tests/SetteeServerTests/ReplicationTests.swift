import Foundation
import Settee
import SetteeCore
import SetteeJavaScript
import SetteeReplication
import SetteeTestSupport
import Testing

/// CouchDB's replication protocol between collections of local files, `settee serve`
/// processes and the CLI: what arrives is what the source holds (every leaf, every
/// attachment), checkpoints make the next run start where the last ended, and conflicts
/// converge.
@Suite("Replication")
struct ReplicationTests {
  let directory = TemporaryDirectory()

  /// The replications here have a server on one side (the in-process ones are in
  /// SetteeReplicationTests).
  private func replicate(_ source: ReplicationEndpoint, _ target: ReplicationEndpoint)
    async throws -> ReplicationProgress
  {
    try await Replicator(
      ReplicationConfiguration(source: source, target: target, createTarget: true)
    ).run()
  }

  /// Documents with more attachment data than one slice (8 MB) are read again with it in
  /// slices and written slice by slice, to a file and to a server; only what the target
  /// lacks travels the second time.
  @Test func attachmentsTravelInSlices() async throws {
    let source = try directory.replica("sliced-source.db", "notes")
    var revs: [String: RevisionID] = [:]
    for number in 0..<6 {
      let id = "photo\(number)"
      let created = try await source.put(["_id": .string(id), "n": .int(Int64(number))])
      revs[id] =
        try await source.putAttachment(
          "big.bin", to: id, rev: created.rev, contentType: "application/octet-stream",
          data: (0..<2_000_000).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ number) }
        ).rev
    }
    try await source.put(["_id": "plain"])
    let server = try await ServerProcess(db: directory.path("sliced-server.db"))
    let url = try #require(URL(string: server.url + "sliced"))
    for target in [
      ReplicationEndpoint.collection(try directory.replica("sliced-target.db", "notes")), .url(url),
    ] {
      let first = try await replicate(.collection(source), target)
      #expect(first.state == .completed, "\(first.lastError ?? "")")
      #expect(first.docsRead == 7 && first.docsWritten == 7 && first.docWriteFailures == 0)
    }
    let copy = try directory.replica("sliced-target.db", "notes")
    #expect(try await ReplicaComparison.differences(source, copy) == [])
    #expect(try await server.get("/sliced/photo5/big.bin").body.count == 2_000_000)
    // A small attachment added to one: the next replication sends it, not the 2 MB.
    try await source.putAttachment(
      "note.txt", to: "photo0", rev: revs["photo0"]!, contentType: "text/plain",
      data: Array("new".utf8))
    let next = try await replicate(.collection(source), .collection(copy))
    #expect(next.docsWritten == 1)
    #expect(try await ReplicaComparison.differences(source, copy) == [])
  }

  /// With the default settings, a URL nobody listens on fails a one-shot replication after
  /// its five quick retries (about 8 s), not after every connection attempt has waited for
  /// its request's deadline (it took 5 minutes).
  @Test func anUnreachableURLFailsInSeconds() async throws {
    // Timed by the shell that runs it: under the whole suite, this process learned of the
    // child's exit 183 s after starting it (Foundation's exit notification waits for a
    // Dispatch thread, which the suite's blocking tests hold), though the child itself
    // ran its usual 8 s.
    let target = directory.path("never.db") + "#db"
    let run = try await SetteeBinary.runShell(
      """
      start=$(date +%s%N)
      "$0" replicate http://127.0.0.1:9/nowhere '\(target)'
      status=$?
      echo "elapsed-ms $(( ($(date +%s%N) - start) / 1000000 ))" >&2
      exit $status
      """)
    #expect(run.status == 1)
    #expect(run.stderr.contains("unreachable"), "\(run.stderr)")
    let elapsed = run.stderr.split(separator: "\n").last { $0.hasPrefix("elapsed-ms ") }
      .flatMap { Int($0.dropFirst("elapsed-ms ".count)) }
    let milliseconds = try #require(elapsed, "\(run.stderr)")
    #expect(milliseconds < 60_000, "\(milliseconds) ms")
  }

  /// Two `settee serve` processes and the CLI between them, then a local file.
  @Test func betweenServersWithTheCLI() async throws {
    let first = try await ServerProcess(db: directory.path("first.db"))
    let second = try await ServerProcess(db: directory.path("second.db"))
    try await first.request("PUT", "/db")
    let docs: [JSON] = (0..<300).map { ["_id": .string("d\($0)"), "n": .int(Int64($0))] }
    try await first.post("/db/_bulk_docs", ["docs": .array(docs)])
    try await first.post(
      "/db/_bulk_docs",
      ["new_edits": false, "docs": .array(conflictBranches("many", 200).map(JSON.object))])
    try await first.request(
      "PUT", "/db/d5/photo.bin?rev=\(try await first.get("/db/d5").json["_rev"]!.stringValue!)",
      body: (0..<70_000).map { UInt8(truncatingIfNeeded: $0) },
      headers: ["Content-Type": "application/octet-stream"])
    try await first.put("/db/_local/private", ["x": 1])

    let run = try await SetteeBinary.run([
      "replicate", first.url + "db", second.url + "db", "--create-target",
    ])
    #expect(run.status == 0, "\(run.stderr)")
    let summary = try JSONParser.parse(run.stdout)
    #expect(summary["ok"] == true)
    #expect(summary["history"]?[0]?["docs_written"] == 500)
    #expect(try await second.get("/db/_local/private").status == 404)
    #expect(try await second.get("/db/d5/photo.bin").body.count == 70_000)

    // Filtered over HTTP (the source's _changes with filter=_doc_ids or _selector), and
    // a Mango index's design document travels with the documents.
    try await first.post(
      "/db/_index", ["index": ["fields": ["n"]], "ddoc": "by-n", "name": "n"])
    let byID = try await SetteeBinary.run([
      "replicate", first.url + "db", second.url + "ids", "--create-target", "--doc-ids", "d1,d2",
    ])
    #expect(byID.status == 0, "\(byID.stderr)")
    #expect(try await second.get("/ids/_all_docs").json["total_rows"] == 2)
    let bySelector = try await SetteeBinary.run([
      "replicate", first.url + "db", second.url + "selected", "--create-target", "--selector",
      #"{"n": {"$lt": 10}}"#,
    ])
    #expect(bySelector.status == 0, "\(bySelector.stderr)")
    #expect(try await second.get("/selected/_all_docs").json["total_rows"] == 10)
    if DesignFunctions.isAvailable {
      // A design document's JavaScript filter, run by the source server, with
      // query_params as its req.query (issue 47).
      try await first.put(
        "/db/_design/rep",
        [
          "filters": [
            "below":
              "function (doc, req) { return doc.n !== undefined && doc.n < Number(req.query.below); }"
          ],
          "views": ["tens": ["map": "function (doc) { if (doc.n % 10 === 0) emit(doc.n, null); }"]],
        ])
      let byFilter = try await SetteeBinary.run([
        "replicate", first.url + "db", second.url + "filtered", "--create-target", "--filter",
        "rep/below", "--query-params", #"{"below": 5}"#,
      ])
      #expect(byFilter.status == 0, "\(byFilter.stderr)")
      #expect(try await second.get("/filtered/_all_docs").json["total_rows"] == 5)
      // filter _view: the source server passes the documents a view's map emits a row for.
      let byView = try await SetteeBinary.run([
        "replicate", first.url + "db", second.url + "tens", "--create-target", "--filter",
        "_view", "--query-params", #"{"view": "rep/tens"}"#,
      ])
      #expect(byView.status == 0, "\(byView.stderr)")
      let tens = try await second.get("/tens/_all_docs").json["rows"]?.arrayValue ?? []
      #expect(tens.count == 30 && tens.allSatisfy { ($0["id"]?.stringValue ?? "").hasPrefix("d") })
    }
    let rest = try await SetteeBinary.run(["replicate", first.url + "db", second.url + "db"])
    #expect(
      try JSONParser.parse(rest.stdout)["history"]?[0]?["docs_written"]
        == (DesignFunctions.isAvailable ? 2 : 1))
    let indexes = try await second.get("/db/_index").json["indexes"]?.arrayValue ?? []
    #expect(indexes.contains { $0["ddoc"] == "_design/by-n" && $0["name"] == "n" })

    // Pulled into a local file, then compared as the files hold them.
    let local = directory.path("local.db")
    let pulled = try await SetteeBinary.run(["replicate", second.url + "db", local + "#db"])
    #expect(pulled.status != 0, "the local collection does not exist yet")
    let created = try await SetteeBinary.run([
      "replicate", second.url + "db", local + "#db", "--create-target",
    ])
    #expect(created.status == 0, "\(created.stderr)")
    let one = try Database(path: directory.path("first.db"), configuration: .init(readOnly: true))
    let other = try Database(path: local, configuration: .init(readOnly: true))
    #expect(
      try await ReplicaComparison.differences(one.collection("db"), other.collection("db")) == [])
    // And back: nothing to do.
    let back = try await SetteeBinary.run(["replicate", local + "#db", first.url + "db"])
    #expect(try JSONParser.parse(back.stdout)["history"]?[0]?["docs_written"] == 0)

    // A file's documents with a large attachment, or many, reach a server: each is sent on
    // its own as multipart/related, and reads back byte for byte.
    let files = try Database(path: local).collection("db")
    let large = (0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 9) }
    let pushed = try await files.put(["_id": "pushed"])
    try await files.putAttachment(
      "large.bin", to: "pushed", rev: pushed.rev, contentType: "application/octet-stream",
      data: large)
    var rev = try await files.put(["_id": "many-files"]).rev
    for number in 0..<12 {
      rev = try await files.putAttachment(
        "f\(number).txt", to: "many-files", rev: rev, contentType: "text/plain",
        data: Array("file \(number)".utf8)
      ).rev
    }
    let push = try await SetteeBinary.run(["replicate", local + "#db", first.url + "db"])
    #expect(push.status == 0, "\(push.stderr)")
    #expect(try JSONParser.parse(push.stdout)["history"]?[0]?["docs_written"] == 2)
    #expect(try await first.get("/db/pushed/large.bin").body == large)
    #expect(try await first.get("/db/many-files/f11.txt").body == Array("file 11".utf8))
    let served = try Database(
      path: directory.path("first.db"), configuration: .init(readOnly: true))
    let differences = try await ReplicaComparison.differences(files, served.collection("db"))
    #expect(differences == [], "\(differences)")
  }

  /// `settee replicate --continuous` as a process: a server's writes, updates and deletes
  /// reach a local file while it runs; SIGTERM stops it with status 0 and CouchDB's
  /// `_replicate` answer on standard output, and its checkpoint lets the next run start
  /// where it stopped.
  @Test func continuousCLIFollowsUntilStopped() async throws {
    let source = try await ServerProcess(db: directory.path("cli-source.db"))
    try await source.request("PUT", "/db")
    try await source.put("/db/first", ["n": 1])
    let local = directory.path("cli-target.db")
    let process = Process()
    process.executableURL = URL(fileURLWithPath: SetteeBinary.path)
    process.arguments = [
      "replicate", source.url + "db", local + "#db", "--continuous", "--create-target",
      "--checkpoint-interval", "0.2",
    ]
    let output = ChildPipe()
    let errors = ChildPipe()
    try process.run(output: output, errors: errors)
    defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
    let target = try Database(path: local).collection("db")
    func arrived(_ check: @escaping (Document?) -> Bool, _ id: String) async -> Bool {
      await eventually(60) {
        (try? target.database.collectionExists("db")) == true
          && check(try? target.getRevision(id))
      }
    }
    #expect(await arrived({ $0 != nil }, "first"))
    try await source.put("/db/second", ["n": 2])
    let first = try await source.get("/db/first").json
    try await source.put("/db/first", ["_rev": first["_rev"]!, "n": 10])
    let second = try await source.get("/db/second").json
    _ = try await source.delete("/db/second?rev=\(second["_rev"]!.stringValue!)")
    #expect(await arrived({ $0?.body["n"] == 10 }, "first"))
    #expect(await arrived({ $0?.isDeleted == true }, "second"))

    kill(process.processIdentifier, SIGTERM)
    let deadline = Date().addingTimeInterval(30)
    while process.isRunning && Date() < deadline { try await Task.sleep(for: .milliseconds(10)) }
    #expect(!process.isRunning, "SIGTERM did not stop the continuous replication")
    process.waitUntilExit()
    let stderr = String(decoding: errors.fileHandleForReading.readAllBytes(), as: UTF8.self)
    #expect(process.terminationStatus == 0, "\(stderr)")
    let summary = try JSONParser.parse(
      output.fileHandleForReading.readAllBytes())
    #expect(summary["ok"] == true, "\(summary)")
    // Four writes; the update and the deletion may travel with the creation they follow.
    let written = summary["history"]?[0]?["docs_written"]?.intValue ?? 0
    #expect((3...4).contains(written), "\(summary)")
    // The next one-shot run finds the checkpoint: nothing left to write.
    let again = try await SetteeBinary.run(["replicate", source.url + "db", local + "#db"])
    #expect(again.status == 0, "\(again.stderr)")
    #expect(try JSONParser.parse(again.stdout)["history"]?[0]?["docs_written"] == 0)
  }

  /// Continuous: writes, updates and deletes on the source reach the target; a source
  /// server killed under the replicator's long poll and started again on the same port is
  /// caught up with by itself.
  @Test func continuousFollowsAndSurvivesARestart() async throws {
    let source = try await ServerProcess(db: directory.path("live-source.db"))
    let target = try await ServerProcess(db: directory.path("live-target.db"))
    try await source.request("PUT", "/db")
    let replicator = try Replicator(
      ReplicationConfiguration(
        source: .url(URL(string: source.url + "db")!),
        target: .url(URL(string: target.url + "db")!), continuous: true, createTarget: true,
        checkpointInterval: .milliseconds(200), requestTimeout: .seconds(5),
        pollTimeout: .seconds(2), maxRetryDelay: .milliseconds(500)))
    let progress = replicator.start()
    // What the replicator reported, for the failure messages.
    let reported = Locked<[String]>([])
    let watcher = Task {
      var states: [ReplicationProgress.State] = []
      for await update in progress {
        states.append(update.state)
        reported.withLock {
          $0.append("\(update.state) written \(update.docsWritten) \(update.lastError ?? "")")
        }
      }
      return states
    }
    defer { replicator.stop() }

    // Generous: the replicator runs in this test process, whose tasks share two threads
    // with every other test running at once.
    // The bound is 90 s and 4,500 looks: when the two cooperative threads are held by
    // synchronous tests (fuzzers, CLI runs), this process's tasks, the replicator's
    // included, wait together, and a wall-clock bound alone ran out while neither had run.
    func arrives(_ path: String, _ check: @escaping (JSON) -> Bool) async throws -> Bool {
      let deadline = Date().addingTimeInterval(90)
      var looks = 0
      while true {
        // Looked at before the deadline is: a task kept waiting past it still looks once.
        if let answer = try? await target.get(path), check(answer.json) { return true }
        looks += 1
        if Date() > deadline && looks >= 4_500 { return false }
        try await Task.sleep(for: .milliseconds(20))
      }
    }
    let written = try await source.put("/db/a", ["v": 1])
    let arrived = try await arrives("/db/a") { $0["v"] == 1 }
    if !arrived {
      let sourceChanges = (try? await source.get("/db/_changes").text) ?? "unreachable"
      let targetChanges = (try? await target.get("/db/_changes").text) ?? "unreachable"
      Issue.record(
        "a did not arrive; reported: \(reported.withLock { $0.suffix(12) }); source: \(sourceChanges); target: \(targetChanges)"
      )
    }
    let rev = try #require(written.json["rev"]?.stringValue)
    let updated = try await source.put("/db/a", ["_rev": .string(rev), "v": 2])
    #expect(try await arrives("/db/a") { $0["v"] == 2 })
    let latest = try #require(updated.json["rev"]?.stringValue)
    _ = try await source.delete("/db/a?rev=\(latest)")
    #expect(try await arrives("/db/a") { $0["reason"] == "deleted" })

    // The source goes away under the replicator's long poll and comes back on its port;
    // the replicator retries and catches up by itself.
    let port = source.port
    source.stop(SIGKILL)
    try await Task.sleep(for: .milliseconds(300))
    let restarted = try await ServerProcess(
      db: directory.path("live-source.db"), ["--log-level", "none", "--port", "\(port)"])
    try await restarted.put("/db/b", ["v": 1])
    #expect(try await arrives("/db/b") { $0["v"] == 1 })
    replicator.stop()
    let states = await watcher.value
    // Whether it reports `retrying` depends on timing: AsyncHTTPClient itself keeps trying
    // to connect within a request's deadline (the unreachable-peer test sees `retrying`).
    #expect(states.contains(.idle))
    #expect(states.last == .stopped)
  }
  /// `POST /_replicate` on the server: one-shot answers with CouchDB's summary; continuous
  /// answers 202, shows in `_active_tasks` and `_scheduler/jobs`, and stops when cancelled.
  @Test func theServerReplicatesOnRequest() async throws {
    let server = try await ServerProcess(db: directory.path("replicating.db"))
    let peer = try await ServerProcess(db: directory.path("peer.db"))
    try await server.request("PUT", "/db")
    try await server.post("/db/_bulk_docs", ["docs": [["_id": "a"], ["_id": "b"]]])
    let once = try await server.post(
      "/_replicate",
      ["source": "db", "target": .string(peer.url + "copy"), "create_target": true])
    #expect(once.status == 200 && once.json["ok"] == true)
    #expect(once.json["history"]?[0]?["docs_written"] == 2)
    #expect(try await peer.get("/copy/b").status == 200)

    let body: JSON = [
      "source": "db", "target": .string(peer.url + "live"), "create_target": true,
      "continuous": true,
    ]
    let started = try await server.post("/_replicate", body)
    #expect(started.status == 202)
    #expect(started.json["_local_id"]?.stringValue?.hasSuffix("+continuous") == true)
    try await server.put("/db/c", ["x": 1])
    let deadline = Date().addingTimeInterval(20)
    while try await peer.get("/live/c").status != 200, Date() < deadline {
      try await Task.sleep(for: .milliseconds(20))
    }
    #expect(try await peer.get("/live/c").json["x"] == 1)
    let tasks = try await server.get("/_active_tasks").json
    #expect(tasks[0]?["type"] == "replication" && tasks[0]?["continuous"] == true)
    #expect(try await server.get("/_scheduler/jobs").json["total_rows"] == 1)
    var cancel = body.objectValue!
    cancel["cancel"] = true
    #expect(try await server.post("/_replicate", .object(cancel)).status == 200)
    while try await server.get("/_active_tasks").json != [], Date() < deadline {
      try await Task.sleep(for: .milliseconds(20))
    }
    #expect(try await server.get("/_active_tasks").json == [])
    #expect(try await server.post("/_replicate", .object(cancel)).status == 404)
    let missing = try await server.post("/_replicate", ["source": "nope", "target": "db"])
    #expect(missing.status == 404 && missing.error == "db_not_found")
  }

  /// CouchDB's `_replicator` database: a document starts its replication (continuous from
  /// a peer, one-shot between local databases), `_scheduler/docs` shows each one's state
  /// (a document that describes no replication has failed, saying why), the replications
  /// start again when the server does (a completed one-shot does not run again), and
  /// deleting a document stops its replication.
  @Test func replicatorDocumentsRunAcrossRestarts() async throws {
    let peer = try await ServerProcess(db: directory.path("replicator-peer.db"))
    let path = directory.path("replicator-server.db")
    var server = try await ServerProcess(db: path)
    try await peer.request("PUT", "/db")
    try await peer.put("/db/a", ["v": 1])
    try await server.request("PUT", "/local")
    try await server.put("/local/x", ["n": 1])
    // Credentials in a document's URL never show in what the server says of it.
    let credentialed = peer.url.replacingOccurrences(of: "http://", with: "http://me:s3cret@")
    let live: JSON = [
      "source": .string(credentialed + "db"), "target": "copy", "create_target": true,
      "continuous": true,
    ]
    // As in CouchDB, the database is created first (a single node's setup step).
    #expect(try await server.put("/_replicator/live", live).status == 404)
    #expect(try await server.request("PUT", "/_replicator").status == 201)
    #expect(try await server.get("/_all_dbs").json.arrayValue?.contains("_replicator") == true)
    #expect(try await server.put("/_replicator/live", live).status == 201)
    let once: JSON = ["source": "local", "target": "backup", "create_target": true]
    #expect(try await server.put("/_replicator/once", once).status == 201)
    #expect(try await server.put("/_replicator/bad", ["target": "backup"]).status == 201)

    // Generous, as the other waits here: the servers share two cores with every test.
    func until(_ check: () async throws -> Bool) async throws -> Bool {
      let deadline = Date().addingTimeInterval(90)
      while true {
        if (try? await check()) == true { return true }
        if Date() > deadline { return false }
        try await Task.sleep(for: .milliseconds(50))
      }
    }
    func state(_ id: String) async throws -> String? {
      try await server.get("/_scheduler/docs/_replicator/\(id)").json["state"]?.stringValue
    }
    #expect(try await until { try await server.get("/copy/a").json["v"] == 1 })
    #expect(try await until { try await server.get("/backup/x").json["n"] == 1 })
    #expect(try await until { try await state("once") == "completed" })
    #expect(try await state("live") == "running")
    #expect(try await state("bad") == "failed")
    let bad = try await server.get("/_scheduler/docs/_replicator/bad").json
    #expect(bad["info"]?["error"]?.stringValue?.contains("source") == true, "\(bad)")
    let docs = try await server.get("/_scheduler/docs").json
    #expect(docs["total_rows"] == 3 && docs["docs"]?[0]?["doc_id"] == "bad", "\(docs)")
    let tasks = try await server.get("/_active_tasks").json
    #expect(tasks.arrayValue?.count == 1 && tasks[0]?["doc_id"] == "live", "\(tasks)")
    for shown in ["/_active_tasks", "/_scheduler/docs", "/_scheduler/jobs"] {
      #expect(try await !server.get(shown).text.contains("s3cret"), "\(shown)")
    }
    // It is the document's to stop, not _replicate's.
    let liveID = try #require(tasks[0]?["replication_id"]?.stringValue)
    let cancel = try await server.post(
      "/_replicate", ["replication_id": .string(liveID), "cancel": true])
    #expect(cancel.status == 400 && cancel.error == "bad_request", "\(cancel.json)")
    #expect(try await server.get("/_active_tasks").json.arrayValue?.count == 1)

    // Restarted: the continuous replication runs again by itself; the completed one-shot
    // does not run again (its state is kept in a local document of _replicator).
    // Stopped cleanly while a replication runs and the follower waits for changes.
    #expect(server.stop().status == 0)
    server = try await ServerProcess(db: path)
    try await peer.put("/db/b", ["v": 2])
    try await server.put("/local/y", ["n": 2])
    #expect(try await until { try await server.get("/copy/b").json["v"] == 2 })
    #expect(try await until { try await state("once") == "completed" })
    #expect(try await server.get("/backup/y").status == 404)
    #expect(
      try await server.get("/_scheduler/docs/_replicator/once").json["info"]?["docs_written"] == 0)

    // A new revision of the one-shot document runs it again.
    let onceRev = try #require(try await server.get("/_replicator/once").json["_rev"]?.stringValue)
    var again = once.objectValue!
    again["_rev"] = .string(onceRev)
    #expect(try await server.put("/_replicator/once", .object(again)).status == 201)
    #expect(try await until { try await server.get("/backup/y").json["n"] == 2 })

    // A new revision of the continuous document, saying the same: the replication (the
    // same replication id) is stopped and started again, not refused as running already.
    let firstRev = try #require(try await server.get("/_replicator/live").json["_rev"]?.stringValue)
    var same = live.objectValue!
    same["_rev"] = .string(firstRev)
    #expect(try await server.put("/_replicator/live", .object(same)).status == 201)
    try await peer.put("/db/b2", ["v": 22])
    #expect(try await until { try await server.get("/copy/b2").json["v"] == 22 })
    #expect(try await state("live") == "running")
    #expect(try await server.get("/_active_tasks").json.arrayValue?.count == 1)

    // Deleted, the continuous replication stops.
    let liveRev = try #require(try await server.get("/_replicator/live").json["_rev"]?.stringValue)
    #expect(try await server.delete("/_replicator/live?rev=\(liveRev)").status == 200)
    #expect(try await until { try await server.get("/_active_tasks").json == [] })
    #expect(try await server.get("/_scheduler/docs/_replicator/live").status == 404)
    try await peer.put("/db/c", ["v": 3])
    try await Task.sleep(for: .seconds(1))
    #expect(try await server.get("/copy/c").status == 404)

    // A peer that cannot be reached: the replication retries, shown as crashing.
    let unreachable: JSON = [
      "source": "http://127.0.0.1:1/nope", "target": "copy", "continuous": true,
    ]
    #expect(try await server.put("/_replicator/down", unreachable).status == 201)
    #expect(try await until { try await state("down") == "crashing" })
    let down = try await server.get("/_scheduler/docs/_replicator/down").json
    #expect(down["info"]?["error"]?.stringValue?.isEmpty == false, "\(down)")
  }
}

/// The replicator killed at random points of a 50,000-document replication.
@Suite("Replication killed and resumed")
struct ReplicationKillTests {
  let directory = TemporaryDirectory()

  /// Each run is killed (SIGKILL) after a random moment; the last runs to the end. It
  /// starts from the last checkpoint, writes exactly what the target lacks (nothing is sent
  /// twice), and the target ends equal to the source.
  @Test func killedReplicationsResumeFromTheirCheckpoint() async throws {
    let source = directory.path("big.db")
    let target = directory.path("big-copy.db")
    let lines = (0..<50_000).map { #"{"_id":"p\#($0)","n":\#($0),"tags":["a","b"]}"# }
    let imported = try await SetteeBinary.run(
      ["--db", source, "import", "-"], stdin: Array(lines.joined(separator: "\n").utf8))
    #expect(imported.status == 0, "\(imported.stderr)")
    var random = SplitMix64(seed: 33)
    let arguments = [
      "replicate", source, target, "--create-target", "--checkpoint-interval", "0.1",
    ]
    // What the target holds: its documents and whether a checkpoint is recorded (0 and
    // false before the file exists).
    func progress() -> (documents: Int, checkpointed: Bool) {
      guard
        let copy = try? Database(path: target, configuration: .init(readOnly: true)).collection(),
        let documents = try? copy.count(), let local = try? copy.localDocuments()
      else { return (0, false) }
      return (documents, !local.isEmpty)
    }
    for _ in 0..<3 {
      let start = progress().documents
      let process = Process()
      process.executableURL = URL(fileURLWithPath: SetteeBinary.path)
      process.arguments = arguments
      process.standardOutput = FileHandle.nullDevice
      process.standardError = FileHandle.nullDevice
      try process.run()
      // Killed once it has written more and a checkpoint exists (waited for, not guessed:
      // a loaded machine took longer than any fixed pause), then at a random moment after.
      let deadline = Date().addingTimeInterval(120)
      while process.isRunning, Date() < deadline {
        let now = progress()
        if now.documents > start && now.checkpointed { break }
        try await Task.sleep(for: .milliseconds(20))
      }
      try await Task.sleep(for: .milliseconds(Int(random.next() % 300)))
      kill(process.processIdentifier, SIGKILL)
      process.waitUntilExit()
    }
    let copy = try Database(path: target, configuration: .init(readOnly: true)).collection()
    let before = try await copy.count()
    let last = try await SetteeBinary.run(arguments)
    #expect(last.status == 0, "\(last.stderr)")
    let summary = try JSONParser.parse(last.stdout)
    let history = try #require(summary["history"]?[0])
    #expect(before > 0, "the killed runs wrote and checkpointed some")
    if before > 0 {
      #expect(history["start_last_seq"] != 0, "it resumed from a checkpoint")
      #expect(
        (history["missing_checked"]?.intValue ?? 0) < 50_000, "it did not start from the beginning")
    }
    #expect(history["docs_written"]?.intValue == 50_000 - before, "nothing was sent twice")
    let original = try Database(path: source, configuration: .init(readOnly: true)).collection()
    #expect(try await Self.contents(original) == Self.contents(copy))
  }

  /// Every document's id, revision and body.
  static func contents(_ collection: DocumentCollection) async throws -> [String] {
    let ids = try await collection.changes().map(\.id).sorted()
    return try await collection.get(ids).map { document in
      guard let document else { return "missing" }
      return
        "\(document.id) \(document.rev?.description ?? "") \(JSONWriter.string(.object(document.json)))"
    }
  }
}
