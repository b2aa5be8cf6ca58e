import Foundation
import Hummingbird
import Settee
import SetteeCore
import SetteeReplication

extension CouchHandler {
  /// `POST /_replicate`: a one-shot replication answers when it is done, with CouchDB's
  /// summary; a continuous one answers `202` at once and runs until cancelled (`"cancel":
  /// true` with the same body, or `"replication_id"`) or the server stops.
  func replicate(_ request: CouchRequest) async throws -> Response {
    try allow(request, "POST")
    let body = try await request.jsonObjectBody()
    if body["cancel"] == true, let id = body["replication_id"]?.stringValue {
      return try cancelReplication(id.replacingOccurrences(of: "+continuous", with: ""))
    }
    let continuous = body["continuous"] == true
    let (replicator, sourceLabel, targetLabel) = try replicator(for: body)
    let id = try await replicationID(replicator)
    if body["cancel"] == true { return try cancelReplication(id) }
    if continuous {
      scheduler.add(replicator, id: id, sourceLabel: sourceLabel, targetLabel: targetLabel)
      return CouchResponse.json(
        ["ok": true, "_local_id": .string(id + "+continuous")], status: .accepted)
    }
    do {
      guard
        let progress = try await scheduler.run(
          replicator, id: id, sourceLabel: sourceLabel, targetLabel: targetLabel)
      else {
        throw CouchError(.conflict, "conflict", "the same replication is running already")
      }
      return CouchResponse.json(progress.json)
    } catch let error as ReplicationError {
      throw CouchError(replicationFailure: error)
    }
  }

  /// A replication as CouchDB's `_replicate` body (or a `_replicator` document) describes
  /// it, with the labels of its two sides.
  ///
  /// - Throws: ``CouchError`` `400 bad_request` naming what is wrong.
  func replicator(for body: JSONObject) throws -> (Replicator, source: String, target: String) {
    do {
      let request = try ReplicationRequest(couchDB: body, database: collection(named:))
      return (try Replicator(request.configuration), request.sourceLabel, request.targetLabel)
    } catch let error as SetteeError {
      throw CouchError(.badRequest, "bad_request", error.message)
    }
  }

  private func cancelReplication(_ id: String) throws -> Response {
    if let document = scheduler.job(id)?.documentID {
      // Its document would not know: it is stopped by deleting the document.
      throw CouchError(
        .badRequest, "bad_request",
        "replication \(id) runs for the _replicator document \(document): delete the document to stop it"
      )
    }
    guard scheduler.cancel(id) else {
      throw CouchError(.notFound, "not_found", "Replication \(id) is not running")
    }
    return CouchResponse.json(["ok": true, "_local_id": .string(id)])
  }

  private func replicationID(_ replicator: Replicator) async throws -> String {
    do { return try await replicator.replicationID() } catch var error as ReplicationError {
      error.whileOpening = true
      throw CouchError(replicationFailure: error)
    }
  }

  /// `_active_tasks`: CouchDB's entry for each replication running.
  func activeTasks() -> JSON {
    .array(
      scheduler.jobs.filter { $0.state == .running }.map { job in
        let progress = job.progress
        return [
          "type": "replication", "replication_id": .string(job.id),
          "database": job.documentID == nil ? nil : .string(ReplicatorDatabase.databaseName),
          "doc_id": job.documentID.map(JSON.string) ?? nil, "node": "settee",
          "pid": .string(job.id),
          "source": .string(job.sourceLabel), "target": .string(job.targetLabel),
          "continuous": .bool(job.configuration.continuous),
          "docs_read": .int(Int64(progress.docsRead)),
          "docs_written": .int(Int64(progress.docsWritten)),
          "doc_write_failures": .int(Int64(progress.docWriteFailures)),
          "missing_revisions_found": .int(Int64(progress.missingFound)),
          "revisions_checked": .int(Int64(progress.missingChecked)),
          "changes_pending": progress.pending.map { .int(Int64($0)) } ?? nil,
          "source_seq": progress.lastSequence, "checkpointed_source_seq": progress.lastSequence,
          "state": .string(progress.state.rawValue),
          "started_on": .int(Int64(job.added.timeIntervalSince1970)),
          "updated_on": .int(Int64(job.updated.timeIntervalSince1970)),
        ]
      })
  }

  /// `_scheduler/docs` (every `_replicator` document's replication),
  /// `_scheduler/docs/_replicator` (the same) or `_scheduler/docs/_replicator/{docid}`.
  func schedulerDocuments(_ path: [String]) async throws -> Response {
    guard path.isEmpty || path[0] == ReplicatorDatabase.databaseName else {
      throw CouchError(.notFound, "not_found", "Database does not exist.")
    }
    if path.count == 2 {
      guard let document = try await replicatorDatabase.schedulerDocument(path[1]) else {
        throw CouchError(.notFound, "not_found", "unknown document \(path[1])")
      }
      return CouchResponse.json(document)
    }
    let all = replicatorDatabase.schedulerDocuments
    return CouchResponse.json([
      "total_rows": .int(Int64(all.count)), "offset": 0, "docs": .array(all),
    ])
  }

  /// `_scheduler/jobs`: CouchDB's shape for the same replications.
  func schedulerJobs() -> JSON {
    let jobs = scheduler.jobs
    return [
      "total_rows": .int(Int64(jobs.count)), "offset": 0,
      "jobs": .array(
        jobs.map { job in
          [
            "id": .string(job.id),
            "database": job.documentID == nil ? nil : .string(ReplicatorDatabase.databaseName),
            "doc_id": job.documentID.map(JSON.string) ?? nil, "node": "settee",
            "pid": .string(job.id), "source": .string(job.sourceLabel),
            "target": .string(job.targetLabel), "user": nil,
            "start_time": .string(ISO8601DateFormatter().string(from: job.added)),
            "last_updated": .string(ISO8601DateFormatter().string(from: job.updated)),
            "history": [["type": .string(Self.historyType(job))]],
            "info": [
              "docs_read": .int(Int64(job.progress.docsRead)),
              "docs_written": .int(Int64(job.progress.docsWritten)),
              "error": job.progress.lastError.map(JSON.string) ?? nil,
            ],
          ]
        }),
    ]
  }
}

extension CouchHandler {
  /// The newest event of a job's history in `_scheduler/jobs`: CouchDB's `added` for a
  /// job waiting for a place, `crashed` for one waiting after a failure; otherwise the
  /// running replication's state.
  fileprivate static func historyType(_ job: ReplicationScheduler.Job) -> String {
    switch job.state {
    case .pending: "added"
    case .crashing: "crashed"
    case .running: job.progress.state.rawValue
    }
  }
}

extension CouchError {
  /// `POST /_replicate`'s answer to a replication that failed, by cause (issue 44: an
  /// unreachable source answered `500 unreachable`). As CouchDB's: a database that cannot
  /// be opened, because its peer answers 404 or does not answer at all, is `404
  /// db_not_found` ("could not open", with the cause); a peer that refuses the
  /// credentials, `401 unauthorized` or `403 forbidden`; any other failure `500` with the
  /// replication's error name (a peer's, or `unreachable`, `timeout`, `bad_response`).
  init(replicationFailure error: ReplicationError) {
    switch error.status {
    case 401: self.init(.unauthorized, "unauthorized", error.description)
    case 403: self.init(.forbidden, "forbidden", error.description)
    case 404 where error.whileOpening, nil where error.whileOpening:
      self.init(.notFound, "db_not_found", "could not open \(error.description)")
    default: self.init(.internalServerError, error.error, error.description)
    }
  }
}
