import Foundation
import Settee
import SetteeCore
import SetteeReplication

/// CouchDB's `_replicator` database: each document in it describes a replication, in the
/// shape of `POST /_replicate`'s body, which the server runs while the document exists
/// and starts again when the server starts. Writing the document again (a new revision)
/// restarts its replication with what it now says; deleting it stops the replication.
///
/// CouchDB 3 keeps a running replication's state out of its document (`_scheduler/docs`
/// shows it) and writes `_replication_state` into the document when it completes or
/// fails. Settee writes nothing into the documents (their top-level `_` names are the
/// engine's): `_scheduler/docs` shows every state, and that a one-shot replication
/// completed is kept in a local document of `_replicator`, so it is not run again after
/// a restart unless its document changes.
final class ReplicatorDocuments: Sendable {
  static let databaseName = "_replicator"
  /// The local document that records the one-shot replications that completed: document
  /// id → the revision that completed.
  static let completedRecord = "_local/settee-completed"

  /// What `_scheduler/docs` says of one document.
  struct Entry: Sendable {
    var rev: RevisionID
    /// The replication's id, once its sides were reached.
    var replicationID: String?
    var source: String?
    var target: String?
    /// CouchDB's states: `initializing` (written, not yet started), `running`,
    /// `completed`, `failed` (and `crashing` while a running replication retries).
    var state: String
    var error: String?
    var started: Date
    var updated: Date
    var progress: ReplicationProgress?
  }

  private let entries = Locked<[String: Entry]>([:])
  /// The last write of the completions record: each waits for the one before, so that no
  /// read-and-write of the record loses another's.
  private let recording = Locked<Task<Void, Never>?>(nil)

  /// Every document's entry, by id.
  var all: [(id: String, entry: Entry)] {
    entries.withLock { $0.map { (id: $0.key, entry: $0.value) } }.sorted { $0.id < $1.id }
  }

  func entry(_ id: String) -> Entry? { entries.withLock { $0[id] } }

  /// Follows the `_replicator` database's changes from its start until the task is
  /// cancelled (the server stops), starting, restarting and stopping replications.
  func follow(_ handler: CouchHandler) async {
    let collection = handler.database.collection(Self.databaseName)
    var since: Int64 = 0
    while !Task.isCancelled {
      do {
        if since > 0, try await !handler.database.collectionExists(Self.databaseName) {
          // The database was deleted: its replications end; a new one starts afresh.
          await stopAll(handler.replicationJobs)
          since = 0
        }
        let changes = try await collection.waitForChanges(since: since, timeout: 10)
        for change in changes {
          await apply(change, collection, handler)
          since = change.seq
        }
      } catch {
        // The file is busy or gone for a moment: look again shortly.
        do { try await Task.sleep(for: .seconds(1)) } catch { return }
      }
    }
  }

  /// Stops every document's replication and forgets the documents.
  private func stopAll(_ jobs: ReplicationJobs) async {
    let forgotten: [String: Entry] = entries.withLock { entries in
      let all = entries
      entries = [:]
      return all
    }
    for (id, entry) in forgotten {
      if let replicationID = entry.replicationID, jobs.job(replicationID)?.documentID == id {
        await jobs.stopAndWait(replicationID)
      }
    }
  }

  /// One document's change.
  private func apply(_ change: Change, _ collection: DocumentCollection, _ handler: CouchHandler)
    async
  {
    let id = change.id
    if Document.isDesignID(id) { return }
    if let running = entry(id) {
      if running.rev == change.rev { return }
      if let replicationID = running.replicationID,
        handler.replicationJobs.job(replicationID)?.documentID == id
      {
        await handler.replicationJobs.stopAndWait(replicationID)
      }
    }
    guard !change.isDeleted else {
      _ = entries.withLock { $0.removeValue(forKey: id) }
      record(id, completed: nil, collection)
      return
    }
    var entry = Entry(
      rev: change.rev, state: "running", started: Date(), updated: Date())
    func fail(_ reason: String) {
      entry.state = "failed"
      entry.error = reason
      entries.withLock { $0[id] = entry }
    }
    guard let document = try? await collection.get(id), document.rev == change.rev else {
      return  // changed again since: its next change is applied in its turn
    }
    let replicator: Replicator
    do {
      (replicator, entry.source, entry.target) = try handler.replicator(for: document.body)
      entry.replicationID = try await replicator.replicationID()
    } catch let error as CouchError {
      return fail(error.reason)
    } catch {
      return fail("\(error)")
    }
    let continuous = replicator.configuration.continuous
    if !continuous, (try? await completedRevisions(collection))?[id] == change.rev.description {
      entry.state = "completed"
      entries.withLock { $0[id] = entry }
      return
    }
    entries.withLock { $0[id] = entry }
    let rev = change.rev
    let started = handler.replicationJobs.start(
      replicator, id: entry.replicationID!, source: entry.source!, target: entry.target!,
      documentID: id
    ) { [self] last in
      let ended = entries.withLock { entries -> Bool in
        guard entries[id]?.rev == rev else { return false }  // replaced or deleted
        entries[id]?.progress = last
        entries[id]?.updated = Date()
        switch last.state {
        case .completed: entries[id]?.state = "completed"
        case .stopped: return false  // the server stops
        default:
          entries[id]?.state = "failed"
          entries[id]?.error = last.lastError
        }
        return last.state == .completed
      }
      if ended { record(id, completed: rev, collection) }
    }
    if !started {
      fail("the same replication (\(entry.replicationID!)) is running already")
    }
  }

  /// The record of completed one-shot replications.
  private func completedRevisions(_ collection: DocumentCollection) async throws -> [String:
    String]
  {
    guard let record = try await collection.localDocument(Self.completedRecord),
      case .object(let documents)? = record.body["documents"]
    else { return [:] }
    var revisions: [String: String] = [:]
    for member in documents {
      if let rev = member.value.stringValue { revisions[member.key] = rev }
    }
    return revisions
  }

  /// Records that the document's one-shot replication completed at `rev` (`nil`: forgets
  /// the document), after the records asked for before.
  private func record(_ id: String, completed rev: RevisionID?, _ collection: DocumentCollection) {
    recording.withLock { previous in
      previous = Task { [previous] in
        await previous?.value
        try? await self.write(id, completed: rev, collection)
      }
    }
  }

  private func write(_ id: String, completed rev: RevisionID?, _ collection: DocumentCollection)
    async throws
  {
    var revisions = try await completedRevisions(collection)
    guard revisions[id] != rev?.description else { return }
    revisions[id] = rev?.description
    let existing = try await collection.localDocument(Self.completedRecord)
    var json: JSONObject = [
      "_id": .string(Self.completedRecord),
      "documents": .object(
        JSONObject(revisions.sorted { $0.key < $1.key }.map { ($0.key, .string($0.value)) })),
    ]
    if let existing { json["_rev"] = .string(existing.rev) }
    try await collection.putLocal(json)
  }

  /// CouchDB's `_scheduler/docs` entry for a document.
  func schedulerDocument(_ id: String, _ entry: Entry, jobs: ReplicationJobs) -> JSON {
    let job = entry.replicationID.flatMap(jobs.job)
    let progress = job?.progress ?? entry.progress
    var state = entry.state
    var error = entry.error
    if state == "running", let progress, progress.state == .retrying {
      state = "crashing"
      error = progress.lastError
    }
    let info: JSON =
      state == "failed" || state == "crashing"
      ? ["error": error.map(JSON.string) ?? nil]
      : [
        "docs_read": .int(Int64(progress?.docsRead ?? 0)),
        "docs_written": .int(Int64(progress?.docsWritten ?? 0)),
        "doc_write_failures": .int(Int64(progress?.docWriteFailures ?? 0)),
        "changes_pending": progress?.pending.map { .int(Int64($0)) } ?? nil,
        "checkpointed_source_seq": progress?.lastSequence ?? nil,
      ]
    let format = ISO8601DateFormatter()
    return [
      "database": .string(Self.databaseName), "doc_id": .string(id),
      "id": entry.replicationID.map(JSON.string) ?? nil, "node": "settee",
      "source": entry.source.map(JSON.string) ?? nil,
      "target": entry.target.map(JSON.string) ?? nil,
      "state": .string(state), "info": info, "error_count": state == "crashing" ? 1 : 0,
      "start_time": .string(format.string(from: entry.started)),
      "last_updated": .string(format.string(from: job?.updated ?? entry.updated)),
    ]
  }
}
