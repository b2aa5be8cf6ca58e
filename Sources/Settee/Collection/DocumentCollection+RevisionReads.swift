import GRDB
import SetteeCore

/// What a read of one document adds to it, in CouchDB's terms (its `GET /{db}/{docid}`
/// query parameters).
public struct RevisionReadOptions: Sendable, Hashable {
  /// The revision to read: the winner when `nil`, else any leaf (only leaves keep bodies).
  public var rev: RevisionID?
  /// Add `_revisions`: the revision's ancestry, `{"start": N, "ids": [suffixes, newest first]}`.
  public var revs: Bool
  /// Add `_revs_info`: each revision of the ancestry with its status (`available`,
  /// `deleted` or `missing`, the last for a revision whose body is not kept).
  public var revsInfo: Bool
  /// Add `_conflicts`: the other live leaves (when there are any).
  public var conflicts: Bool
  /// Add `_deleted_conflicts`: the other deleted leaves (when there are any).
  public var deletedConflicts: Bool
  /// Add `_local_seq`: the sequence number the revision was written at (CouchDB's
  /// `local_seq`).
  public var localSeq: Bool = false
  /// Give every attachment's data (base64) rather than a stub (unless
  /// ``attachmentsSince`` names revisions: it decides then).
  public var attachments: Bool
  /// Give the data of the attachments written after these revisions only (the newest of
  /// them that is an ancestor of the one read), stubs for the others, with or without
  /// ``attachments``: what a replicator asks for when the peer holds these revisions
  /// (CouchDB's `atts_since`).
  public var attachmentsSince: [RevisionID]
  /// Show how attachments kept encoded (CouchDB's gzip-compressed types, replicated as
  /// they were) are stored: `encoding` and `encoded_length` on their stubs (CouchDB's
  /// `att_encoding_info`). Data given without ``encodedAttachmentData`` is decoded, and
  /// says nothing of its encoding.
  public var attachmentEncodingInfo: Bool
  /// Give encoded attachments' data as stored (gzip), marked with `encoding`,
  /// `encoded_length` and the decoded `length`: what a replica keeps, and what CouchDB
  /// sends in multipart answers. Without it, data is decoded.
  public var encodedAttachmentData: Bool

  /// Options; CouchDB's `meta=true` is `conflicts`, `deletedConflicts` and `revsInfo`.
  public init(
    rev: RevisionID? = nil, revs: Bool = false, revsInfo: Bool = false, conflicts: Bool = false,
    deletedConflicts: Bool = false, attachments: Bool = false,
    attachmentsSince: [RevisionID] = [], attachmentEncodingInfo: Bool = false,
    encodedAttachmentData: Bool = false
  ) {
    self.attachments = attachments
    self.attachmentsSince = attachmentsSince
    self.attachmentEncodingInfo = attachmentEncodingInfo
    self.encodedAttachmentData = encodedAttachmentData
    self.rev = rev
    self.revs = revs
    self.revsInfo = revsInfo
    self.conflicts = conflicts
    self.deletedConflicts = deletedConflicts
  }
}

/// One document of a batched `open_revs` read
/// (``DocumentCollection/openRevisions(_:latest:)-2hl5q``).
public struct RevisionsRequest: Sendable, Hashable {
  /// The document.
  public var id: String
  /// The revisions asked for; `nil`: every leaf.
  public var revs: [RevisionID]?
  /// What each answer adds (its `rev` is not used).
  public var options: RevisionReadOptions

  /// A request for `revs` of `id` (every leaf when `nil`).
  public init(_ id: String, _ revs: [RevisionID]?, options: RevisionReadOptions = .init()) {
    self.id = id
    self.revs = revs
    self.options = options
  }
}

/// One answer of an `open_revs` read: a leaf with its body, or a revision the document
/// does not have as a leaf.
public enum OpenRevision: Sendable, Hashable {
  /// The revision, as a document in CouchDB's shape (with `_revisions` when asked).
  case found(JSONObject)
  /// A revision asked for that is not a stored leaf.
  case missing(RevisionID)

  /// CouchDB's shape: `{"ok": {…}}` or `{"missing": "N-…"}`.
  public var json: JSONObject {
    switch self {
    case .found(let document): ["ok": .object(document)]
    case .missing(let rev): ["missing": .string(rev.description)]
    }
  }
}

extension DocumentCollection {
  /// A document in CouchDB's shape with what `options` asks for (see
  /// ``RevisionReadOptions``); `nil` when the collection does not hold it, when the winner
  /// is deleted and no `rev` is asked for, or when `rev` is neither one of its leaves nor a
  /// replaced revision that keeps its body (until ``compact()-6a4y8``).
  ///
  /// ```swift
  /// let doc = try notes.document("n", RevisionReadOptions(revs: true, conflicts: true))
  /// // ["_id": "n", "_rev": "2-c", "text": …, "_revisions": …, "_conflicts": ["2-b"]]
  /// ```
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func document(_ id: String, _ options: RevisionReadOptions) throws -> JSONObject? {
    try database.read(
      inCollection(nil) { db, cid in
        guard let reader = try LeafReader(db, cid: cid, id: id) else { return nil }
        guard let found = try reader.revision(options.rev), options.rev != nil || !found.isDeleted
        else { return nil }
        return try reader.json(db, found, options)
      })
  }

  /// CouchDB's `open_revs`: the given revisions of a document (every leaf, in CouchDB's
  /// order, when `revs` is `nil`: depth first through the revision tree, siblings by
  /// revision), each as a document or as missing. With `latest`, a
  /// revision that is an ancestor of leaves answers with those leaves instead. `options`
  /// adds to each document what it adds to ``document(_:_:)-2o8gj`` (its `rev` is not
  /// used).
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func openRevisions(
    _ id: String, _ revs: [RevisionID]? = nil, latest: Bool = false,
    options: RevisionReadOptions = RevisionReadOptions()
  ) throws -> [OpenRevision] {
    try openRevisions([RevisionsRequest(id, revs, options: options)], latest: latest)[0]
  }

  /// ``openRevisions(_:_:latest:options:)-8sq8t`` for many documents in one read (what a
  /// replicator's `_bulk_get` asks): the answers in the order of `requests`.
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func openRevisions(_ requests: [RevisionsRequest], latest: Bool = false) throws
    -> [[OpenRevision]]
  {
    let missing = requests.map { $0.revs.map { $0.map(OpenRevision.missing) } ?? [] }
    return try database.read(
      inCollection(missing) { db, cid in
        try requests.map { try Self.openRevisions(db, cid: cid, $0, latest: latest) }
      })
  }

  /// The answers to one request, read from `db`.
  static func openRevisions(
    _ db: SQLConnection, cid: Int64, _ request: RevisionsRequest, latest: Bool
  ) throws -> [OpenRevision] {
    guard let reader = try LeafReader(db, cid: cid, id: request.id) else {
      return request.revs.map { $0.map(OpenRevision.missing) } ?? []
    }
    guard let revs = request.revs else {
      return try reader.leavesInCouchDBOrder().map {
        .found(try reader.json(db, $0, request.options))
      }
    }
    var answers: [OpenRevision] = []
    var seen: Set<RevisionID> = []
    for rev in revs {
      let found = latest ? try reader.latest(rev) : try reader.revision(rev).map { [$0] } ?? []
      if found.isEmpty { answers.append(.missing(rev)) }
      for leaf in found where seen.insert(leaf.rev!).inserted {
        answers.append(.found(try reader.json(db, leaf, request.options)))
      }
    }
    return answers
  }

  /// A document in CouchDB's shape, without blocking the caller's thread.
  public func document(_ id: String, _ options: RevisionReadOptions) async throws -> JSONObject? {
    // Attachments' data inline may be large: such a read takes a lane.
    let inline = options.attachments || !options.attachmentsSince.isEmpty
    return try await database.withConnection(inline ? .reading : .brief) {
      try self.document(id, options)
    }
  }

  /// `open_revs` for many documents in one read, without blocking the caller's thread.
  public func openRevisions(_ requests: [RevisionsRequest], latest: Bool = false) async throws
    -> [[OpenRevision]]
  {
    try await database.withConnection(.reading) {
      try self.openRevisions(requests, latest: latest)
    }
  }

  /// CouchDB's `open_revs`, without blocking the caller's thread.
  public func openRevisions(
    _ id: String, _ revs: [RevisionID]? = nil, latest: Bool = false,
    options: RevisionReadOptions = RevisionReadOptions()
  ) async throws -> [OpenRevision] {
    try await database.withConnection(.reading) {
      try self.openRevisions(id, revs, latest: latest, options: options)
    }
  }
}

/// A document's leaves (with bodies) and revision tree, read once for the reads above.
private final class LeafReader {
  let leaves: [Document]
  let rid: Int64
  /// Whether any revision of the document has attachments (`documents.attachments`).
  private let holdsAttachments: Bool
  private let db: SQLConnection
  private let id: String
  private var loadedTree: StoredTree?

  init?(_ db: SQLConnection, cid: Int64, id: String) throws {
    guard let row = try DocumentReader.leafRow(db, cid: cid, id: id),
      row.leaves.first?.rev != nil
    else { return nil }
    (leaves, rid, holdsAttachments) = row
    self.db = db
    self.id = id
  }

  /// The document's revision tree, read at its first use: a plain read (no `revs`,
  /// `revs_info`, `atts_since` or `latest`) never reads it, however long the history.
  func tree() throws -> StoredTree {
    if let loadedTree { return loadedTree }
    let winner = leaves[0]
    let tree = try StoredTree.load(
      db, rid: rid, id: id, winner: winner.rev!, deleted: winner.isDeleted, seq: 0)
    loadedTree = tree
    return tree
  }

  /// Every leaf, in the order CouchDB lists them (``StoredTree/inCouchDBOrder(_:)``); the
  /// tree is read only when there is more than one.
  func leavesInCouchDBOrder() throws -> [Document] {
    guard leaves.count > 1 else { return leaves }
    let order = try tree().inCouchDBOrder(leaves.map { $0.rev! })
    return order.compactMap { rev in leaves.first { $0.rev == rev } }
  }

  /// The leaf `rev` (the winner for `nil`).
  func leaf(_ rev: RevisionID?) -> Document? {
    guard let rev else { return leaves.first }
    return leaves.first { $0.rev == rev }
  }

  /// The revision `rev` with its body (the winner for `nil`): a leaf, or a replaced
  /// revision whose row keeps its body until compaction.
  func revision(_ rev: RevisionID?) throws -> Document? {
    if let leaf = leaf(rev) { return leaf }
    guard let rev else { return nil }
    return try KeptBodies.document(db, rid: rid, id: id, rev: rev)
  }

  /// The leaves `rev` is, or is an ancestor of.
  func latest(_ rev: RevisionID) throws -> [Document] {
    // A leaf is nobody's ancestor: the tree is read only for a revision that is not one.
    if let leaf = leaf(rev) { return [leaf] }
    let tree = try tree()
    return leaves.filter { tree.ancestry(of: $0.rev!).contains(rev) }
  }

  /// `leaf` in CouchDB's member order: `_id`, `_rev`, `_deleted`, the body, then
  /// `_attachments`, `_revisions`, `_revs_info`, `_conflicts`, `_deleted_conflicts`.
  func json(_ db: SQLConnection, _ leaf: Document, _ options: RevisionReadOptions) throws
    -> JSONObject
  {
    var document = leaf
    let rev = leaf.rev!
    let needsAncestry = options.revs || options.revsInfo || !options.attachmentsSince.isEmpty
    // A first revision has no ancestors: no tree to read (every document of a first
    // replication).
    let ancestry =
      !needsAncestry ? [] : rev.generation == 1 ? [rev] : try tree().ancestry(of: rev)
    let stored = holdsAttachments ? try AttachmentStore.attachments(db, rid: rid, rev: rev) : []
    if !stored.isEmpty {
      // With atts_since, data goes only with what was written after the newest of those
      // revisions that this one descends from (all of it when it descends from none),
      // `attachments` or not: CouchDB stubs the older ones before it prints the data of the
      // rest, and its replicator asks for both. A `revpos` of 0 (a peer's revision that
      // came with none) tells nothing of when it was written: its data goes.
      let since = options.attachmentsSince.filter(ancestry.contains).map(\.generation).max()
      document.attachments = try AttachmentStore.read(
        db, stored, documentID: leaf.id, encodedData: options.encodedAttachmentData,
        encodingInfo: options.attachmentEncodingInfo
      ) { attachment in
        options.attachmentsSince.isEmpty
          ? options.attachments : attachment.revpos == 0 || attachment.revpos > since ?? 0
      }
    }
    var json = document.json
    if options.revs {
      json["_revisions"] = [
        "start": .int(Int64(rev.generation)),
        "ids": .array(ancestry.map { .string($0.digest) }),
      ]
    }
    if options.revsInfo {
      let tree = try tree()
      json["_revs_info"] = .array(
        ancestry.map { revision in
          let node = tree.nodes[revision]
          let status =
            node?.deleted == true
            ? "deleted"
            : node?.hasBody == true || leaves.contains { $0.rev == revision }
              ? "available" : "missing"
          return ["rev": .string(revision.description), "status": .string(status)]
        })
    }
    let others = leaves.filter { $0.rev != rev }
    let live = others.filter { !$0.isDeleted }.map { JSON.string($0.rev!.description) }
    let deleted = others.filter(\.isDeleted).map { JSON.string($0.rev!.description) }
    if options.conflicts, !live.isEmpty { json["_conflicts"] = .array(live) }
    if options.deletedConflicts, !deleted.isEmpty { json["_deleted_conflicts"] = .array(deleted) }
    // The winner's sequence is its document's; another leaf's is in its revision's row.
    if options.localSeq,
      let seq = try Int64.fetchOne(
        db.cachedStatement(
          sql: "SELECT seq FROM documents WHERE rid = ?1 AND rev = ?2 "
            + "UNION ALL SELECT seq FROM revisions WHERE rid = ?1 AND rev = ?2 LIMIT 1"),
        arguments: [rid, rev.description])
    {
      json["_local_seq"] = .int(seq)
    }
    return json
  }
}

extension DocumentCollection {
  /// Writes every document's whole revision tree as NDJSON, from one snapshot: one record
  /// per leaf (deleted ones too), the winner first, each with its `_revisions` ancestry
  /// and its attachments' data inline, ordered by id, then the local documents. ``importDocuments(contentsOf:batchSize:)-84gzk``
  /// grafts such records back (as ``putAll(_:newEdits:)-6e4pp`` does), so the output
  /// recreates every branch, body and attachment in another file or on a peer. Sequence
  /// numbers are the target's own. Attachments travel as base64 inside their record; for
  /// very large ones, ``Database/backup(to:)`` copies the file instead.
  ///
  /// - Returns: the number of records (leaves and local documents) written.
  /// - Throws: ``SetteeError`` with code `corruption` naming a damaged document; what
  ///   `output` throws, as it threw it.
  @discardableResult
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func exportRevisionTrees(_ output: ([UInt8]) throws -> Void) throws -> Int {
    let name = self.name
    return try CallerError.unmarking {
      try database.read { db in
        guard let cid = try DocumentReader.collectionID(db, name) else { return 0 }
        let ids = try String.fetchCursor(
          db.makeStatement(sql: "SELECT id FROM documents WHERE cid = ? ORDER BY id"),
          arguments: [cid])
        // Encoded attachments travel as stored, so that the digests a peer knows them by
        // stay true in the copy.
        let options = RevisionReadOptions(
          revs: true, attachments: true, encodedAttachmentData: true)
        var count = 0
        var chunk: [UInt8] = []
        while let id = try ids.next() {
          guard let reader = try LeafReader(db, cid: cid, id: id) else { continue }
          for leaf in reader.leaves {
            chunk += JSONWriter.bytes(.object(try reader.json(db, leaf, options)))
            chunk.append(UInt8(ascii: "\n"))
            count += 1
          }
          if chunk.count >= 64 * 1024 {
            try CallerError.marking { try output(chunk) }
            chunk.removeAll(keepingCapacity: true)
          }
        }
        // Local documents last, so that a backup restores them too.
        let locals = try Row.fetchCursor(
          db.makeStatement(
            sql: "SELECT name, rev, body FROM local_documents WHERE cid = ? ORDER BY name"),
          arguments: [cid])
        while let row = try locals.next() {
          chunk += JSONWriter.bytes(.object(try LocalDocuments.document(row).json))
          chunk.append(UInt8(ascii: "\n"))
          count += 1
        }
        if !chunk.isEmpty { try CallerError.marking { try output(chunk) } }
        return count
      }
    }
  }

  /// Writes every document's whole revision tree, without blocking the caller's thread.
  @discardableResult
  public func exportRevisionTrees(_ output: @escaping @Sendable ([UInt8]) throws -> Void)
    async throws -> Int
  {
    try await database.withConnection(.reading) { try self.exportRevisionTrees(output) }
  }
}
