import Foundation
import SetteeCore

/// CouchDB's replication log: the `_local/<replication id>` document written on both peers,
/// `{"session_id", "source_last_seq", "replication_id_version", "history": [{"session_id",
/// "recorded_seq", …}]}`, newest session first (at most 50), which PouchDB and CouchDB
/// write and read alike.
enum Checkpoint {
  static let historyLength = 50

  /// Where a replication starts: the source's logged sequence when both logs end in the
  /// same session; otherwise the `recorded_seq` of the newest session both histories hold
  /// (CouchDB's `compare_rep_history`); otherwise the beginning. With it, the history to
  /// go on from.
  static func start(source: JSONObject?, target: JSONObject?) -> (since: JSON, history: [JSON]) {
    guard let source, let target else { return (0, []) }
    let sourceHistory = source["history"]?.arrayValue ?? []
    if let session = source["session_id"], session == target["session_id"],
      let seq = source["source_last_seq"]
    {
      return (seq, sourceHistory)
    }
    var sourceRest = sourceHistory[...]
    var targetRest = (target["history"]?.arrayValue ?? [])[...]
    while let first = sourceRest.first, let other = targetRest.first {
      if targetRest.contains(where: { $0["session_id"] == first["session_id"] }) {
        return (first["recorded_seq"] ?? 0, Array(sourceRest))
      }
      if sourceRest.dropFirst().contains(where: { $0["session_id"] == other["session_id"] }) {
        return (other["recorded_seq"] ?? 0, Array(targetRest))
      }
      sourceRest = sourceRest.dropFirst()
      targetRest = targetRest.dropFirst()
    }
    return (0, [])
  }

  /// The log after a session reached `seq`.
  static func log(
    id: String, session: String, seq: JSON, started: Date, startSeq: JSON,
    stats: ReplicationProgress, history: [JSON]
  ) -> JSONObject {
    let entry: JSON = [
      "session_id": .string(session), "start_time": .string(httpDate(started)),
      "end_time": .string(httpDate(Date())), "start_last_seq": startSeq, "end_last_seq": seq,
      "recorded_seq": seq, "missing_checked": .int(Int64(stats.missingChecked)),
      "missing_found": .int(Int64(stats.missingFound)),
      "docs_read": .int(Int64(stats.docsRead)), "docs_written": .int(Int64(stats.docsWritten)),
      "doc_write_failures": .int(Int64(stats.docWriteFailures)),
      "bulk_get_docs": .int(Int64(stats.bulkGetDocs)),
      "bulk_get_attempts": .int(Int64(stats.bulkGetAttempts)),
    ]
    let kept = history.filter { $0["session_id"] != .string(session) }
    return [
      "_id": .string(id), "session_id": .string(session), "source_last_seq": seq,
      "replication_id_version": 4,
      "history": .array(Array(([entry] + kept).prefix(historyLength))),
    ]
  }

  /// RFC 1123's date, as CouchDB writes `start_time` and `end_time`.
  static func httpDate(_ date: Date) -> String {
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.timeZone = TimeZone(identifier: "GMT")
    formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
    return formatter.string(from: date)
  }
}

/// A session's checkpoints, as couch_replicator_scheduler_job keeps them: the replication
/// log read from both peers at the start, and written to both (source first, as CouchDB
/// does) when the sequence written moved, after the target has committed what it wrote.
struct Checkpointer: Sendable {
  let source: any ReplicationPeer
  let target: any ReplicationPeer
  /// `_local/<replication id>`.
  let documentID: String
  /// Whether the logs are read and written at all (CouchDB's `use_checkpoints`).
  let enabled: Bool
  let sessionID: String
  let started = Date()
  /// The history the session goes on from.
  let history: [JSON]
  /// The sequence the session starts from.
  let since: JSON
  private var revs: (source: JSON?, target: JSON?)
  private var checkpointed: JSON
  /// When the logs were last written (or the session started).
  private(set) var lastWritten = ContinuousClock.now

  /// Reads both peers' logs and finds where the session starts (a given
  /// `sinceSequence` overrides them, with no history).
  init(
    source: any ReplicationPeer, target: any ReplicationPeer, replicationID: String,
    sessionID: String, configuration: ReplicationConfiguration
  ) async throws {
    self.source = source
    self.target = target
    documentID = "_local/" + replicationID
    enabled = configuration.useCheckpoints
    self.sessionID = sessionID
    let sourceLog = enabled ? try await source.localDocument(documentID) : nil
    let targetLog = enabled ? try await target.localDocument(documentID) : nil
    var (since, history) = Checkpoint.start(source: sourceLog, target: targetLog)
    if let given = configuration.sinceSequence { (since, history) = (.string(given), []) }
    self.since = since
    self.history = history
    checkpointed = since
    revs = (sourceLog?["_rev"], targetLog?["_rev"])
  }

  /// Writes the log on both peers when the sequence moved since the last write (or a peer
  /// has none yet), and puts its history into `progress`.
  mutating func write(_ progress: inout ReplicationProgress) async throws {
    guard enabled,
      progress.lastSequence != checkpointed || revs.source == nil || revs.target == nil
    else { return }
    try await target.ensureFullCommit()
    var log = Checkpoint.log(
      id: documentID, session: sessionID, seq: progress.lastSequence, started: started,
      startSeq: progress.startSequence, stats: progress, history: history)
    log["_rev"] = revs.source
    try await source.putLocalDocument(log)
    revs.source = try await source.localDocument(documentID)?["_rev"]
    log["_rev"] = revs.target
    try await target.putLocalDocument(log)
    revs.target = try await target.localDocument(documentID)?["_rev"]
    checkpointed = progress.lastSequence
    lastWritten = .now
    progress.history = log["history"]?.arrayValue ?? []
  }
}
