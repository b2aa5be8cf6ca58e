import Foundation
import Settee
import SetteeCore

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
///
/// `settee serve` runs one for its file; a Swift app runs one the same way:
///
/// ```swift
/// let replicator = ReplicatorDatabase(database: db)
/// let following = Task { await replicator.follow() }   // until cancelled
/// ```
public final class ReplicatorDatabase: Sendable {
  /// The collection that holds the documents: `_replicator`.
  public static let databaseName = "_replicator"
  /// The local document that records the one-shot replications that completed: document
  /// id → the revision that completed.
  static let completedRecord = "_local/settee-completed"

  /// The file whose `_replicator` collection it follows.
  public let database: Database
  /// What runs the replications.
  public let scheduler: ReplicationScheduler
  /// Opens the collection a document names as its source or target (a name, not a URL).
  private let collectionNamed: @Sendable (String) throws -> DocumentCollection

  /// Follows `database`'s `_replicator` collection, running its replications through
  /// `scheduler`; a document's source or target that is a name (not a URL) is a
  /// collection of the same file, opened by `collectionNamed` (which may refuse names).
  public init(
    database: Database, scheduler: ReplicationScheduler = ReplicationScheduler(),
    collectionNamed: (@Sendable (String) throws -> DocumentCollection)? = nil
  ) {
    self.database = database
    self.scheduler = scheduler
    self.collectionNamed = collectionNamed ?? { database.collection($0) }
  }

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

  /// The entry of the document `id`, once its change was seen.
  func entry(_ id: String) -> Entry? { entries.withLock { $0[id] } }

  /// `_scheduler/docs`: CouchDB's entry for every document seen, by id.
  public var schedulerDocuments: [JSON] { all.map { schedulerDocument($0.id, $0.entry) } }

  /// `_scheduler/docs/_replicator/{id}`: the document's entry; CouchDB's first state
  /// (`initializing`) for a document written but not yet seen; `nil` when there is none.
  public func schedulerDocument(_ id: String) async throws -> JSON? {
    if let entry = entry(id) { return schedulerDocument(id, entry) }
    let collection = database.collection(Self.databaseName)
    guard !Document.isDesignID(id), let document = try await collection.get(id),
      let rev = document.rev, !document.isDeleted
    else { return nil }
    return schedulerDocument(
      id, Entry(rev: rev, state: "initializing", started: Date(), updated: Date()))
  }

  /// Follows the `_replicator` database's changes from its start until the task is
  /// cancelled, starting, restarting and stopping replications; when cancelled, it stops
  /// the replications its documents started.
  public func follow() async {
    let collection = database.collection(Self.databaseName)
    var since: Int64 = 0
    while !Task.isCancelled {
      do {
        if since > 0, try await !database.collectionExists(Self.databaseName) {
          // The database was deleted: its replications end; a new one starts afresh.
          await stopAll()
          since = 0
        }
        let changes = try await collection.waitForChanges(since: since, timeout: 10)
        for change in changes {
          await apply(change, collection)
          since = change.seq
        }
      } catch {
        // The file is busy or gone for a moment: look again shortly.
        do { try await Task.sleep(for: .seconds(1)) } catch { break }
      }
    }
    await stopAll()
  }

  /// Stops every document's replication and forgets the documents.
  private func stopAll() async {
    let forgotten: [String: Entry] = entries.withLock { entries in
      let all = entries
      entries = [:]
      return all
    }
    for (id, entry) in forgotten {
      if let replicationID = entry.replicationID,
        scheduler.job(replicationID)?.documentID == id
      {
        await scheduler.cancelAndWait(replicationID)
      }
    }
  }

  /// One document's change.
  private func apply(_ change: Change, _ collection: DocumentCollection) async {
    let id = change.id
    if Document.isDesignID(id) { return }
    if let running = entry(id) {
      if running.rev == change.rev { return }
      // A deleted document's entry goes before its job stops: once the job is gone, so
      // is the entry.
      if change.isDeleted { _ = entries.withLock { $0.removeValue(forKey: id) } }
      if let replicationID = running.replicationID,
        scheduler.job(replicationID)?.documentID == id
      {
        await scheduler.cancelAndWait(replicationID)
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
      let request = try ReplicationRequest(couchDB: document.body, database: collectionNamed)
      (entry.source, entry.target) = (request.sourceLabel, request.targetLabel)
      replicator = try Replicator(request.configuration)
      entry.replicationID = try await replicator.replicationID()
    } catch let error as SetteeError {
      return fail(error.message)
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
    let started = scheduler.add(
      replicator, id: entry.replicationID!, sourceLabel: entry.source,
      targetLabel: entry.target, documentID: id
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
  private func schedulerDocument(_ id: String, _ entry: Entry) -> JSON {
    let job = entry.replicationID.flatMap(scheduler.job).flatMap {
      $0.documentID == id ? $0 : nil
    }
    let progress = job?.progress ?? entry.progress
    var state = entry.state
    var error = entry.error
    if state == "running", let job {
      switch job.state {
      case .pending: state = "pending"
      case .crashing:
        state = "crashing"
        error = job.progress.lastError
      case .running where job.progress.state == .retrying:
        state = "crashing"
        error = job.progress.lastError
      case .running: break
      }
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
      "state": .string(state), "info": info, "error_count": state == "crashing" ? .int(Int64(max(1, job?.crashes ?? 1))) : 0,
      "start_time": .string(format.string(from: entry.started)),
      "last_updated": .string(format.string(from: job?.updated ?? entry.updated)),
    ]
  }
}
