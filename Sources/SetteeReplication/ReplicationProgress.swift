import SetteeCore

/// Where a replication is, as ``Replicator/start()`` reports it.
public struct ReplicationProgress: Sendable, Hashable {
  /// What the replication is doing.
  public enum State: String, Sendable, Hashable {
    /// Checking the peers and reading the checkpoints.
    case starting
    /// Copying changes.
    case running
    /// Continuous and caught up: waiting for the source's next change.
    case idle
    /// A request failed; it tries again after a delay (``lastError`` says why).
    case retrying
    /// One-shot and done.
    case completed
    /// Stopped by a failure it does not retry (``lastError``).
    case failed
    /// Stopped by ``Replicator/stop()``.
    case stopped
  }

  /// What the replication is doing now.
  public var state: State = .starting
  /// The replication id: the checkpoint documents are `_local/<id>` on both peers.
  public var replicationID = ""
  /// This run's session (a new one each time it starts or restarts from its checkpoint).
  public var sessionID = ""
  /// Changes read from the source's feed.
  public var changesRead = 0
  /// Revisions checked against the target (`_revs_diff`).
  public var missingChecked = 0
  /// Of those, the ones the target did not have.
  public var missingFound = 0
  /// Revisions read from the source (CouchDB counts revisions as documents).
  public var docsRead = 0
  /// Revisions the target stored.
  public var docsWritten = 0
  /// Revisions the target refused.
  public var docWriteFailures = 0
  /// Revisions a server source gave through `_bulk_get` (CouchDB's `bulk_get_docs`).
  public var bulkGetDocs = 0
  /// Revisions asked of a server source's `_bulk_get` (CouchDB's `bulk_get_attempts`).
  public var bulkGetAttempts = 0
  /// Changes the source has after the last one read, when it says.
  public var pending: Int?
  /// The source sequence the replication started from.
  public var startSequence: JSON = 0
  /// The source sequence it has read and written everything up to.
  public var lastSequence: JSON = 0
  /// The last error, retried or not (never with credentials).
  public var lastError: String?
  /// The revisions the target refused, the first ``maxListedFailures`` of them: which
  /// document, and the target's error and reason.
  public var failures: [ReplicationFailure] = []
  /// The replication log's sessions as last checkpointed, newest first (at most 50, as
  /// CouchDB keeps them), each with its times and counts.
  public var history: [JSON] = []

  /// Whether the replication copies named documents (`doc_ids`): its answer then repeats
  /// this session's times and counts at the top, as CouchDB's does (a shape CouchDB keeps
  /// from its 1.0 releases).
  public var byDocumentIDs = false

  /// How many refused revisions ``failures`` lists.
  public static let maxListedFailures = 100

  /// Progress before anything happened.
  public init() {}

  init(
    state: State, replicationID: String, sessionID: String, startSequence: JSON,
    lastSequence: JSON
  ) {
    self.state = state
    self.replicationID = replicationID
    self.sessionID = sessionID
    self.startSequence = startSequence
    self.lastSequence = lastSequence
  }

  /// CouchDB's answer to `POST /_replicate`: `ok`, `session_id`, `source_last_seq` and the
  /// replication log's `history` (this session's entry when nothing was checkpointed), with
  /// `no_changes` when there was nothing to do. Settee adds `failures`, the revisions the
  /// target refused, when there are any.
  public var json: JSON {
    let entry: JSON = [
      "session_id": .string(sessionID), "start_last_seq": startSequence,
      "end_last_seq": lastSequence, "recorded_seq": lastSequence,
      "missing_checked": .int(Int64(missingChecked)),
      "missing_found": .int(Int64(missingFound)), "docs_read": .int(Int64(docsRead)),
      "docs_written": .int(Int64(docsWritten)),
      "doc_write_failures": .int(Int64(docWriteFailures)),
      "bulk_get_docs": .int(Int64(bulkGetDocs)),
      "bulk_get_attempts": .int(Int64(bulkGetAttempts)),
    ]
    var answer: JSONObject = [
      "ok": .bool(state != .failed), "session_id": .string(sessionID),
      "source_last_seq": lastSequence, "replication_id_version": 4,
      "history": .array(history.first?["session_id"] == .string(sessionID) ? history : [entry]),
    ]
    if changesRead == 0 && state == .completed { answer["no_changes"] = true }
    if byDocumentIDs, changesRead > 0, case .array(let entries)? = answer["history"],
      let session = entries.first
    {
      for member in ["start_time", "end_time"] { answer[member] = session[member] ?? .null }
      answer["docs_read"] = .int(Int64(docsRead))
      answer["docs_written"] = .int(Int64(docsWritten))
      answer["doc_write_failures"] = .int(Int64(docWriteFailures))
    }
    if let lastError { answer["error"] = .string(lastError) }
    if !failures.isEmpty {
      answer["failures"] = .array(
        failures.map { ["id": .string($0.id), "error": .string($0.error), "reason": .string($0.reason)] })
    }
    return .object(answer)
  }
}
