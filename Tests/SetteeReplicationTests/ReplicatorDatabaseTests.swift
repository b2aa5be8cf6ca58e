import Foundation
import Settee
import SetteeCore
import SetteeReplication
import SetteeTestSupport
import Testing

/// A file's `_replicator` documents run in-process, without a server: a one-shot
/// document's replication runs once (not again after a restart unless its document
/// changes), a continuous one follows until its document is deleted, and a document that
/// does not describe a replication fails, saying why.
@Suite("The _replicator database")
struct ReplicatorDatabaseTests {
  let directory = TemporaryDirectory()

  private func state(_ replicator: ReplicatorDatabase, _ id: String) async throws -> String? {
    try await replicator.schedulerDocument(id)?["state"]?.stringValue
  }

  @Test func documentsRunTheirReplications() async throws {
    let path = directory.path("app.db")
    let database = try Database(path: path, configuration: .init(fullSync: false))
    let notes = database.collection("notes")
    try await notes.putAll((0..<40).map { ["_id": .string("n\($0)")] })
    let documents = database.collection(ReplicatorDatabase.databaseName)
    try await documents.put(["_id": "once", "source": "notes", "target": "copy", "create_target": true])
    try await documents.put([
      "_id": "live", "source": "notes", "target": "live-copy", "create_target": true,
      "continuous": true,
    ])
    try await documents.put(["_id": "broken", "source": "notes"])

    var replicator = ReplicatorDatabase(database: database)
    var following = Task { [replicator] in await replicator.follow() }
    #expect(try await waitUntil(300) { try await state(replicator, "once") == "completed" })
    #expect(try await database.collection("copy").count() == 40)
    #expect(try await waitUntil(300) { try await state(replicator, "live") == "running" })
    #expect(try await waitUntil(300) { try await database.collection("live-copy").count() == 40 })
    try await notes.put(["_id": "later"])
    #expect(try await waitUntil(300) { try await database.collection("live-copy").get("later") != nil })
    #expect(try await waitUntil(300) { try await state(replicator, "broken") == "failed" })
    let broken = try #require(try await replicator.schedulerDocument("broken"))
    #expect(broken["info"]?["error"]?.stringValue?.contains("target") == true, "\(broken)")
    #expect(replicator.schedulerDocuments.count == 3)

    // Stopped and started again: the one-shot replication is not run again, the
    // continuous one is.
    following.cancel()
    await following.value
    #expect(replicator.scheduler.jobs.isEmpty, "stopping the follower stops its jobs")
    try await database.collection("copy").put(["_id": "only-in-copy"])
    try await notes.put(["_id": "while-stopped"])
    replicator = ReplicatorDatabase(database: database)
    following = Task { [replicator] in await replicator.follow() }
    #expect(
      try await waitUntil(300) { try await database.collection("live-copy").get("while-stopped") != nil })
    #expect(try await waitUntil(300) { try await state(replicator, "once") == "completed" })
    #expect(try await database.collection("copy").get("while-stopped") == nil, "not run again")

    // Deleting the continuous document stops its replication.
    let live = try #require(try await documents.get("live"))
    _ = try await documents.delete("live", rev: live.rev!)
    #expect(await waitUntil(300) { replicator.scheduler.jobs.isEmpty })
    #expect(try await replicator.schedulerDocument("live") == nil)
    try await notes.put(["_id": "after-delete"])
    try await Task.sleep(for: .milliseconds(300))
    #expect(try await database.collection("live-copy").get("after-delete") == nil)
    following.cancel()
    await following.value
  }
}
