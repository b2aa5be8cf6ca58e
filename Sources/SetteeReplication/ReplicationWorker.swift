import Foundation
import Settee
import SetteeCore

/// The work done on a page of the source's changes, as couch_replicator_worker does it: the
/// revisions the target lacks (`_revs_diff`), read from the source (`_bulk_get` or
/// `open_revs`, attachment data in bounded slices), and written to the target
/// (`_bulk_docs` with `new_edits: false`, in bounded requests, with CouchDB's answers to
/// `413` and `missing_stub`). ``ReplicationSession`` runs its stages as a pipeline.
struct ReplicationWorker: Sendable {
  let configuration: ReplicationConfiguration
  let source: any ReplicationPeer
  let target: any ReplicationPeer

  /// A page of changes, with the revisions of it the target lacks.
  struct Compared: Sendable {
    var page: ChangesPage
    var wanted: [WantedRevisions] = []
    var missingChecked = 0
    var missingFound = 0
  }

  /// A page of changes read, with the documents the target lacks (those with attachment
  /// data already written: ``written``).
  struct Fetched: Sendable {
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
  struct Written: Sendable {
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

    /// `count` documents written to `target`, of which `failures` were refused.
    mutating func record(_ count: Int, _ failures: [WriteFailure], to target: String) {
      documents += count
      self.failures += failures.count
      if let failure = failures.first {
        lastError = "\(target): \(failure.id): \(failure.error): \(failure.reason)"
      }
      refused += failures.prefix(max(0, ReplicationProgress.maxListedFailures - refused.count))
        .map { ReplicationFailure(id: $0.id, error: $0.error, reason: $0.reason) }
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
  func changes(since: JSON, wait: Duration?) async throws -> ChangesPage {
    try await source.changes(
      since: since, limit: configuration.batchSize, filter: configuration.filter, wait: wait)
  }

  /// What the target lacks of a page's changes (`_revs_diff`).
  func compare(_ page: ChangesPage) async throws -> Compared {
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
  /// written. A document with more attachment data than a slice is passed on by itself,
  /// its attachments streamed through a temporary file (``SpooledDocument``).
  func fetch(_ compared: Compared) async throws -> Fetched {
    var fetched = Fetched(
      page: compared.page, missingChecked: compared.missingChecked,
      missingFound: compared.missingFound)
    guard !compared.wanted.isEmpty else { return fetched }
    let documents = try await source.documents(compared.wanted, withData: false)
    var since: [String: [RevisionID]] = [:]
    for item in compared.wanted { since[item.id, default: []] += item.attachmentsSince }
    var plain: [BulkDocument] = []
    var withData: [(wanted: WantedRevisions, bytes: Int)] = []
    var large: [WantedRevisions] = []
    for document in documents {
      if let needed = document.attachmentDataNeeded(since: { since[$0] ?? [] }) {
        let wanted = WantedRevisions(
          id: needed.id, revs: [needed.rev], attachmentsSince: since[needed.id] ?? [])
        if needed.bytes > Self.writeBytes {
          large.append(wanted)
        } else {
          withData.append((wanted, needed.bytes))
        }
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
    for wanted in large { fetched.written.add(try await writeSpooled(wanted)) }
    return fetched
  }

  /// A document too large to hold, read from the source into a temporary file and written
  /// to the target from it. A target that lacks an attachment the stubs count on
  /// (`missing_stub`) gets the revision again with every attachment.
  private func writeSpooled(_ wanted: WantedRevisions) async throws -> Written {
    var written = Written()
    for document in try await source.spool(wanted) {
      defer { document.close() }
      var failure = try await target.write(document)
      if failure?.error == "missing_stub", let rev = document.document["_rev"]?.stringValue,
        let revision = try? RevisionID(parsing: rev)
      {
        for again in try await source.spool(
          WantedRevisions(id: document.id, revs: [revision], attachmentsSince: []))
        {
          defer { again.close() }
          failure = try await target.write(again)
        }
      }
      written.record(1, failure.map { [$0] } ?? [], to: target.label)
    }
    return written
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
  func write(_ documents: [BulkDocument], _ progress: inout ReplicationProgress)
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
      written.record(group.count, failures, to: target.label)
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
}
