import Foundation
import Hummingbird
import Settee
import SetteeCore
import SetteeReplication

/// The replications a server runs for `POST /_replicate`, listed by `_active_tasks` and
/// `_scheduler/jobs` until they end.
final class ReplicationJobs: Sendable {
  struct Job: Sendable {
    let replicator: Replicator
    let id: String
    let source: String
    let target: String
    /// The `_replicator` document that started it, if one did.
    let documentID: String?
    let started: Date
    var progress: ReplicationProgress
    var updated: Date
    /// What runs it; done once the job is gone from the list.
    var task: Task<Void, Never>?
  }

  private let jobs = Locked<[String: Job]>([:])

  var all: [Job] { jobs.withLock { Array($0.values) }.sorted { $0.started < $1.started } }

  /// The job `id`, while it runs.
  func job(_ id: String) -> Job? { jobs.withLock { $0[id] } }

  /// Starts `replicator` under `id` unless a job of that id runs already; `ended` is
  /// called with its last progress when it ends.
  func start(
    _ replicator: Replicator, id: String, source: String, target: String,
    documentID: String? = nil, ended: @escaping @Sendable (ReplicationProgress) -> Void = { _ in }
  ) -> Bool {
    let job = Job(
      replicator: replicator, id: id, source: source, target: target, documentID: documentID,
      started: Date(), progress: ReplicationProgress(), updated: Date())
    guard
      jobs.withLock({ jobs in
        guard jobs[id] == nil else { return false }
        jobs[id] = job
        return true
      })
    else { return false }
    let task = Task {
      var last = ReplicationProgress()
      for await progress in replicator.start() {
        last = progress
        jobs.withLock { jobs in
          jobs[id]?.progress = progress
          jobs[id]?.updated = Date()
        }
      }
      _ = jobs.withLock { $0.removeValue(forKey: id) }
      ended(last)
    }
    jobs.withLock { jobs in
      if jobs[id]?.replicator === replicator { jobs[id]?.task = task }
    }
    return true
  }

  /// Stops the job `id` and waits until it has ended (so that the same replication can
  /// start again at once).
  func stopAndWait(_ id: String) async {
    guard let job = jobs.withLock({ $0[id] }) else { return }
    job.replicator.stop()
    if let task = job.task {
      await task.value
    } else {
      // Its task was being stored: wait for the list to let go of it (bounded).
      for _ in 0..<1_000 where jobs.withLock({ $0[id]?.replicator === job.replicator }) {
        try? await Task.sleep(for: .milliseconds(10))
      }
    }
  }

  /// Stops the job `id`; `false` when there is none.
  func cancel(_ id: String) -> Bool {
    guard let job = jobs.withLock({ $0[id] }) else { return false }
    job.replicator.stop()
    return true
  }

  /// Stops every job (the server is stopping).
  func stopAll() {
    for job in jobs.withLock({ Array($0.values) }) { job.replicator.stop() }
  }
}

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
      _ = replicationJobs.start(replicator, id: id, source: sourceLabel, target: targetLabel)
      return CouchResponse.json(
        ["ok": true, "_local_id": .string(id + "+continuous")], status: .accepted)
    }
    guard replicationJobs.start(replicator, id: id, source: sourceLabel, target: targetLabel)
    else {
      throw CouchError(.conflict, "conflict", "the same replication is running already")
    }
    do {
      let progress = try await replicator.run()
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
    var filter = ReplicationFilter.none
    if let ids = body["doc_ids"] {
      guard case .array(let list) = ids, list.allSatisfy({ $0.stringValue != nil }) else {
        throw CouchError(.badRequest, "bad_request", "doc_ids must be an array of ids")
      }
      filter = .documentIDs(list.compactMap(\.stringValue))
    }
    if let selector = body["selector"] {
      guard case .object(let object) = selector, filter == .none else {
        throw CouchError(
          .badRequest, "bad_request", "selector must be an object, and not given with doc_ids")
      }
      filter = .selector(object)
    }
    if let name = body["filter"]?.stringValue {
      throw CouchError(
        .badRequest, "bad_request",
        "filter \(name) is a JavaScript filter function, which Settee never runs: use doc_ids or selector"
      )
    }
    func flag(_ name: String, default value: Bool) throws -> Bool {
      switch body[name] {
      case nil, .null?: return value
      case .bool(let flag)?: return flag
      default: throw CouchError(.badRequest, "bad_request", "\(name) must be true or false")
      }
    }
    let useCheckpoints = try flag("use_checkpoints", default: true)
    let useBulkGet = try flag("use_bulk_get", default: true)
    let (source, sourceLabel) = try endpoint(body["source"], "source")
    let (target, targetLabel) = try endpoint(body["target"], "target")
    do {
      let replicator = try Replicator(
        ReplicationConfiguration(
          source: source, target: target, continuous: body["continuous"] == true,
          createTarget: body["create_target"] == true, filter: filter,
          sinceSequence: body["since_seq"].map { $0.stringValue ?? JSONWriter.string($0) },
          winningRevisionsOnly: body["winning_revs_only"] == true, useCheckpoints: useCheckpoints,
          useBulkGet: useBulkGet))
      return (replicator, sourceLabel, targetLabel)
    } catch let error as SetteeError {
      throw CouchError(.badRequest, "bad_request", error.message)
    }
  }

  private func cancelReplication(_ id: String) throws -> Response {
    if let document = replicationJobs.job(id)?.documentID {
      // Its document would not know: it is stopped by deleting the document.
      throw CouchError(
        .badRequest, "bad_request",
        "replication \(id) runs for the _replicator document \(document): delete the document to stop it"
      )
    }
    guard replicationJobs.cancel(id) else {
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

  /// A side of a replication: a database of this server by name, or a URL (a string, or
  /// CouchDB's `{"url": …}` object); with the label `_active_tasks` shows.
  private func endpoint(_ value: JSON?, _ side: String) throws -> (ReplicationEndpoint, String) {
    var text = value?.stringValue
    if case .object(let object)? = value { text = object["url"]?.stringValue }
    guard let text, !text.isEmpty else {
      throw CouchError(.badRequest, "bad_request", "\(side) must be a database name or a URL")
    }
    let lowered = text.lowercased()
    if lowered.hasPrefix("http://") || lowered.hasPrefix("https://") {
      guard let url = URL(string: text) else {
        throw CouchError(.badRequest, "bad_request", "\(side) is not a URL")
      }
      return (.url(url), ReplicationEndpoint.url(url).label)
    }
    return (.collection(try collection(named: text)), text)
  }

  /// `_active_tasks`: CouchDB's entry for each replication running.
  func activeTasks() -> JSON {
    .array(
      replicationJobs.all.map { job in
        let progress = job.progress
        return [
          "type": "replication", "replication_id": .string(job.id),
          "database": job.documentID == nil ? nil : .string(ReplicatorDocuments.databaseName),
          "doc_id": job.documentID.map(JSON.string) ?? nil, "node": "settee",
          "pid": .string(job.id),
          "source": .string(job.source), "target": .string(job.target),
          "continuous": .bool(job.replicator.configuration.continuous),
          "docs_read": .int(Int64(progress.docsRead)),
          "docs_written": .int(Int64(progress.docsWritten)),
          "doc_write_failures": .int(Int64(progress.docWriteFailures)),
          "missing_revisions_found": .int(Int64(progress.missingFound)),
          "revisions_checked": .int(Int64(progress.missingChecked)),
          "changes_pending": progress.pending.map { .int(Int64($0)) } ?? nil,
          "source_seq": progress.lastSequence, "checkpointed_source_seq": progress.lastSequence,
          "state": .string(progress.state.rawValue),
          "started_on": .int(Int64(job.started.timeIntervalSince1970)),
          "updated_on": .int(Int64(job.updated.timeIntervalSince1970)),
        ]
      })
  }

  /// `_scheduler/docs` (every `_replicator` document's replication),
  /// `_scheduler/docs/_replicator` (the same) or `_scheduler/docs/_replicator/{docid}`.
  func schedulerDocuments(_ path: [String]) async throws -> Response {
    guard path.isEmpty || path[0] == ReplicatorDocuments.databaseName else {
      throw CouchError(.notFound, "not_found", "Database does not exist.")
    }
    let documents = replicatorDocuments
    if path.count == 2 {
      let id = path[1]
      if let entry = documents.entry(id) {
        return CouchResponse.json(documents.schedulerDocument(id, entry, jobs: replicationJobs))
      }
      // Written but not yet seen by the server's follower: CouchDB's first state.
      let collection = database.collection(ReplicatorDocuments.databaseName)
      guard !Document.isDesignID(id), let document = try await collection.get(id),
        let rev = document.rev, !document.isDeleted
      else {
        throw CouchError(.notFound, "not_found", "unknown document \(id)")
      }
      let entry = ReplicatorDocuments.Entry(
        rev: rev, state: "initializing", started: Date(), updated: Date())
      return CouchResponse.json(documents.schedulerDocument(id, entry, jobs: replicationJobs))
    }
    let all = documents.all
    return CouchResponse.json([
      "total_rows": .int(Int64(all.count)), "offset": 0,
      "docs": .array(
        all.map { documents.schedulerDocument($0.id, $0.entry, jobs: replicationJobs) }),
    ])
  }

  /// `_scheduler/jobs`: CouchDB's shape for the same replications.
  func schedulerJobs() -> JSON {
    let jobs = replicationJobs.all
    return [
      "total_rows": .int(Int64(jobs.count)), "offset": 0,
      "jobs": .array(
        jobs.map { job in
          [
            "id": .string(job.id),
            "database": job.documentID == nil ? nil : .string(ReplicatorDocuments.databaseName),
            "doc_id": job.documentID.map(JSON.string) ?? nil, "node": "settee",
            "pid": .string(job.id), "source": .string(job.source),
            "target": .string(job.target), "user": nil,
            "start_time": .string(ISO8601DateFormatter().string(from: job.started)),
            "last_updated": .string(ISO8601DateFormatter().string(from: job.updated)),
            "history": [["type": .string(job.progress.state.rawValue)]],
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
