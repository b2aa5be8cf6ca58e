import Foundation
import Settee
import SetteeCore
import SetteeJavaScript
import SetteeReplication
import SetteeTestSupport
import Testing

/// Settee's replicator against a CouchDB played from what a real CouchDB 3.5.0 answered to
/// it (`RecordedCouchDB`): the target must end equal to the source, every leaf with its
/// body and its attachments' bytes.
@Suite("Settee's replicator against CouchDB's recorded answers")
struct RecordedPeerTests {
  /// S4: `settee replicate` pulling from CouchDB into `settee serve`, two rounds. Before
  /// issue 43 it answered `"ok": true` with six documents refused (CouchDB's digests of its
  /// gzip forms) and one more in the second round.
  @Test func setteePullsFromCouchDB() async throws {
    let (exchanges, rounds) = try Self.pullRecording()
    #expect(rounds.count == 2)
    let source = try RecordedCouchDB(database: "wire-src", rounds: rounds)
    let directory = TemporaryDirectory()
    let server = try await ServerProcess(db: directory.path("target.settee"))
    defer { server.stop() }
    let target = try #require(URL(string: server.url + "wire-tgt"))
    for index in rounds.indices {
      source.play(round: index)
      let replicator = try Replicator(
        ReplicationConfiguration(
          source: .url(source.url), target: .url(target), createTarget: true, retries: 0))
      let progress: ReplicationProgress
      do { progress = try await replicator.run() } catch {
        Issue.record("round \(index + 1): \(error); unrecorded: \(source.unansweredRequests)")
        return
      }
      #expect(progress.state == .completed, "\(progress.lastError ?? "")")
      #expect(progress.docWriteFailures == 0, "round \(index + 1): \(progress.lastError ?? "")")
      // CouchDB's counts of what _bulk_get was asked and gave, in the answer's history.
      #expect(progress.bulkGetAttempts >= progress.docsRead && progress.bulkGetDocs > 0)
      #expect(progress.json["history"]?[0]?["bulk_get_docs"] == .int(Int64(progress.bulkGetDocs)))
    }
    #expect(source.unansweredRequests.isEmpty, "\(source.unansweredRequests)")
    try expectTargetEqualsSource(exchanges, server)
    if DesignFunctions.isAvailable {
      try await expectCouchDBsViewRuns(server, path: directory.path("target.settee"))
    }
  }

  /// The design document CouchDB made (`_design/wire`, a JavaScript map
  /// `if (doc.n !== undefined) emit(doc.n, doc.title)`), pulled with the rest, answers its
  /// rows from `settee serve` and from Swift on the same file: every document with an `n`,
  /// by `n` then id, as CouchDB orders them.
  func expectCouchDBsViewRuns(_ server: ServerProcess, path: String) async throws {
    let all = try await server.get("/wire-tgt/_all_docs?include_docs=true").json
    var expected: [(key: Int64, id: String, value: JSON)] = []
    for row in all["rows"]?.arrayValue ?? [] {
      guard let id = row["id"]?.stringValue, !id.hasPrefix("_design/"),
        let n = row["doc"]?["n"]?.int64Value
      else { continue }
      expected.append((n, id, row["doc"]?["title"] ?? .null))
    }
    expected.sort { ($0.key, $0.id) < ($1.key, $1.id) }
    #expect(expected.count > 10)
    let served = try await server.get("/wire-tgt/_design/wire/_view/by_n").json
    let rows = served["rows"]?.arrayValue ?? []
    #expect(rows.map { $0["id"] } == expected.map { .string($0.id) }, "\(served)")
    #expect(rows.map { $0["key"] } == expected.map { .int($0.key) })
    #expect(rows.map { $0["value"] } == expected.map(\.value))
    let swift = try await Database(path: path).collection("wire-tgt").designView("wire/by_n")
      .query(ViewQuery())
    #expect(swift.rows.map(\.id) == expected.map(\.id))
  }

  /// The same pull, continuous: round 1 arrives, the replication waits in a long poll as
  /// CouchDB holds one, and round 2's changes arrive when the source has them.
  @Test func setteeFollowsCouchDBContinuously() async throws {
    let (exchanges, rounds) = try Self.pullRecording()
    let source = try RecordedCouchDB(database: "wire-src", rounds: rounds)
    let directory = TemporaryDirectory()
    let server = try await ServerProcess(db: directory.path("target.settee"))
    defer { server.stop() }
    let target = try #require(URL(string: server.url + "wire-tgt"))
    let replicator = try Replicator(
      ReplicationConfiguration(
        source: .url(source.url), target: .url(target), continuous: true, createTarget: true,
        pollTimeout: .seconds(10)))
    let progress = Locked<[ReplicationProgress]>([])
    let running = Task {
      for await step in replicator.start() { progress.withLock { $0.append(step) } }
    }
    defer { replicator.stop() }
    // Waits on the target itself (a session that restarts counts from zero), for as long
    // as a loaded machine may need: beside the other suites, whose blocking waits can hold
    // both of the cooperative pool's threads on two cores, the replicator may not run for
    // a minute or two.
    func waitFor(_ what: String, _ done: () async throws -> Bool) async throws {
      let deadline = Date().addingTimeInterval(480)
      while try await !done() && Date() < deadline {
        try await Task.sleep(for: .milliseconds(100))
      }
      let states = progress.withLock { $0.map { "\($0.state)" } }.suffix(8)
      #expect(
        try await done(), "\(what): \(states) \(progress.withLock { $0.last?.lastError ?? "" })")
    }
    func revision(_ id: String) async throws -> String? {
      try await RawHTTP.send(WireMessage(method: "GET", path: "/wire-tgt/\(id)"), to: server)
        .json?["_rev"]?.stringValue
    }
    try await waitFor("round 1 written, then idle") {
      let idle = progress.withLock { $0.last?.state == .idle }
      guard idle, try await revision("plain-06") != nil else { return false }
      return try await revision("text-4") != nil
    }
    source.play(round: 1)
    try await waitFor("round 2 arrives while following") {
      let edited = try await revision("plain-05")?.hasPrefix("2-") == true
      let deleted = try await revision("plain-06") == nil
      return edited && deleted
    }
    replicator.stop()
    await running.value
    #expect(progress.withLock { $0.last?.docWriteFailures } == 0)
    #expect(source.unansweredRequests.isEmpty, "\(source.unansweredRequests)")
    try expectTargetEqualsSource(exchanges, server)
    if DesignFunctions.isAvailable {
      try await expectCouchDBsViewRuns(server, path: directory.path("target.settee"))
    }
  }

  /// S5: `settee replicate` pushing to CouchDB, two rounds, against CouchDB's recorded
  /// answers; the source is a file holding what the recording wrote, round by round, and
  /// the revisions written must be those, with their bodies and attachment bytes.
  @Test func setteePushesToCouchDB() async throws {
    let exchanges = try WireTranscript.load("S5-settee-push__settee.jsonl")
    var rounds: [[WireExchange]] = []
    for exchange in exchanges {
      if exchange.request.method == "GET" && exchange.request.path == "/wire-tgt" && exchange.n > 1 {
        rounds.append([])
      }
      if rounds.isEmpty { rounds.append([]) }
      rounds[rounds.count - 1].append(exchange)
    }
    #expect(rounds.count == 2)
    /// The revisions a round wrote, as the recording sent them.
    func writes(_ round: [WireExchange]) throws -> [JSONObject] {
      var documents: [JSONObject] = []
      for exchange in round where exchange.response.status == 201 {
        let request = exchange.request
        if request.path.hasSuffix("/_bulk_docs") {
          documents += (request.json?["docs"]?.arrayValue ?? []).compactMap(\.objectValue)
        } else if request.method == "PUT", request.path.contains("new_edits=false"),
          let type = request.header("content-type"),
          let boundary = Multipart.boundary(ofContentType: type)
        {
          documents.append(try Multipart.document(fromRelated: request.body, boundary: boundary))
        }
      }
      return documents
    }
    let target = try RecordedCouchDB(database: "wire-tgt", rounds: rounds)
    let directory = TemporaryDirectory()
    let source = try Database(path: directory.path("source.settee")).collection("wire-src")
    var expected: [JSONObject] = []
    for (index, round) in rounds.enumerated() {
      let written = try writes(round)
      expected += written
      for result in try await source.putEach(written, newEdits: false) {
        if case .failure(let error) = result { Issue.record("filling the source: \(error)") }
      }
      target.play(round: index)
      let progress = try await Replicator(
        ReplicationConfiguration(
          source: .collection(source), target: .url(target.url), createTarget: true, retries: 0)
      ).run()
      #expect(progress.state == .completed, "round \(index + 1): \(progress.lastError ?? "")")
      #expect(progress.docWriteFailures == 0)
    }
    #expect(target.unansweredRequests.isEmpty, "\(target.unansweredRequests)")
    func key(_ document: JSONObject) -> String {
      (document["_id"]?.stringValue ?? "") + " " + (document["_rev"]?.stringValue ?? "")
    }
    func comparable(_ document: JSONObject) -> JSONObject {
      var body = document
      body.removeValue(forKey: "_revisions")
      if case .object(let attachments)? = document["_attachments"] {
        // The bytes and their type; the rest is each writer's own way of saying it.
        body["_attachments"] = .object(
          JSONObject(
            attachments.map { member in
              (
                member.key,
                [
                  "content_type": member.value["content_type"] ?? .null,
                  "data": member.value["data"] ?? member.value["digest"] ?? .null,
                ]
              )
            }))
      }
      return body
    }
    let sent = Dictionary(target.written.map { (key($0), comparable($0)) }, uniquingKeysWith: { $1 })
    let recorded = Dictionary(expected.map { (key($0), comparable($0)) }, uniquingKeysWith: { $1 })
    #expect(Set(sent.keys) == Set(recorded.keys))
    for (name, document) in recorded.sorted(by: { $0.key < $1.key }) {
      #expect(sent[name] == document, "\(name)")
    }
  }

  /// S4's recording (`settee replicate` pulling from CouchDB), and its two rounds: each
  /// replication begins by asking for the source's info.
  static func pullRecording() throws -> ([WireExchange], [[WireExchange]]) {
    let exchanges = try WireTranscript.load("S4-settee-pull__settee.jsonl")
    var rounds: [[WireExchange]] = []
    for exchange in exchanges {
      if exchange.request.method == "GET" && exchange.request.path == "/wire-src" {
        rounds.append([])
      }
      rounds[rounds.count - 1].append(exchange)
    }
    return (exchanges, rounds)
  }

  /// Every leaf the source's feeds listed is on the target with the body and attachment
  /// bytes the source served.
  private func expectTargetEqualsSource(_ exchanges: [WireExchange], _ server: ServerProcess)
    throws
  {
    var leaves: [String: Set<String>] = [:]
    var bodies: [String: JSONObject] = [:]
    for exchange in exchanges where exchange.response.status == 200 {
      let json = exchange.response.json
      if exchange.request.path.contains("/_changes") {
        for row in json?["results"]?.arrayValue ?? [] {
          guard let id = row["id"]?.stringValue else { continue }
          leaves[id] = Set((row["changes"]?.arrayValue ?? []).compactMap { $0["rev"]?.stringValue })
        }
      } else if exchange.request.path.contains("/_bulk_get") {
        for result in json?["results"]?.arrayValue ?? [] {
          for doc in result["docs"]?.arrayValue ?? [] {
            guard let ok = doc["ok"]?.objectValue, let id = ok["_id"]?.stringValue,
              let rev = ok["_rev"]?.stringValue
            else { continue }
            let key = id + " " + rev
            let hasData = ok["_attachments"]?.objectValue?.contains { $0.value["data"] != nil }
            if bodies[key] == nil || hasData == true { bodies[key] = ok }
          }
        }
      }
    }
    #expect(leaves.count == 45, "the data set's documents, deleted and design ones included")
    for (id, revs) in leaves.sorted(by: { $0.key < $1.key }) {
      let escaped = id.replacingOccurrences(of: "/", with: "%2F")
      var ask = WireMessage(method: "GET", path: "/wire-tgt/\(escaped)?open_revs=all")
      ask.headers = [("Accept", "application/json")]
      let answer = try RawHTTP.send(ask, to: server)
      let found = (answer.json?.arrayValue ?? []).compactMap { $0["ok"]?.objectValue }
      #expect(Set(found.compactMap { $0["_rev"]?.stringValue }) == revs, "\(id)")
      for document in found {
        let rev = document["_rev"]?.stringValue ?? ""
        guard let served = bodies[id + " " + rev] else {
          Issue.record("\(id) \(rev): the source never served it")
          continue
        }
        func body(_ object: JSONObject) -> JSONObject {
          var body = object
          for key in ["_revisions", "_attachments"] { body.removeValue(forKey: key) }
          return body
        }
        #expect(body(document) == body(served), "\(id) \(rev)")
        let names = Set(document["_attachments"]?.objectValue?.map(\.key) ?? [])
        let servedAttachments = served["_attachments"]?.objectValue ?? [:]
        #expect(names == Set(servedAttachments.map(\.key)), "\(id) \(rev)")
        for member in servedAttachments {
          let name = member.key
          guard let data = member.value["data"]?.stringValue.flatMap({ Data(base64Encoded: $0) })
          else { continue }
          let bytes = try RawHTTP.send(
            WireMessage(method: "GET", path: "/wire-tgt/\(escaped)/\(name)?rev=\(rev)"), to: server)
          #expect(bytes.status == 200 && bytes.body == Array(data), "\(id) \(rev) \(name)")
        }
      }
    }
  }
}
