import Foundation
import Settee
import SetteeCore
import SetteeReplication
import SetteeTestSupport
import Testing

/// What a replication says of itself, as CouchDB's replicator says it (issue 43, item 5):
/// refused documents counted and named while the rest is written, the log's history, and
/// CouchDB's `use_checkpoints` and `use_bulk_get`.
@Suite("Replication reports")
struct ReplicationReportTests {
  let directory = TemporaryDirectory()

  private func collection(_ file: String, _ name: String = "notes") throws -> DocumentCollection {
    try directory.replica(file, name)
  }

  /// One document larger than the target takes fails alone (CouchDB's replicator writes
  /// the rest and counts it); the replication completes and names it.
  @Test func aDocumentTooLargeForTheTargetIsCountedAndNamed() async throws {
    let source = try collection("s.db")
    try await source.putAll((0..<20).map { ["_id": .string("d\($0)"), "n": .int(Int64($0))] })
    try await source.put(["_id": "big", "text": .string(String(repeating: "x", count: 300_000))])
    let server = try await ServerProcess(
      db: directory.path("t.db"), ["--log-level", "none", "--max-request-size", "100000"])
    defer { server.stop() }
    let target = try #require(URL(string: server.url + "notes"))
    let progress = try await Replicator(
      ReplicationConfiguration(source: .collection(source), target: .url(target), createTarget: true)
    ).run()
    #expect(progress.state == .completed)
    #expect(progress.docWriteFailures == 1)
    #expect(progress.docsWritten == 20)
    #expect(progress.failures.map(\.id) == ["big"])
    #expect(progress.failures.first?.error == "too_large")
    #expect(progress.json["failures"]?[0]?["id"] == "big")
    #expect(try await server.get("/notes/d7").status == 200)
    #expect(try await server.get("/notes/big").status == 404)
  }

  /// The answer carries the log's history, newest first, with CouchDB's times.
  @Test func theAnswerCarriesTheLogsHistory() async throws {
    let source = try collection("a.db")
    let target = try collection("b.db")
    try await source.putAll((0..<5).map { ["_id": .string("d\($0)")] })
    let configuration = ReplicationConfiguration(
      source: .collection(source), target: .collection(target), createTarget: true)
    let first = try await Replicator(configuration).run()
    #expect(first.history.count == 1)
    #expect(first.history.first?["start_time"]?.stringValue?.hasSuffix(" GMT") == true)
    #expect(first.history.first?["end_time"] != nil)
    try await source.put(["_id": "more"])
    let second = try await Replicator(configuration).run()
    #expect(second.history.map { $0["session_id"] } == [.string(second.sessionID), .string(first.sessionID)])
    #expect(second.json["history"]?.arrayValue?.count == 2)
    #expect(second.json["history"]?[0]?["docs_written"] == 1)
  }

  /// `use_checkpoints: false` reads from the beginning every time and leaves no log.
  @Test func withoutCheckpointsNothingIsLogged() async throws {
    let source = try collection("a.db")
    let target = try collection("b.db")
    try await source.putAll((0..<5).map { ["_id": .string("d\($0)")] })
    let configuration = ReplicationConfiguration(
      source: .collection(source), target: .collection(target), createTarget: true,
      useCheckpoints: false)
    let replicator = try Replicator(configuration)
    let first = try await replicator.run()
    #expect(first.docsWritten == 5)
    let id = "_local/" + first.replicationID
    #expect(try await source.localDocument(id) == nil)
    #expect(try await target.localDocument(id) == nil)
    let again = try await Replicator(configuration).run()
    #expect(again.changesRead == 5, "read again from the beginning")
    #expect(again.docsWritten == 0)
  }

  /// `use_bulk_get: false` reads a server source by `open_revs`, attachments included.
  @Test func withoutBulkGetEachDocumentIsReadByOpenRevs() async throws {
    let server = try await ServerProcess(db: directory.path("s.db"))
    defer { server.stop() }
    try await server.request("PUT", "/notes")
    for n in 0..<5 { try await server.put("/notes/d\(n)", ["n": .int(Int64(n))]) }
    try await server.request(
      "PUT", "/notes/d9/a.txt", body: Array("attached".utf8), headers: ["Content-Type": "text/plain"])
    let target = try collection("t.db")
    let progress = try await Replicator(
      ReplicationConfiguration(
        source: .url(URL(string: server.url + "notes")!), target: .collection(target),
        createTarget: true, useBulkGet: false)
    ).run()
    #expect(progress.state == .completed)
    #expect(progress.docsWritten == 6)
    #expect(try await target.attachment("a.txt", of: "d9")?.data == Array("attached".utf8))
  }

  /// `--doc-ids` takes a JSON array, so an id holding a comma can be named.
  @Test func docIDsTakeAJSONArray() throws {
    let source = try collection("a.db", Database.defaultCollectionName)
    try source.putAll([["_id": "a,b"], ["_id": "a"], ["_id": "b"]])
    let run = try SetteeBinary.run([
      "replicate", directory.path("a.db"), directory.path("c.db"), "--create-target",
      "--doc-ids", #"["a,b"]"#,
    ])
    #expect(run.status == 0, "\(run.stderr)")
    let copied = try Database(path: directory.path("c.db")).collection()
    #expect(try copied.get("a,b") != nil)
    #expect(try copied.get("a") == nil)
  }
}
