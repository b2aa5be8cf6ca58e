import Foundation
import Settee
import SetteeCore

/// One side of a replication: a collection of a Settee file, or a CouchDB-protocol database
/// at a URL (CouchDB 3.x, `settee serve`, PouchDB Server …), credentials allowed in the URL.
public enum ReplicationEndpoint: Sendable {
  /// A collection of a Settee file, replicated through the engine's own calls.
  case collection(DocumentCollection)
  /// A database at a URL (`http://name:password@host:5984/db`), spoken to over HTTP.
  case url(URL)

  /// How progress, errors and `_active_tasks` name this side: a URL without its user name,
  /// password and query, or `FILE#COLLECTION`.
  public var label: String {
    switch self {
    case .collection(let collection): LocalPeer.label(of: collection)
    case .url(let url): (try? HTTPPeer(url: url))?.label ?? "(not a database URL)"
    }
  }
}

/// What to replicate, and how.
public struct ReplicationConfiguration: Sendable {
  /// Where documents come from.
  public var source: ReplicationEndpoint
  /// Where they are written.
  public var target: ReplicationEndpoint
  /// Follow the source's changes until stopped, instead of ending once caught up.
  public var continuous: Bool
  /// Create the target database when it does not exist.
  public var createTarget: Bool
  /// Replicate only these documents (CouchDB's `doc_ids`, `selector`).
  public var filter: ReplicationFilter
  /// Start after this source sequence instead of at the checkpoint (CouchDB's `since_seq`).
  public var sinceSequence: String?
  /// Copy only each document's winning revision, not its conflicts (CouchDB's
  /// `winning_revs_only`): for a backup or a one-way copy that is not synced back.
  public var winningRevisionsOnly: Bool
  /// How many changes are read at a time: 1,000 (CouchDB reads 500 in each of four
  /// workers; Settee's one pipeline measured fastest at 1,000).
  public var batchSize: Int
  /// How often progress is checkpointed on both peers, at most.
  public var checkpointInterval: Duration
  /// How long one request may take before the connection counts as stalled.
  public var requestTimeout: Duration
  /// How long a continuous replication's long poll waits for a change before asking again.
  public var pollTimeout: Duration
  /// The longest wait between two attempts after a failure (they double from a quarter of a
  /// second, as CouchDB's replicator's do).
  public var maxRetryDelay: Duration
  /// How many times a one-shot replication tries again after a transient failure before it
  /// fails (a continuous one tries for as long as it runs).
  public var retries: Int
  /// Read and write the checkpoints (`_local/<replication id>`) on both peers; `false`
  /// starts from the beginning (or ``sinceSequence``) and leaves no log (CouchDB's
  /// `use_checkpoints`).
  public var useCheckpoints: Bool
  /// Read a server source's documents with `_bulk_get`; `false` reads each by `open_revs`
  /// (CouchDB's `use_bulk_get`).
  public var useBulkGet: Bool

  /// A configuration; every setting but the two sides has CouchDB's default or Settee's.
  public init(
    source: ReplicationEndpoint, target: ReplicationEndpoint, continuous: Bool = false,
    createTarget: Bool = false, filter: ReplicationFilter = .none, sinceSequence: String? = nil,
    winningRevisionsOnly: Bool = false, batchSize: Int = 1_000,
    checkpointInterval: Duration = .seconds(5),
    requestTimeout: Duration = .seconds(60), pollTimeout: Duration = .seconds(30),
    maxRetryDelay: Duration = .seconds(60), retries: Int = 5, useCheckpoints: Bool = true,
    useBulkGet: Bool = true
  ) {
    self.useCheckpoints = useCheckpoints
    self.useBulkGet = useBulkGet
    self.source = source
    self.target = target
    self.continuous = continuous
    self.createTarget = createTarget
    self.filter = filter
    self.sinceSequence = sinceSequence
    self.winningRevisionsOnly = winningRevisionsOnly
    self.batchSize = batchSize
    self.checkpointInterval = checkpointInterval
    self.requestTimeout = requestTimeout
    self.pollTimeout = pollTimeout
    self.maxRetryDelay = maxRetryDelay
    self.retries = retries
  }
}

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
    if let lastError { answer["error"] = .string(lastError) }
    if !failures.isEmpty {
      answer["failures"] = .array(
        failures.map { ["id": .string($0.id), "error": .string($0.error), "reason": .string($0.reason)] })
    }
    return .object(answer)
  }
}

/// Replicates by CouchDB's replication protocol between two peers, each a local collection
/// or a URL: one-shot or continuous, filtered by ids or a selector, resuming from the
/// checkpoints both peers keep.
///
/// ```swift
/// let replicator = try Replicator(ReplicationConfiguration(
///   source: .url(URL(string: "http://admin:secret@127.0.0.1:5984/notes")!),
///   target: .collection(db.collection("notes"))))
/// for await progress in replicator.start() {
///   print(progress.state, progress.docsWritten)
/// }
/// ```
public final class Replicator: Sendable {
  /// What it replicates, and how.
  public let configuration: ReplicationConfiguration
  private let source: any ReplicationPeer
  private let target: any ReplicationPeer
  private let running = Locked<Task<ReplicationProgress, Never>?>(nil)
  /// The error a failed replication ended with, for ``run()`` to throw.
  private let failureBox = Locked<(any Error)?>(nil)

  /// A replicator for `configuration`; nothing happens before ``start()`` or ``run()``.
  ///
  /// - Throws: ``SetteeError`` with code `invalidArgument` for a URL that is not an
  ///   http(s) URL of a database, or a batch size below 1; `invalidQuery` for a selector
  ///   filter that is not a valid Mango selector.
  public init(_ configuration: ReplicationConfiguration) throws {
    guard configuration.batchSize >= 1 else {
      throw SetteeError(.invalidArgument, "a replication's batch size must be at least 1")
    }
    // Parsed once, here, so a bad selector fails before anything is read; a file source
    // filters with it (a server source is sent its JSON).
    var selector: Selector?
    if case .selector(let json) = configuration.filter {
      selector = try FindQuery(json: ["selector": .object(json)]).selector
    }
    self.configuration = configuration
    source = try Self.peer(configuration.source, configuration, selector: selector)
    target = try Self.peer(configuration.target, configuration, selector: nil)
  }

  private static func peer(
    _ endpoint: ReplicationEndpoint, _ configuration: ReplicationConfiguration,
    selector: Selector?
  )
    throws -> any ReplicationPeer
  {
    switch endpoint {
    case .collection(let collection): return LocalPeer(collection: collection, selector: selector)
    case .url(let url):
      return try HTTPPeer(
        url: url, requestTimeout: configuration.requestTimeout,
        usesBulkGet: configuration.useBulkGet)
    }
  }

  /// Starts the replication (once; later calls follow the same one) and reports its
  /// progress: after each batch, at each change of state, and at the end (``completed``,
  /// ``failed`` or ``stopped``), where the sequence ends.
  public func start() -> AsyncStream<ReplicationProgress> {
    let (stream, continuation) = AsyncStream.makeStream(
      of: ReplicationProgress.self, bufferingPolicy: .bufferingNewest(64))
    let task = running.withLock { task in
      if let task { return task }
      let started = Task { await self.replicate { continuation.yield($0) } }
      task = started
      return started
    }
    Task {
      let final = await task.value
      continuation.yield(final)
      continuation.finish()
    }
    return stream
  }

  /// Stops a started replication: a batch being written is finished or rolled back by the
  /// target as a whole, and the next run resumes from the last checkpoint.
  public func stop() {
    running.withLock { $0?.cancel() }
  }

  /// Runs the replication to its end (a continuous one until its task is cancelled or
  /// ``stop()`` is called) and returns the final progress.
  ///
  /// - Throws: ``ReplicationError`` (or the local peer's ``SetteeError``) when it fails.
  @discardableResult
  public func run() async throws -> ReplicationProgress {
    let stream = start()
    var last = ReplicationProgress()
    for await progress in stream { last = progress }
    if last.state == .failed, let failure = failureBox.withLock({ $0 }) { throw failure }
    return last
  }

  // MARK: - The algorithm

  /// Sessions until done: a transient failure (or, continuous, any failure) waits and
  /// starts again from the checkpoints.
  private func replicate(_ report: @escaping @Sendable (ReplicationProgress) -> Void) async
    -> ReplicationProgress
  {
    var progress = ReplicationProgress()
    var failures = 0
    while true {
      do {
        try await session(&progress, report)
        progress.state = .completed
        return progress
      } catch is CancellationError {
        progress.state = .stopped
        return progress
      } catch {
        progress.lastError = "\(error)"
        let transient = (error as? ReplicationError)?.isTransient ?? false
        if Task.isCancelled {
          progress.state = .stopped
          return progress
        }
        // A session that made progress starts the count again.
        failures = progress.state == .running || progress.state == .idle ? 1 : failures + 1
        guard configuration.continuous || (transient && failures <= configuration.retries) else {
          progress.state = .failed
          failureBox.withLock { $0 = error }
          return progress
        }
        progress.state = .retrying
        report(progress)
        let delay = min(
          configuration.maxRetryDelay, .milliseconds(250) * (1 << min(failures - 1, 18)))
        do { try await Task.sleep(for: delay) } catch {
          progress.state = .stopped
          return progress
        }
      }
    }
  }

  /// Checks that both databases exist, making the target when asked; what fails here is
  /// marked ``ReplicationError/whileOpening``.
  private func openDatabases() async throws {
    do {
      guard try await source.exists() else {
        throw ReplicationError(
          peer: source.label, status: 404, error: "not_found",
          reason: "the source database does not exist")
      }
      if try await !target.exists() {
        guard configuration.createTarget else {
          throw ReplicationError(
            peer: target.label, status: 404, error: "not_found",
            reason:
              "the target database does not exist (create it, or replicate with create_target)")
        }
        try await target.create()
      }
    } catch var error as ReplicationError {
      error.whileOpening = true
      throw error
    }
  }

  /// One session: peers checked, checkpoints compared, then batches of changes until the
  /// source has no more (one-shot) or until cancelled (continuous).
  private func session(
    _ progress: inout ReplicationProgress, _ report: @Sendable (ReplicationProgress) -> Void
  ) async throws {
    progress.state = .starting
    report(progress)
    try await openDatabases()
    let replicationID = try await self.replicationID()
    let checkpointID = "_local/" + replicationID
    let logs = configuration.useCheckpoints
    let sourceLog = logs ? try await source.localDocument(checkpointID) : nil
    let targetLog = logs ? try await target.localDocument(checkpointID) : nil
    var (since, history) = Checkpoint.start(source: sourceLog, target: targetLog)
    if let given = configuration.sinceSequence { (since, history) = (.string(given), []) }
    let sessionID = Hex.string(ofDigest: (0..<16).map { _ in UInt8.random(in: 0...255) })
    let started = Date()
    progress = ReplicationProgress(
      state: .running, replicationID: replicationID, sessionID: sessionID,
      startSequence: since, lastSequence: since)
    report(progress)

    let bulkGetStart = source.bulkGetCounts
    var checkpointed = since
    var lastCheckpoint = ContinuousClock.now
    var revs = (source: sourceLog?["_rev"], target: targetLog?["_rev"])
    func checkpoint(_ progress: inout ReplicationProgress) async throws {
      guard logs,
        progress.lastSequence != checkpointed || revs.source == nil || revs.target == nil
      else { return }
      try await target.ensureFullCommit()
      var log = Checkpoint.log(
        id: checkpointID, session: sessionID, seq: progress.lastSequence, started: started,
        startSeq: progress.startSequence, stats: progress, history: history)
      log["_rev"] = revs.source
      try await source.putLocalDocument(log)
      revs.source = try await source.localDocument(checkpointID)?["_rev"]
      log["_rev"] = revs.target
      try await target.putLocalDocument(log)
      revs.target = try await target.localDocument(checkpointID)?["_rev"]
      checkpointed = progress.lastSequence
      lastCheckpoint = .now
      progress.history = log["history"]?.arrayValue ?? []
    }

    // A four-stage pipeline: while batch N is written to the target, batch N+1 is read
    // from the source (`_bulk_get`), batch N+2's revisions are compared with the target's
    // (`_revs_diff`) and page N+3 of the changes feed is read. A document appears once in
    // a feed, so the stages never hold the same revision; the writes keep the feed's
    // order, and the sequence recorded is always that of a written batch. A page with no
    // rows is the end of the feed: nothing is read after it until it has passed every
    // stage.
    var caughtUp = false
    var page: ChangesPage? = try await changes(since: progress.lastSequence, wait: nil)
    var compared: Compared? = nil
    var fetched: Fetched? = nil
    while true {
      try Task.checkCancellation()
      let (toCompare, toFetch) = (page, compared)
      async let pageNext: ChangesPage? =
        toCompare.map { !$0.rows.isEmpty } ?? false
        ? changes(since: toCompare!.lastSeq, wait: nil) : nil
      async let comparedNext: Compared? = toCompare == nil ? nil : compare(toCompare!)
      async let fetchedNext: Fetched? = toFetch == nil ? nil : fetch(toFetch!)
      if let fetched {
        if fetched.page.rows.isEmpty {
          progress.lastSequence = fetched.page.lastSeq
          progress.pending = fetched.page.pending
        } else {
          caughtUp = false
          progress.state = .running
          progress.pending = fetched.page.pending
          fetched.count(into: &progress)
          let counts = source.bulkGetCounts
          progress.bulkGetDocs = counts.docs - bulkGetStart.docs
          progress.bulkGetAttempts = counts.attempts - bulkGetStart.attempts
          try await write(fetched.documents, &progress)
          progress.lastSequence = fetched.page.lastSeq
          report(progress)
          if ContinuousClock.now - lastCheckpoint >= configuration.checkpointInterval {
            try await checkpoint(&progress)
          }
        }
      }
      (page, compared, fetched) = try await (pageNext, comparedNext, fetchedNext)
      guard page == nil && compared == nil && fetched == nil else { continue }
      // The end of the feed has been written.
      guard configuration.continuous else { break }
      if !caughtUp {
        caughtUp = true
        progress.state = .idle
        try await checkpoint(&progress)
        report(progress)
      }
      page = try await changes(since: progress.lastSequence, wait: configuration.pollTimeout)
    }
    try await checkpoint(&progress)
  }

  /// A page of changes, with the revisions of it the target lacks.
  private struct Compared: Sendable {
    var page: ChangesPage
    var wanted: [WantedRevisions] = []
    var missingChecked = 0
    var missingFound = 0
  }

  /// A page of changes read, with the documents the target lacks (those with attachment
  /// data already written: ``written``).
  private struct Fetched: Sendable {
    var page: ChangesPage
    var documents: [BulkDocument] = []
    var missingChecked = 0
    var missingFound = 0
    var written = Written()

    func count(into progress: inout ReplicationProgress) {
      progress.changesRead += page.rows.count
      progress.missingChecked += missingChecked
      progress.missingFound += missingFound
      progress.docsRead += documents.count + written.documents
      written.count(into: &progress)
    }
  }

  /// What writes did: documents written, the failures, the last of them in words.
  private struct Written: Sendable {
    var documents = 0
    var failures = 0
    var lastError: String?
    /// The refusals, as many as a progress lists.
    var refused: [ReplicationFailure] = []

    func count(into progress: inout ReplicationProgress) {
      progress.docsWritten += documents - failures
      progress.docWriteFailures += failures
      if let lastError { progress.lastError = lastError }
      progress.failures += refused.prefix(
        max(0, ReplicationProgress.maxListedFailures - progress.failures.count))
    }

    mutating func add(_ other: Written) {
      documents += other.documents
      failures += other.failures
      lastError = other.lastError ?? lastError
      refused += other.refused.prefix(
        max(0, ReplicationProgress.maxListedFailures - refused.count))
    }
  }

  /// The changes after `since` (a long poll of `wait` when given).
  private func changes(since: JSON, wait: Duration?) async throws -> ChangesPage {
    try await source.changes(
      since: since, limit: configuration.batchSize, filter: configuration.filter, wait: wait)
  }

  /// What the target lacks of a page's changes (`_revs_diff`).
  private func compare(_ page: ChangesPage) async throws -> Compared {
    var compared = Compared(page: page)
    guard !page.rows.isEmpty else { return compared }
    var offered: [String: [RevisionID]] = [:]
    offered.reserveCapacity(page.rows.count)
    for row in page.rows {
      offered[row.id, default: []] += configuration.winningRevisionsOnly ? [row.revs[0]] : row.revs
    }
    compared.missingChecked = offered.values.reduce(0) { $0 + $1.count }
    let differences = try await target.revsDiff(offered)
    // In the feed's order, so that a batch is written as the source wrote it.
    var seen: Set<String> = []
    for row in page.rows where seen.insert(row.id).inserted {
      guard let difference = differences[row.id], !difference.missing.isEmpty else { continue }
      compared.missingFound += difference.missing.count
      compared.wanted.append(
        WantedRevisions(
          id: row.id, revs: difference.missing,
          attachmentsSince: difference.possibleAncestors))
    }
    return compared
  }

  /// The revisions the target lacks, read from the source with the attachments the target
  /// lacks. The batch is read with its attachments as stubs; the documents with attachment
  /// data the target lacks are then read again with it, in slices of at most
  /// ``writeBytes`` of it, each written at once (as CouchDB's replicator writes such a
  /// document as soon as it has it): a batch's attachments are never in memory together.
  /// They are written before the batch's other documents, which is safe: a document
  /// appears once in a batch, and the batch's sequence is recorded only when all of it is
  /// written.
  private func fetch(_ compared: Compared) async throws -> Fetched {
    var fetched = Fetched(
      page: compared.page, missingChecked: compared.missingChecked,
      missingFound: compared.missingFound)
    guard !compared.wanted.isEmpty else { return fetched }
    let documents = try await source.documents(compared.wanted, withData: false)
    var since: [String: [RevisionID]] = [:]
    for item in compared.wanted { since[item.id, default: []] += item.attachmentsSince }
    var plain: [BulkDocument] = []
    var withData: [(wanted: WantedRevisions, bytes: Int)] = []
    for document in documents {
      if let needed = document.attachmentDataNeeded(since: { since[$0] ?? [] }) {
        let wanted = WantedRevisions(
          id: needed.id, revs: [needed.rev], attachmentsSince: since[needed.id] ?? [])
        withData.append((wanted, needed.bytes))
      } else {
        plain.append(document)
      }
    }
    fetched.documents = try prepared(plain)
    var slice: [WantedRevisions] = []
    var bytes = 0
    for (index, item) in withData.enumerated() {
      slice.append(item.wanted)
      bytes += item.bytes
      let last = index == withData.count - 1
      guard last || bytes + withData[index + 1].bytes > Self.writeBytes else { continue }
      let read = try prepared(try await source.documents(slice, withData: true))
      fetched.written.add(try await write(read))
      (slice, bytes) = ([], 0)
    }
    return fetched
  }

  /// Documents a source sent, made ready for the target (``ReplicationPeer/prepare(_:)``).
  private func prepared(_ documents: [BulkDocument]) throws -> [BulkDocument] {
    do { return try target.prepare(documents) } catch let error as BulkDocumentError {
      throw sourceSent(error, of: documents.count)
    }
  }

  /// Writes a batch's documents as the source has them, in requests of at most
  /// ``writeBytes`` of attachment data (estimated from the base64 the source sent), so that
  /// attachments never make one request too large; a target that still answers 413 has
  /// the request halved.
  private func write(_ documents: [BulkDocument], _ progress: inout ReplicationProgress)
    async throws
  {
    try await write(documents).count(into: &progress)
  }

  /// ``write(_:_:)``, counted.
  private func write(_ documents: [BulkDocument]) async throws -> Written {
    var written = Written()
    var start = 0
    while start < documents.count {
      var end = start
      var bytes = 0
      while end < documents.count && (end == start || bytes < Self.writeBytes) {
        bytes += documents[end].estimatedBytes
        end += 1
      }
      let group = Array(documents[start..<end])
      start = end
      var failures = try await writeGroup(group)
      if failures.contains(where: { $0.error == "missing_stub" }) {
        failures = try await writeWithAllAttachments(group, failures)
      }
      written.documents += group.count
      written.failures += failures.count
      if let failure = failures.first {
        written.lastError = "\(target.label): \(failure.id): \(failure.error): \(failure.reason)"
      }
      written.refused += failures.prefix(
        max(0, ReplicationProgress.maxListedFailures - written.refused.count)
      ).map { ReplicationFailure(id: $0.id, error: $0.error, reason: $0.reason) }
    }
    return written
  }

  /// Writes a group to the target.
  private func writeGroup(_ group: [BulkDocument]) async throws -> [WriteFailure] {
    do { return try await target.write(group) } catch let error as ReplicationError
      where error.status == 400
    {
      // Texts go to a URL unread: one that is not a JSON object is the source's fault,
      // and a source's bad answer is retried.
      do { _ = try group.readTexts(limits: .default) } catch let invalid as BulkDocumentError {
        throw sourceSent(invalid, of: group.count)
      }
      throw error
    }
  }

  /// CouchDB's replicator's answer to `missing_stub`: the target lacks an attachment that
  /// a revision names only by a stub (the ancestor `atts_since` counted on no longer holds
  /// it), so those revisions are read again with every attachment's data and written
  /// once more. The failures that remain.
  private func writeWithAllAttachments(_ group: [BulkDocument], _ failures: [WriteFailure])
    async throws -> [WriteFailure]
  {
    let stubbed = Set(failures.filter { $0.error == "missing_stub" }.map(\.id))
    var wanted: [WantedRevisions] = []
    for document in group where stubbed.contains(document.id) {
      guard let text = document.idAndRev.rev?.stringValue,
        let rev = try? RevisionID(parsing: text)
      else { continue }
      wanted.append(WantedRevisions(id: document.id, revs: [rev], attachmentsSince: []))
    }
    guard !wanted.isEmpty else { return failures }
    let again = try prepared(try await source.documents(wanted, withData: true))
    return try await failures.filter { $0.error != "missing_stub" } + writeGroup(again)
  }

  /// The source's bad answer: a document text that is not a JSON object.
  private func sourceSent(_ error: BulkDocumentError, of count: Int) -> ReplicationError {
    ReplicationError(
      peer: source.label, status: nil, error: "bad_response",
      reason: "document \(error.index + 1) of \(count) read is not a JSON object: \(error.reason)")
  }

  /// How many bytes of documents one `_bulk_docs` request of a replication carries, at most
  /// (one document may be larger).
  static let writeBytes = 8 << 20

  /// The replication id: an MD5 of the peers' identities (the URL without credentials, or
  /// the file's uuid and the collection), the direction, the filter and a given start. The
  /// checkpoints are `_local/<id>` on both peers.
  public func replicationID() async throws -> String {
    var key: [JSON] = [
      4, .string(try await source.identity()), .string(try await target.identity()),
      configuration.filter.json, configuration.sinceSequence.map(JSON.string) ?? .null,
    ]
    if configuration.winningRevisionsOnly { key.append("winning_revs_only") }
    return Hex.string(ofDigest: MD5.hash(JSONWriter.bytes(.array(key))))
  }
}
