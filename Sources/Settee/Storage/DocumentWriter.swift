import Foundation
import GRDB
import GRDBSQLite
import SetteeCore

/// The result of one successful write.
public struct WriteResult: Sendable, Hashable {
  /// The document id written.
  public var id: String
  /// The revision the write created.
  public var rev: RevisionID
  /// The collection's change sequence number this write got.
  public var seq: Int64
}

/// How a write treats the `_rev` it is given.
enum WriteMode {
  /// CouchDB's rules: an existing document needs its current `_rev`; a new one must have none.
  case edit
  /// Restoring or importing: a `_rev` on a document the collection does not hold is kept
  /// as it is (as CouchDB replication does), so an export imports back unchanged.
  /// Existing documents follow the `edit` rules.
  case restore
  /// Upsert: the write replaces whatever revision is current (or creates the document),
  /// in the same transaction that reads it; a `_rev` it carries is ignored. The new
  /// revision still descends from the current one, so history and replication hold.
  case overwrite
}

/// Writes documents of one collection inside one open write transaction.
///
/// Create it in a transaction, call ``write(_:mode:)`` any number of times, then
/// ``finish()``; every statement is prepared once and bound, never spliced.
struct DocumentWriter {
  let db: SQLConnection
  let cid: Int64
  private let limits: DocumentLimits
  var lastSeq: Int64
  private let startSeq: Int64
  /// How this write changed the collection's counts of live and deleted documents
  /// (``Schema``'s `doc_count` and `deleted_count`), recorded by ``finish()``. Kept in the
  /// writer, a value: a copy restored after a refused document undoes its share too.
  private var countChange = (live: Int64(0), deleted: Int64(0))
  /// How many revisions of each branch the collection keeps (see ``Schema``).
  let revsLimit: Int
  /// How many bodies replaced revisions were given since the collection's last compaction
  /// (``Schema``'s `kept_bodies`), this write's included, and how many it may have before
  /// a write clears its document's older ones (see ``keepsOlderBodies``).
  private var keptBodies: (before: Int64, added: Int64, budget: Int64)
  /// The collection's `holds_nul` (see ``Schema``), set by the first body that needs it.
  private var holdsNUL: Bool
  var indexes: IndexMaintainer
  /// Digests of blobs this write stored before its documents (a streamed attachment), which
  /// a stub may name as its own.
  var storedBlobs: Set<String> = []
  /// The statements every write runs, kept once prepared (the connection's statement cache
  /// hashes the SQL text at each lookup: a twenty-fifth of an import).
  private var lookupStatement: RawStatement.Prepared?
  private var insertStatement: RawStatement.Prepared?
  private var revisionStatement: RawStatement.Prepared?
  private var replacedRevisionStatement: RawStatement.Prepared?

  init(db: SQLConnection, collection name: String, in database: Database) throws {
    self.db = db
    self.limits = database.configuration.limits
    let catalog = database.indexCatalog
    try DocumentReader.validateCollectionName(name)
    // Through SQLite's C API, as document lookups are: every write starts here.
    let lookup = RawStatement(
      db,
      statement: try db.rawStatement(
        sql:
          """
          SELECT cid, last_seq, holds_nul, revs_limit, dropped, kept_bodies,
            doc_count + deleted_count FROM collections WHERE name = ?
          """))
    lookup.bind(1, text: name)
    if let found = try lookup.first({ row in
      (
        cid: row.int64(0), lastSeq: row.int64(1), holdsNUL: row.int64(2) != 0,
        revsLimit: row.int64(3), dropped: row.int64(4) != 0, kept: row.int64(5),
        documents: row.int64(6)
      )
    }) {
      cid = found.cid
      if found.dropped { try DocumentReader.revive(db, cid: found.cid) }
      lastSeq = found.lastSeq
      holdsNUL = found.holdsNUL
      revsLimit = Int(clamping: max(1, found.revsLimit))
      keptBodies = (found.kept, 0, max(Self.keptBodiesFloor, found.documents))
    } else {
      cid = try DocumentReader.createCollection(db, name)
      lastSeq = 0
      holdsNUL = false
      revsLimit = DocumentCollection.defaultRevsLimit
      keptBodies = (0, 0, Self.keptBodiesFloor)
    }
    startSeq = lastSeq
    // The first write of this Database value to the collection starts its epoch here
    // (once committed, later transactions need not ask again).
    let (recorded, collection) = (database.recordedEpochs, cid)
    if !recorded.withLock({ $0.contains(collection) }) {
      try db.cachedStatement(
        sql: "INSERT OR IGNORE INTO epochs (cid, token, start_seq) VALUES (?, ?, ?)"
      ).execute(arguments: [collection, database.instanceToken, lastSeq])
      db.afterNextTransaction { _ in recorded.withLock { _ = $0.insert(collection) } }
    }
    indexes = IndexMaintainer(db: db, collection: try catalog.state(db, cid: cid))
  }

  /// The collection's id.
  var collectionID: Int64 { cid }

  /// The fewest kept bodies of replaced revisions a collection's budget allows (see
  /// ``Schema``, v20), however few documents it holds.
  static let keptBodiesFloor: Int64 = 1000

  /// Whether a write keeps its document's older replaced revisions' bodies (as CouchDB does
  /// until compaction): while the collection's replaced revisions were given fewer bodies
  /// since its last compaction than it holds documents (at least ``keptBodiesFloor``).
  /// Past that a write keeps only the body it replaces, and clears its document's older
  /// ones, so that the file stays within about twice its documents' bodies.
  var keepsOlderBodies: Bool { keptBodies.before + keptBodies.added < keptBodies.budget }

  /// Counts bodies this write gave replaced revisions.
  mutating func keptBodies(added: Int) { keptBodies.added += Int64(added) }

  /// Whether writes need the document's body as JSON values (to keep indexes), rather
  /// than only its stored text (see ``write(_:mode:)``).
  var needsBodies: Bool { !indexes.isEmpty }

  /// Writes a document read from text (``EncodedDocument``), whose body is already in its
  /// stored form; only when ``needsBodies`` is false.
  /// A document with `_revisions` is grafted with that ancestry, as ``graft(_:history:validated:)``
  /// grafts it.
  mutating func write(_ encoded: EncodedDocument, mode: WriteMode) throws -> WriteResult {
    precondition(!needsBodies, "a document's body is needed to keep the collection's indexes")
    let document = Document(
      id: encoded.id ?? Document.generateID(), rev: encoded.rev, isDeleted: encoded.isDeleted)
    if let history = encoded.history {
      return try write(document, body: encoded.body, mode: .restore, history: history)
    }
    return try write(document, body: encoded.body, mode: mode)
  }

  /// Grafts a peer's revision read from text, with its ancestry (`_revisions`, or its
  /// `_rev` alone), as ``graft(_:history:validated:)`` grafts a parsed one; only when
  /// ``needsBodies`` is false. `nil` when the text names no revision (the parsed path
  /// gives that error).
  mutating func graft(_ encoded: EncodedDocument) throws -> WriteResult? {
    precondition(!needsBodies, "a document's body is needed to keep the collection's indexes")
    guard let id = encoded.id, let rev = encoded.rev else { return nil }
    return try write(
      Document(id: id, rev: rev, isDeleted: encoded.isDeleted), body: encoded.body,
      mode: .restore, history: encoded.history ?? [rev])
  }

  /// Writes one document revision.
  ///
  /// - Parameter validated: the document was made by ``Document/init(validating:limits:)``
  ///   with this writer's limits, so its checks need not run again.
  /// - Throws: ``SetteeError`` with code `conflict`, `notFound`, `documentTooLarge`, or a
  ///   validation code from ``Document/validate(limits:)``.
  mutating func write(_ document: Document, mode: WriteMode, validated: Bool = false) throws
    -> WriteResult
  {
    if !validated { try document.validate(limits: limits) }
    return try write(document, body: try document.encodedBody(limits: limits), mode: mode)
  }

  /// Grafts a peer's revision with its ancestry into the document's tree, as CouchDB's
  /// `new_edits: false` does: `history` is the revision and its ancestors, newest first
  /// (`document.rev` is its first). A revision the tree holds already is a no-op reported
  /// as success (with the document's current sequence number); one that changes the
  /// leaves gives the document a new sequence number, whether or not the winner changes.
  mutating func graft(_ document: Document, history: [RevisionID], validated: Bool = false)
    throws -> WriteResult
  {
    precondition(history.first == document.rev && !history.isEmpty)
    if !validated { try document.validate(limits: limits) }
    return try write(
      document, body: try document.encodedBody(limits: limits), mode: .restore, history: history)
  }

  /// Writes one document revision whose body is `body` (the document's own body is used
  /// only to keep indexes).
  private mutating func write(
    _ document: Document, body: [UInt8], mode: WriteMode, history: [RevisionID]? = nil
  ) throws -> WriteResult {
    if !holdsNUL && DocumentWriter.printsNUL(body) {
      try db.cachedStatement(sql: "UPDATE collections SET holds_nul = 1 WHERE cid = ?")
        .execute(arguments: [cid])
      holdsNUL = true
    }
    // Statements bound and read through SQLite's C API: GRDB's StatementArguments and Row
    // were a quarter of an import's write transaction.
    // A write that names no revision (or restores one) usually creates its document: an
    // import, a put of a new id. Insert it first, and look the id up only when it is taken
    // (SQLite refuses the insert before writing anything).
    if mode == .restore || (mode == .edit && document.rev == nil), document.attachments == nil,
      let rev = try? DocumentWriter.newRevision(document, mode: mode, body: body),
      let result = try insertNew(document, rev: rev, body: body, history: history)
    {
      return result
    }
    var found:
      (
        rid: Int64, rev: String, deleted: Bool, seq: Int64, branched: Bool, attached: Bool,
        body: JSONObject?
      )?
    let needsPrevious = indexes.needsPrevious
    let lookup = RawStatement(
      db,
      statement: try db.rawStatement(
        &lookupStatement,
        needsPrevious
          ? "SELECT rid, rev, deleted, seq, conflicts + deleted_conflicts, attachments, body FROM documents WHERE cid = ? AND id = ?"
          : "SELECT rid, rev, deleted, seq, conflicts + deleted_conflicts, attachments FROM documents WHERE cid = ? AND id = ?"
      ))
    lookup.bind(1, cid)
    lookup.bind(2, text: document.id)
    try lookup.forEach { row in
      let deleted = row.int64(2) != 0
      found = (
        row.int64(0), row.string(1), deleted, row.int64(3), row.int64(4) != 0,
        row.int64(5) != 0,
        needsPrevious && !deleted
          ? try DocumentReader.parseBody(row.bytes(6), documentID: document.id) : nil
      )
      return false
    }
    guard let found else {
      let attachments = try resolveAttachments(
        document, parent: nil, keepsParents: false,
        generation: mode == .restore ? document.rev?.generation ?? 1 : 1,
        fromPeer: mode == .restore)
      let rev = try DocumentWriter.newRevision(
        document, mode: mode, body: DocumentWriter.revisionBytes(body, attachments))
      guard
        let result = try insertNew(
          document, rev: rev, body: body, history: history, attachments: attachments)
      else {
        throw SetteeError(
          .storage,
          "internal error: \(quoted(document.id)) was not found, then could not be inserted",
          documentID: document.id)
      }
      return result
    }

    let existing = StoredWinner(
      rid: found.rid, rev: try DocumentReader.storedRevision(found.rev, documentID: document.id),
      deleted: found.deleted, seq: found.seq, body: found.body)
    // Beyond the trunk: a graft, a document with branches, or a history the collection's
    // revs_limit stems.
    if history != nil || found.branched || existing.rev.generation >= revsLimit {
      return try writeBranch(
        document, body: body, mode: mode, history: history, existing: existing)
    }
    let rid = existing.rid
    let current = existing.rev
    let currentDeleted = existing.deleted
    if mode == .overwrite {
      // Whatever is current is replaced (a tombstone too).
    } else if let given = document.rev {
      guard given == current else {
        throw SetteeError(
          .conflict,
          "document update conflict: \(quoted(document.id)) is at revision \(current), the write named \(given)",
          documentID: document.id)
      }
      if currentDeleted && !document.isDeleted { throw Self.tombstoneEdit(document, given) }
    } else if !currentDeleted {
      throw SetteeError(
        .conflict,
        "document update conflict: \(quoted(document.id)) exists, so the write must name its current _rev \(current)",
        documentID: document.id)
    }
    if document.isDeleted && currentDeleted {
      throw SetteeError(
        .notFound, "document \(quoted(document.id)) is already deleted", documentID: document.id)
    }
    let attachments = try resolveAttachments(
      document, parent: found.attached ? (rid, current) : nil, keepsParents: true,
      generation: current.generation + 1)
    let rev = RevisionID.next(
      after: current, deleted: document.isDeleted,
      body: DocumentWriter.revisionBytes(body, attachments))
    lastSeq += 1
    let seq = lastSeq
    // The revision being replaced keeps its body (and attachments) until compaction, in its
    // row; a first revision gets its row now (it has none yet exactly when it was the
    // document's first, with no parent). Past the budget its older ones go.
    if !keepsOlderBodies { try clearKeptBodies(rid: rid, attached: found.attached) }
    let replaced = RawStatement(
      db,
      statement: try db.rawStatement(
        &replacedRevisionStatement,
        """
        INSERT INTO revisions (rid, rev, parent, deleted, seq, body)
          SELECT ?1, ?2, NULL, ?3, ?4, body FROM documents WHERE rid = ?1
          ON CONFLICT (rid, rev) DO UPDATE SET body = excluded.body
        """
      ))
    replaced.bind(1, rid)
    replaced.bind(2, text: current.description)
    replaced.bind(3, currentDeleted ? 1 : 0)
    replaced.bind(4, existing.seq)
    try replaced.execute()
    keptBodies(added: 1)
    try checkingFields(document.id, body) {
      let update = RawStatement(
        db,
        statement: try db.rawStatement(
          sql: "UPDATE documents SET rev = ?, deleted = ?, seq = ?, body = ? WHERE rid = ?"))
      update.bind(1, text: rev.description)
      update.bind(2, document.isDeleted ? 1 : 0)
      update.bind(3, seq)
      body.withUnsafeBufferPointer { update.bind(4, text: $0) }
      update.bind(5, rid)
      try update.execute()
    }
    count(from: currentDeleted, to: document.isDeleted)
    try insertRevision(rid: rid, rev: rev, parent: current, deleted: document.isDeleted, seq: seq)
    if !attachments.isEmpty {
      try AttachmentStore.insert(db, rid: rid, rev: rev, attachments)
      if !found.attached { try AttachmentStore.flag(db, rid: rid, true) }
    }
    // The version being replaced, whose index entries go.
    let previous = existing.body.map { Document(id: document.id, rev: current, body: $0) }
    try indexes.update(
      rid: rid, document: stored(document, rev), isNew: currentDeleted, previous: previous)
    return WriteResult(id: document.id, rev: rev, seq: seq)
  }

  /// The error of a write that names a deleted document's tombstone: as in CouchDB, a
  /// deleted document comes back by a write that names no revision (which continues the
  /// tombstone's branch), never by an edit of the tombstone.
  static func tombstoneEdit(_ document: Document, _ given: RevisionID) -> SetteeError {
    SetteeError(
      .conflict,
      "document update conflict: \(quoted(document.id)) is deleted at revision \(given); write it without _rev to create it again",
      documentID: document.id)
  }

  /// The revision a write gives a document that does not exist yet, or the error it is.
  private static func newRevision(_ document: Document, mode: WriteMode, body: [UInt8]) throws
    -> RevisionID
  {
    switch (document.rev, mode) {
    case (_, .overwrite) where document.isDeleted:
      throw SetteeError(
        .notFound, "document \(quoted(document.id)) does not exist, so it cannot be deleted",
        documentID: document.id)
    case (_, .overwrite):
      return RevisionID.next(after: nil, deleted: false, body: body)
    case (let given?, .restore):
      return given
    case (nil, .edit) where document.isDeleted:
      // A new document written deleted is born a tombstone, as CouchDB writes it.
      return RevisionID.next(after: nil, deleted: true, body: body)
    case (_?, .edit) where document.isDeleted, (nil, .restore) where document.isDeleted:
      throw SetteeError(
        .notFound, "document \(quoted(document.id)) does not exist, so it cannot be deleted",
        documentID: document.id)
    case (let given?, .edit):
      throw SetteeError(
        .conflict,
        "document \(quoted(document.id)) does not exist, so the write must not name _rev \(given)",
        documentID: document.id)
    case (nil, _):
      return RevisionID.next(after: nil, deleted: false, body: body)
    }
  }

  /// Inserts a document whose id the collection does not hold, at the next sequence
  /// number; `nil`, having written nothing, when it holds the id (a tombstone too).
  private mutating func insertNew(
    _ document: Document, rev: RevisionID, body: [UInt8], history: [RevisionID]?,
    attachments: [StoredAttachment] = []
  ) throws -> WriteResult? {
    let insert = try db.rawStatement(
      &insertStatement,
      "INSERT INTO documents (cid, id, rev, deleted, seq, body) VALUES (?, ?, ?, ?, ?, ?)")
    let seq = lastSeq + 1
    var taken = false
    try checkingFields(document.id, body) {
      do {
        // Bound one by one: the body's bytes go to SQLite as they are, without a String.
        let statement = RawStatement(db, statement: insert)
        statement.bind(1, cid)
        statement.bind(2, text: document.id)
        statement.bind(3, text: rev.description)
        statement.bind(4, document.isDeleted ? 1 : 0)
        statement.bind(5, seq)
        body.withUnsafeBufferPointer { statement.bind(6, text: $0) }
        try statement.execute()
      } catch let error as DatabaseError
        where error.extendedResultCode == .SQLITE_CONSTRAINT_UNIQUE
      {
        // The id's unique index, or a `where` unique index (refused as its own below):
        // told apart by what the file holds, not by SQLite's message.
        guard try holds(document.id) else { throw error }
        taken = true
      }
    }
    if taken { return nil }
    lastSeq = seq
    count(from: nil, to: document.isDeleted)
    let rid = sqlite3_last_insert_rowid(db.sqliteConnection)
    // A document's first revision gets its `revisions` row only when another replaces it
    // (see ``Schema``): most documents are written once, and the row cost an import a
    // third of its statements. A peer's revision with ancestors brings them along.
    if let history, history.count > 1 {
      let kept = Array(history.prefix(revsLimit))
      for (position, revision) in kept.enumerated() {
        try insertRevision(
          rid: rid, rev: revision, parent: position + 1 < kept.count ? kept[position + 1] : nil,
          deleted: position == 0 && document.isDeleted, seq: seq)
      }
    }
    if !attachments.isEmpty {
      try AttachmentStore.insert(db, rid: rid, rev: rev, attachments)
      try AttachmentStore.flag(db, rid: rid, true)
    }
    try indexes.update(rid: rid, document: stored(document, rev), isNew: true, previous: nil)
    return WriteResult(id: document.id, rev: rev, seq: seq)
  }

  /// Whether the collection holds a document `id` (a tombstone too): why an insert into
  /// `documents` that SQLite refused as `SQLITE_CONSTRAINT_UNIQUE` was refused, if so.
  private func holds(_ id: String) throws -> Bool {
    try Bool.fetchOne(
      db, sql: "SELECT EXISTS (SELECT 1 FROM documents WHERE cid = ? AND id = ?)",
      arguments: [cid, id]) ?? false
  }

  /// Runs a write of `documents`, turning a refusal by a secondary index (a unique index of
  /// any kind) into the error naming that index.
  func checkingFields(_ id: String, _ body: [UInt8], _ write: () throws -> Void) throws {
    do { try write() } catch let error as DatabaseError
      where error.resultCode == .SQLITE_CONSTRAINT
    {
      if error.extendedResultCode == .SQLITE_CONSTRAINT_UNIQUE,
        let highest = try Int64.fetchOne(
          db, sql: "SELECT max(seq) FROM documents WHERE cid = ?", arguments: [cid]),
        highest > lastSeq
      {
        // Settee numbers changes from the collection's last_seq: a document holding a
        // later number means last_seq was set back in the file (the write took the next).
        throw SetteeError(
          .corruption,
          "the database file is damaged: the collection's sequence number is behind its documents' (settee check names it); document \(quoted(id)) was not written",
          documentID: id)
      }
      throw SecondaryIndexes.refusal(db, cid: cid, error, body: body, documentID: id) ?? error
    }
  }

  /// Whether JSON text holds `\u0000`, the only way JSONWriter prints U+0000.
  static func printsNUL(_ body: [UInt8]) -> Bool {
    body.withUnsafeBufferPointer { bytes in
      guard let base = bytes.baseAddress, bytes.count >= nulEscape.count else { return false }
      // Backslashes are rare in printed JSON: memchr finds each.
      var offset = 0
      while offset <= bytes.count - nulEscape.count,
        let found = memchr(
          base + offset, Int32(UInt8(ascii: "\\")), bytes.count - nulEscape.count + 1 - offset)
      {
        let index = base.distance(to: found.assumingMemoryBound(to: UInt8.self))
        if memcmp(base + index, nulEscape, nulEscape.count) == 0 { return true }
        offset = index + 1
      }
      return false
    }
  }

  private static let nulEscape = Array(#"\u0000"#.utf8)

  func stored(_ document: Document, _ rev: RevisionID) -> Document {
    var stored = document
    stored.rev = rev
    return stored
  }

  /// Records the new sequence number and counts; call once after the last write.
  func finish() throws {
    try indexes.finish()
    guard lastSeq != startSeq || countChange != (0, 0) || keptBodies.added != 0 else { return }
    try db.cachedStatement(
      sql: """
        UPDATE collections SET last_seq = ?, doc_count = doc_count + ?,
          deleted_count = deleted_count + ?, kept_bodies = kept_bodies + ? WHERE cid = ?
        """
    ).execute(arguments: [
      lastSeq, countChange.live, countChange.deleted, keptBodies.added, cid,
    ])
  }

  /// Counts a document's winner going from `old` (`nil`: no document) to `new` (`nil`:
  /// purged), each `true` when deleted.
  mutating func count(from old: Bool?, to new: Bool?) {
    guard old != new else { return }
    if let old {
      if old { countChange.deleted -= 1 } else { countChange.live -= 1 }
    }
    if let new {
      if new { countChange.deleted += 1 } else { countChange.live += 1 }
    }
  }

  mutating func insertRevision(
    rid: Int64, rev: RevisionID, parent: RevisionID?, deleted: Bool, seq: Int64
  ) throws {
    let insert = RawStatement(
      db,
      statement: try db.rawStatement(
        &revisionStatement,
        "INSERT INTO revisions (rid, rev, parent, deleted, seq) VALUES (?, ?, ?, ?, ?)"))
    insert.bind(1, rid)
    insert.bind(2, text: rev.description)
    if let parent { insert.bind(3, text: parent.description) } else { insert.bindNull(3) }
    insert.bind(4, deleted ? 1 : 0)
    insert.bind(5, seq)
    try insert.execute()
  }
}

func quoted(_ text: String) -> String { JSONWriter.string(.string(text)) }
