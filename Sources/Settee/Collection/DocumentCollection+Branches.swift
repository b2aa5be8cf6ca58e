import GRDB
import SetteeCore

extension DocumentCollection {
  /// How many revisions of each branch a collection keeps unless told otherwise
  /// (CouchDB's default `_revs_limit`).
  public static let defaultRevsLimit = 1000

  // MARK: - Revisions from peers

  /// Writes documents as a peer sends them (CouchDB's `new_edits: false`), in one
  /// transaction: each carries its revision (`_rev`) and, usually, its ancestry
  /// (`_revisions: {"start": N, "ids": […]}`), which are grafted into the document's tree
  /// as they are. A revision already held is a no-op reported as success. A revision on
  /// another branch than the current winner makes the document conflicted; the winner is
  /// then the greatest live leaf (``conflictedDocumentIDs()-3rz2b``, ``resolveConflicts(of:_:)-8c6vc``).
  ///
  /// With `newEdits: true` this is ``putAll(_:)-3hl8g``.
  ///
  /// - Throws: ``SetteeError`` naming the record (0-based) whose revision is missing or
  ///   malformed, or as ``putAll(_:)-3hl8g``; nothing is written then.
  @discardableResult
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func putAll(_ documents: [JSONObject], newEdits: Bool) throws -> [WriteResult] {
    guard !newEdits else { return try putAll(documents) }
    let limits = database.configuration.limits
    // Each document is checked as it is written, not all first: a batch is then held once
    // (as the caller's objects), not twice; an invalid one rolls the transaction back.
    return try database.write(
      writeOperation(documents) { writer, json in
        let graft = try Document.replicated(validating: .object(json), limits: limits)
        return try writer.graft(graft.document, history: graft.history, validated: true)
      })
  }

  /// Writes one document as a peer sends it (see ``putAll(_:newEdits:)-6e4pp``).
  @discardableResult
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func put(_ json: JSONObject, newEdits: Bool) throws -> WriteResult {
    try putAll([json], newEdits: newEdits)[0]
  }

  // MARK: - revs_limit

  /// How many revisions of each branch the collection keeps (CouchDB's `_revs_limit`;
  /// ``defaultRevsLimit`` until set).
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func revsLimit() throws -> Int {
    try database.read(
      inCollection(DocumentCollection.defaultRevsLimit) { db, cid in
        try Int.fetchOne(
          db.cachedStatement(sql: "SELECT revs_limit FROM collections WHERE cid = ?"),
          arguments: [cid]) ?? DocumentCollection.defaultRevsLimit
      })
  }

  /// Sets how many revisions of each branch the collection keeps. Histories are stemmed
  /// to it by their next write (as CouchDB stems at compaction); leaves always stay, so
  /// the winner never changes by stemming.
  ///
  /// - Throws: ``SetteeError`` with code `invalidArgument` for a limit below 1.
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func setRevsLimit(_ limit: Int) throws {
    guard limit >= 1 else {
      throw SetteeError(.invalidArgument, "revs_limit must be 1 or more, not \(limit)")
    }
    let name = self.name
    try database.write { db in
      let cid = try DocumentReader.ensureCollection(db, name)
      try db.execute(
        sql: "UPDATE collections SET revs_limit = ? WHERE cid = ?", arguments: [limit, cid])
    }
  }

  // MARK: - Conflicts

  /// The ids of the documents that have more than one live leaf, in id order, read from
  /// an index of them (no scan of the collection).
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func conflictedDocumentIDs() throws -> [String] {
    try database.read(
      inCollection([]) { db, cid in
        try DocumentCollection.conflictedIDs(db, cid: cid).sorted {
          $0.utf8.lexicographicallyPrecedes($1.utf8)
        }
      })
  }

  /// How many documents are conflicted, from the same index (cheap enough to show in an
  /// app's interface).
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func conflictCount() throws -> Int {
    try database.read(
      inCollection(0) { db, cid in
        try Int.fetchOne(
          db.cachedStatement(sql: "SELECT count(*) FROM documents WHERE cid = ? AND conflicts > 0"),
          arguments: [cid]) ?? 0
      })
  }

  /// Every leaf of a document with its body, the winner first, then in the order that
  /// would pick the next winner; empty for a document the collection does not hold.
  /// (CouchDB's `open_revs=all`.)
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func leaves(of id: String) throws -> [Document] {
    try database.read(
      inCollection([]) { db, cid in try DocumentReader.leaves(db, cid: cid, id: id) })
  }

  /// A stored revision of a document with its body: the winner, any other leaf, or a
  /// replaced revision until ``compact()-6a4y8`` clears its body (as CouchDB keeps them
  /// until its compaction); `nil` when the document has no such revision with a body.
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func get(_ id: String, rev: RevisionID) throws -> Document? {
    try database.read(
      inCollection(nil) { db, cid in try KeptBodies.revision(db, cid: cid, id: id, rev: rev) })
  }

  /// Resolves a conflicted document in one transaction (Cloudant Sync's
  /// `resolveConflictsForDocument:resolver:`): `resolver` gets every live leaf, the
  /// current winner first, and answers which one to keep or a merged body; every other
  /// live leaf gets a deletion, so the document has one live leaf left. A merged body is
  /// written as a new revision of the current winner. Nothing happens when the resolver
  /// answers `nil` or the document has fewer than two live leaves.
  ///
  /// The resolver runs inside the write transaction, so the leaves it sees are the ones it
  /// resolves; keep it short, other writers wait for it.
  ///
  /// ```swift
  /// for id in try notes.conflictedDocumentIDs() {
  ///   try notes.resolveConflicts(of: id) { leaves in
  ///     .keep(leaves.max { $0["edited"]?.stringValue ?? "" < $1["edited"]?.stringValue ?? "" }!.rev!)
  ///   }
  /// }
  /// ```
  ///
  /// - Returns: the revision that is now the only live leaf; `nil` when nothing happened.
  /// - Throws: ``SetteeError`` with code `invalidArgument` when `.keep` names no live leaf,
  ///   a validation code for a bad merged body, or what `resolver` throws.
  @discardableResult
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func resolveConflicts(
    of id: String, _ resolver: ([Document]) throws -> ConflictResolution?
  ) throws -> WriteResult? {
    try CallerError.unmarking {
      try database.write { db in
        try resolve(db, id: id) { leaves in try CallerError.marking { try resolver(leaves) } }
      }
    }
  }

  private func resolve(
    _ db: SQLConnection, id: String, _ resolver: ([Document]) throws -> ConflictResolution?
  ) throws -> WriteResult? {
    guard let cid = try DocumentReader.collectionID(db, name) else { return nil }
    let live = try DocumentReader.leaves(db, cid: cid, id: id).filter { !$0.isDeleted }
    guard live.count > 1, let resolution = try resolver(live) else { return nil }
    let limits = database.configuration.limits
    var writer = try DocumentWriter(db: db, collection: name, in: database)
    let kept: RevisionID
    var merged: Document?
    switch resolution {
    case .keep(let rev):
      guard live.contains(where: { $0.rev == rev }) else {
        throw SetteeError(
          .invalidArgument,
          "the resolver kept revision \(rev), which is not a live leaf of \(quoted(id)) (its live leaves are \(live.compactMap(\.rev).map(\.description).joined(separator: ", ")))",
          documentID: id)
      }
      kept = rev
    case .merged(let body):
      var document = try Document(validating: .object(body), limits: limits)
      document.id = id
      document.rev = live[0].rev
      document.isDeleted = false
      merged = document
      kept = live[0].rev!
    }
    var result: WriteResult?
    for leaf in live where leaf.rev != kept {
      result = try writer.write(Document(id: id, rev: leaf.rev, isDeleted: true), mode: .edit)
    }
    if let merged { result = try writer.write(merged, mode: .edit) }
    try writer.finish()
    if merged == nil, let last = result {
      return WriteResult(id: id, rev: kept, seq: last.seq)
    }
    return result
  }
}

/// What a conflict resolver decides (``DocumentCollection/resolveConflicts(of:_:)-8c6vc``).
public enum ConflictResolution: Sendable, Hashable {
  /// Keep this live leaf; every other live leaf is deleted.
  case keep(RevisionID)
  /// Write this body as a new revision of the current winner; every other live leaf is
  /// deleted. `_id`, `_rev` and `_deleted` members are ignored.
  case merged(JSONObject)
}

extension DocumentReader {
  /// Every leaf of a document with its body, the winner first (``StoredTree/leaves``).
  static func leaves(_ db: SQLConnection, cid: Int64, id: String) throws -> [Document] {
    try leafRow(db, cid: cid, id: id)?.leaves ?? []
  }

  /// A document's other live leaves, CouchDB's `_conflicts` (what a find with conflicts
  /// and a map function are given).
  static func conflicts(_ db: SQLConnection, cid: Int64, id: String) throws -> [RevisionID] {
    try leaves(db, cid: cid, id: id).dropFirst().filter { !$0.isDeleted }.compactMap(\.rev)
  }

  /// The statement that reads a document's winner row: `rev, deleted, body, rid,
  /// conflicts + deleted_conflicts, attachments`, bound to `id`.
  static func winnerRow(_ db: SQLConnection, cid: Int64, id: String) throws -> RawStatement {
    let statement = RawStatement(
      db,
      statement: try db.rawStatement(
        sql: """
          SELECT rev, deleted, body, rid, conflicts + deleted_conflicts, attachments
          FROM documents WHERE cid = ? AND id = ?
          """))
    statement.bind(1, cid)
    statement.bind(2, text: id)
    return statement
  }

  /// A document's leaves (``leaves(_:cid:id:)``) with its row id and whether any of its
  /// revisions holds attachments: one query for a document without branches (a
  /// replication reads every document this way; three queries each were a tenth of it).
  static func leafRow(_ db: SQLConnection, cid: Int64, id: String) throws
    -> (leaves: [Document], rid: Int64, holdsAttachments: Bool)?
  {
    if Names.containsNUL(id) { return nil }
    let found = try winnerRow(db, cid: cid, id: id).first { row in
      (
        winner: try Document(
          id: id, rev: storedRevision(row.string(0), documentID: id),
          isDeleted: row.int64(1) != 0, body: parseBody(row.bytes(2), documentID: id)),
        rid: row.int64(3), branches: row.int64(4), attachments: row.int64(5) != 0
      )
    }
    guard let found else { return nil }
    let winner = found.winner
    guard found.branches > 0, let rev = winner.rev else {
      return ([winner], found.rid, found.attachments)
    }
    let tree = try StoredTree.load(
      db, rid: found.rid, id: id, winner: rev, deleted: winner.isDeleted, seq: 0)
    var leaves = [winner]
    for leaf in tree.leaves.dropFirst() {
      let body = try parseBody(
        text: StoredTree.losingLeafBody(db, rid: found.rid, rev: leaf, id: id), documentID: id)
      leaves.append(
        Document(id: id, rev: leaf, isDeleted: tree.nodes[leaf]!.deleted, body: body))
    }
    return (leaves, found.rid, found.attachments)
  }
}

// The async twins of the operations above.
extension DocumentCollection {
  /// Writes documents as a peer sends them (``putAll(_:newEdits:)-6e4pp``), without blocking.
  @discardableResult
  public func putAll(_ documents: [JSONObject], newEdits: Bool) async throws -> [WriteResult] {
    try await database.withConnection(.writing) { try self.putAll(documents, newEdits: newEdits) }
  }

  /// Writes one document as a peer sends it, without blocking the caller's thread.
  @discardableResult
  public func put(_ json: JSONObject, newEdits: Bool) async throws -> WriteResult {
    try await database.withConnection(.writing) { try self.put(json, newEdits: newEdits) }
  }

  /// The collection's `revs_limit`, without blocking the caller's thread.
  public func revsLimit() async throws -> Int {
    try await database.withConnection(.brief) { try self.revsLimit() }
  }

  /// Sets the collection's `revs_limit`, without blocking the caller's thread.
  public func setRevsLimit(_ limit: Int) async throws {
    try await database.withConnection(.writing) { try self.setRevsLimit(limit) }
  }

  /// The ids of the conflicted documents, without blocking the caller's thread.
  public func conflictedDocumentIDs() async throws -> [String] {
    try await database.withConnection(.reading) { try self.conflictedDocumentIDs() }
  }

  /// How many documents are conflicted, without blocking the caller's thread.
  public func conflictCount() async throws -> Int {
    try await database.withConnection(.reading) { try self.conflictCount() }
  }

  /// Every leaf of a document, the winner first, without blocking the caller's thread.
  public func leaves(of id: String) async throws -> [Document] {
    try await database.withConnection(.brief) { try self.leaves(of: id) }
  }

  /// A stored leaf of a document, without blocking the caller's thread.
  public func get(_ id: String, rev: RevisionID) async throws -> Document? {
    try await database.withConnection(.brief) { try self.get(id, rev: rev) }
  }

  /// Resolves a conflicted document (``resolveConflicts(of:_:)-8c6vc``), without blocking the
  /// caller's thread; the resolver runs on the writer's connection.
  @discardableResult
  public func resolveConflicts(
    of id: String, _ resolver: @escaping @Sendable ([Document]) throws -> ConflictResolution?
  ) async throws -> WriteResult? {
    try await database.withConnection(.writing) { try self.resolveConflicts(of: id, resolver) }
  }
}

// MARK: - Purge

extension DocumentCollection {
  /// Removes leaf revisions for good (CouchDB's `_purge`, an administrator's tool): each
  /// with every ancestor no other leaf descends from, its body and attachments. A document
  /// left without leaves goes entirely, with no tombstone: it leaves the changes feed and
  /// every index, and no replication carries its removal (a peer that still holds it may
  /// bring it back). Revisions that are not leaves, and unknown ids, are left alone. One
  /// transaction; each document purged is recorded (``purgeSequence()-20k08``).
  ///
  /// - Returns: the revisions purged, by document id (CouchDB's `purged`).
  @discardableResult
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func purge(_ revisions: [String: [RevisionID]]) throws -> [String: [RevisionID]] {
    try database.write { db in
      var writer = try DocumentWriter(db: db, collection: name, in: database)
      var purged: [String: [RevisionID]] = [:]
      var purgeSeq =
        try Int64.fetchOne(
          db.cachedStatement(sql: "SELECT max(purge_seq) FROM purges WHERE cid = ?"),
          arguments: [writer.collectionID]) ?? 0
      for id in revisions.keys.sorted() {
        let removed = try writer.purge(id: id, revs: revisions[id] ?? [])
        guard !removed.isEmpty else { continue }
        purged[id] = removed
        purgeSeq += 1
        try db.cachedStatement(
          sql: "INSERT INTO purges (cid, purge_seq, id, revs) VALUES (?, ?, ?, ?)"
        ).execute(arguments: [
          writer.collectionID, purgeSeq, id,
          JSONWriter.string(.array(removed.map { .string($0.description) })),
        ])
      }
      try writer.finish()
      return purged
    }
  }

  /// How many documents have been purged from the collection (CouchDB's `purge_seq`).
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func purgeSequence() throws -> Int64 {
    try database.read(
      inCollection(0) { db, cid in
        try Int64.fetchOne(
          db.cachedStatement(sql: "SELECT max(purge_seq) FROM purges WHERE cid = ?"),
          arguments: [cid]) ?? 0
      })
  }

  /// Removes leaf revisions for good, without blocking the caller's thread.
  @discardableResult
  public func purge(_ revisions: [String: [RevisionID]]) async throws -> [String: [RevisionID]] {
    try await database.withConnection(.writing) { try self.purge(revisions) }
  }

  /// How many documents have been purged, without blocking the caller's thread.
  public func purgeSequence() async throws -> Int64 {
    try await database.withConnection(.reading) { try self.purgeSequence() }
  }
}
