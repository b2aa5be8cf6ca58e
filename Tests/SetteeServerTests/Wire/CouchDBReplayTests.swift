import Foundation
import SetteeCore
import SetteeReplication
import SetteeTestSupport
import Testing

/// What a real CouchDB 3.5.0 asked of a peer, replayed against `settee serve`: every answer
/// must be what CouchDB itself answered (`WireShape`). The recordings are
/// `../shared/couchdb-wire/` (copied to `Tests/Fixtures/couchdb-wire/`): CouchDB's
/// replicator pushing to a peer (S1), pulling from one (S2, and X2 without attachments),
/// and single probes of the differences found. A source is filled from the answers the
/// reference CouchDB gave, so each scenario runs from an empty file.
@Suite("CouchDB's recorded requests, replayed", .serialized)
struct CouchDBReplayTests {
  @Test func probes() async throws {
    let replay = try WireReplay()
    let exchanges = try WireTranscript.load("probes__couchdb.jsonl")
    try replay.run(exchanges)
    #expect(replay.compared == exchanges.count)
    // CouchDB gzips the compressible types it is given (text/plain here) and stores them
    // so; Settee stores them the same way (docs/server.md), so every answer is CouchDB's,
    // multipart encodings and digests included.
    #expect(replay.differences.isEmpty, "\(replay.report)")
  }

  /// CouchDB's replicator pushing to Settee, both rounds (the second resumes from the
  /// checkpoints the first wrote), then the comparison's reads of the target.
  @Test func couchDBPushesToSettee() async throws {
    let replay = try WireReplay()
    try replay.run(WireTranscript.load("S1-couchdb-push__couchdb.jsonl"))
    try replay.run(WireTranscript.load("S1-couchdb-push__couchdb.verify.jsonl"))
    #expect(replay.compared == 47 + 103)
    #expect(replay.differences.isEmpty, "\(replay.report)")
  }

  /// CouchDB's replicator pulling from Settee, both rounds, the source filled round by
  /// round with what the reference source served.
  @Test(arguments: [
    "S2-couchdb-pull__couchdb.jsonl", "X2-couchdb-pull-no-attachments__couchdb.jsonl",
  ])
  func couchDBPullsFromSettee(_ transcript: String) async throws {
    let replay = try WireReplay()
    let exchanges = try WireTranscript.load(transcript)
    let rounds = WireTranscript.rounds(exchanges)
    #expect(rounds.count == 2)
    for round in rounds {
      try replay.fillSource(from: round)
      try replay.run(round)
    }
    #expect(replay.compared == exchanges.count - rounds.count)
    #expect(replay.differences.isEmpty, "\(replay.report)")
  }
}

extension CouchDBReplayTests {
  /// S3 (and X3, without attachments): CouchDB's replicator pulling continuously. Its feed
  /// (`feed=continuous`) stays open while it fetches round 1; round 2 is written to the
  /// source while it runs, and the feed must carry it, as CouchDB's did. Before issue 43
  /// the first document with an attachment killed CouchDB's replicator and its job
  /// vanished.
  @Test(arguments: [
    "S3-couchdb-continuous-pull__couchdb.jsonl",
    "X3-couchdb-continuous-pull-no-attachments__couchdb.jsonl",
  ])
  func couchDBFollowsSetteeContinuously(_ transcript: String) async throws {
    let replay = try WireReplay()
    let exchanges = try WireTranscript.load(transcript).filter { $0.request.path != "/_session" }
    let feed = try #require(exchanges.firstIndex { $0.request.path.contains("feed=continuous") })
    @Sendable func rows(_ body: [UInt8]) -> [(id: String, rev: String)] {
      body.split(separator: UInt8(ascii: "\n")).compactMap { line in
        guard let row = try? JSONParser.parse(Array(line)), let id = row["id"]?.stringValue
        else { return nil }
        return (id, row["changes"]?[0]?["rev"]?.stringValue ?? "")
      }
    }
    // Round 2's revisions are those of documents the feed lists a second time; round 2
    // begins with the first request that names one.
    let theirs = rows(exchanges[feed].response.body)
    var listed: Set<String> = []
    let later = theirs.filter { !listed.insert($0.id).inserted }.map(\.rev)
    #expect(later.count == 7)
    let roundTwo = try #require(
      exchanges.indices.first { index in
        index > feed
          && later.contains { rev in
            (exchanges[index].request.path
              + String(decoding: exchanges[index].request.body, as: UTF8.self))
              .contains(rev)
          }
      })
    try replay.fillSource(from: Array(exchanges[..<roundTwo]))
    try replay.run(Array(exchanges[..<feed]))
    // The feed would end 10 s after its last change, by CouchDB's own `timeout=10000` (the
    // replicator was cancelled; a shorter one, 3 s, ended the feed before round 2 while the
    // whole suite ran on two cores). The test stops reading once every revision CouchDB's
    // feed carried has come, in whole rows, instead of waiting those 10 s.
    let (server, feedRequest) = (replay.server, exchanges[feed].request)
    let wanted = Set(theirs.map(\.rev))
    @Sendable func complete(_ bytes: [UInt8]) -> Bool {
      guard let answer = try? RawHTTP.parse(bytes) else { return false }
      return Set(rows(answer.body).map(\.rev)).isSuperset(of: wanted)
    }
    // On a thread of its own: a blocking read must not hold one of the cooperative pool's.
    let following = Task {
      try await onThread {
        try RawHTTP.send(feedRequest, to: server, timeout: 60, until: complete)
      }
    }
    try await Task.sleep(for: .milliseconds(300))
    try replay.run(Array(exchanges[(feed + 1)..<roundTwo]))
    try replay.fillSource(from: Array(exchanges[roundTwo...]))
    try replay.run(Array(exchanges[roundTwo...]))
    let answer = try await following.value
    #expect(answer.status == 200)
    let mine = rows(answer.body)
    #expect(mine.map(\.id).sorted() == theirs.map(\.id).sorted())
    #expect(Set(mine.map(\.rev)) == Set(theirs.map(\.rev)))
    #expect(replay.differences.isEmpty, "\(replay.report)")
  }
}

/// A `settee serve` on an empty file, and what its answers to recorded requests differ in.
final class WireReplay {
  let directory = TemporaryDirectory()
  let server: ServerProcess
  private(set) var differences: [String] = []
  /// How many answers were compared.
  private(set) var compared = 0
  /// CouchDB's sequences (as its answers gave them) to Settee's, for requests that name one.
  private var sequences: [String: String] = [:]
  /// CouchDB's revisions of interactive writes to Settee's (the same edit hashes to another
  /// id on each), for requests that name one.
  private var revisions: [String: String] = [:]
  private var created: Set<String> = []

  init() throws {
    server = try ServerProcess(db: directory.path("wire.settee"))
  }

  deinit { server.stop() }

  var report: String { differences.joined(separator: "\n") }

  /// Sends each recorded request (but logins: the server has no administrator) and records
  /// how the answer differs from CouchDB's.
  func run(_ exchanges: [WireExchange]) throws {
    for exchange in exchanges where exchange.request.path != "/_session" {
      var request = exchange.request
      request.path = rewrite(request.path)
      // Bodies that are text (a multipart body with gzip parts is not) name revisions.
      if !revisions.isEmpty, var text = String(validating: request.body, as: UTF8.self) {
        for (couch, settee) in revisions {
          text = text.replacingOccurrences(of: couch, with: settee)
        }
        request.body = Array(text.utf8)
      }
      let answer = try RawHTTP.send(request, to: server)
      compared += 1
      for difference in WireShape.differences(settee: answer, couch: exchange.response) {
        differences.append(
          "n=\(exchange.n) \(exchange.request.method) \(exchange.request.path): \(difference)")
      }
      learnSequences(settee: answer, couch: exchange.response)
    }
  }

  /// Writes into the database a round reads what the reference source served in that
  /// round (`_bulk_get` documents and `open_revs` revisions, with their histories and
  /// attachments as stored), as a peer would have replicated them there.
  func fillSource(from round: [WireExchange]) throws {
    var documents: [String: JSONObject] = [:]
    var order: [String] = []
    func add(_ document: JSONObject) {
      guard let id = document["_id"]?.stringValue, let rev = document["_rev"]?.stringValue
      else { return }
      let key = id + " " + rev
      let carriesData = document["_attachments"]?.objectValue?.contains { $0.value["data"] != nil }
      if documents[key] == nil { order.append(key) }
      if documents[key] == nil || carriesData == true { documents[key] = document }
    }
    for exchange in round where exchange.response.status == 200 {
      let path = exchange.request.path
      if path.contains("/_bulk_get"), let results = exchange.response.json?["results"]?.arrayValue {
        for result in results {
          for doc in result["docs"]?.arrayValue ?? [] {
            if let ok = doc["ok"]?.objectValue { add(ok) }
          }
        }
      } else if path.contains("open_revs="), let type = exchange.response.header("content-type"),
        let boundary = Multipart.boundary(ofContentType: type)
      {
        for document in try Multipart.documents(
          fromMixed: exchange.response.body, boundary: boundary)
        {
          add(document)
        }
      }
    }
    let database =
      round.first { $0.request.path != "/_session" }
      .map { String($0.request.path.split(separator: "/").first ?? "") } ?? "wire-src"
    if !created.contains(database) {
      created.insert(database)
      _ = try RawHTTP.send(WireMessage(method: "PUT", path: "/" + database), to: server)
    }
    let docs = JSON.array(order.map { .object(documents[$0]!) })
    var request = WireMessage(method: "POST", path: "/\(database)/_bulk_docs")
    request.headers = [("Content-Type", "application/json")]
    request.body = JSONWriter.bytes(["new_edits": false, "docs": docs])
    let answer = try RawHTTP.send(request, to: server)
    if answer.status != 201 || answer.json != .array([]) {
      differences.append(
        "filling \(database): \(answer.status) \(String(decoding: answer.body, as: UTF8.self))")
    }
  }

  private func rewrite(_ path: String) -> String {
    var path = path
    for (couch, settee) in sequences.merging(revisions, uniquingKeysWith: { $1 })
    where path.contains(couch) {
      path = path.replacingOccurrences(of: couch, with: settee)
    }
    return path
  }

  private func learnSequences(settee: WireMessage, couch: WireMessage) {
    func text(_ json: JSON?) -> String? {
      switch json {
      case .string(let text)?: return text
      case .int(let number)?: return String(number)
      default: return nil
      }
    }
    guard let mine = settee.json, let theirs = couch.json else { return }
    if let a = theirs["rev"]?.stringValue, let b = mine["rev"]?.stringValue, a != b {
      revisions[a] = b
    }
    if let a = text(theirs["last_seq"]), let b = text(mine["last_seq"]) {
      sequences[a] = b.addingPercentEncoding(withAllowedCharacters: .urlQueryAllowed) ?? b
    }
  }
}
