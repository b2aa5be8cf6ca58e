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
