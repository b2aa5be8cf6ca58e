import Foundation
import GRDB
import SetteeCore

extension DocumentCollection {
  // MARK: - Writing attachments

  /// Adds or replaces an attachment, making a new revision of the document (CouchDB's
  /// `PUT /{db}/{docid}/{name}`): its body and other attachments stay. `rev` names the
  /// revision edited (any leaf); without one the document must not exist or be deleted,
  /// and is created with an empty body.
  ///
  /// ```swift
  /// let saved = try notes.putAttachment("photo.jpg", to: "n1", rev: current,
  ///                                     contentType: "image/jpeg", data: bytes)
  /// ```
  ///
  /// - Throws: ``SetteeError`` with code `conflict` when `rev` is not a leaf (or missing for
  ///   an existing document), `invalidDocument` for a bad name; nothing is written then.
  @discardableResult
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func putAttachment(
    _ name: String, to id: String, rev: RevisionID?,
    contentType: String = "application/octet-stream", data: [UInt8]
  ) throws -> WriteResult {
    var given = false
    return try putAttachment(name, to: id, rev: rev, contentType: contentType) {
      defer { given = true }
      return given ? nil : data
    }
  }

  /// Adds or replaces an attachment from a file, read and stored a chunk at a time: a file
  /// of any size never sits whole in memory (see ``putAttachment(_:to:rev:contentType:data:)-2jwda``).
  @discardableResult
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func putAttachment(
    _ name: String, to id: String, rev: RevisionID?,
    contentType: String = "application/octet-stream", contentsOf url: URL
  ) throws -> WriteResult {
    let handle: FileHandle
    do {
      handle = try FileHandle(forReadingFrom: url)
    } catch {
      throw SetteeError(.invalidArgument, "cannot read \(url.path): \(error.localizedDescription)")
    }
    defer { try? handle.close() }
    return try putAttachment(name, to: id, rev: rev, contentType: contentType) {
      let chunk = try handle.read(upToCount: AttachmentStore.chunkSize) ?? Data()
      return chunk.isEmpty ? nil : Array(chunk)
    }
  }

  /// Adds or replaces an attachment whose bytes `next` gives a chunk at a time until it
  /// answers `nil`, stored as they come (see ``putAttachment(_:to:rev:contentType:data:)-2jwda``).
  /// `next` runs inside the write transaction.
  @discardableResult
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func putAttachment(
    _ name: String, to id: String, rev: RevisionID?,
    contentType: String = "application/octet-stream", chunks next: () throws -> [UInt8]?
  ) throws -> WriteResult {
    try Attachment.validateName(name, documentID: id)
    try Attachment.validateContentType(contentType, documentID: id)
    try Document.validateID(id)
    return try CallerError.unmarking {
      try database.write { db in
        // Not a leaf (or no revision): the write below decides, a new document or a
        // conflict.
        let base = try editedRevision(db, id: id, rev: rev) ?? ([:], [])
        let blob = try AttachmentStore.storePlain(db, contentType: contentType) {
          try CallerError.marking { try next() }
        }
        var attachments = base.attachments.filter { $0.name != name }
        attachments.append(
          Attachment(
            name: name, contentType: contentType, length: blob.length, digest: blob.digest,
            revpos: 0, encoding: blob.encoding,
            encodedLength: blob.encoding == nil ? nil : blob.storedLength, isStub: true))
        return try writeEdit(
          db,
          Document(id: id, rev: rev, body: base.body, attachments: attachments)
            .withAttachmentsSorted(), storedBlob: blob.digest)
      }
    }
  }

  /// Removes an attachment, making a new revision of the document (CouchDB's
  /// `DELETE /{db}/{docid}/{name}`).
  ///
  /// - Throws: ``SetteeError`` with code `notFound` when the revision has no such
  ///   attachment, `conflict` when `rev` is not a leaf.
  @discardableResult
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func deleteAttachment(_ name: String, from id: String, rev: RevisionID) throws
    -> WriteResult
  {
    try database.write { db in
      guard let base = try editedRevision(db, id: id, rev: rev) else {
        // Not a leaf: someone else wrote first (CouchDB's 409 too).
        throw SetteeError(
          .conflict,
          "document update conflict: \(quoted(id)) has no leaf revision \(rev) to remove \(quoted(name)) from",
          documentID: id)
      }
      guard base.attachments.contains(where: { $0.name == name }) else {
        throw SetteeError(
          .notFound, "document \(quoted(id)) has no attachment \(quoted(name)) at revision \(rev)",
          documentID: id)
      }
      return try writeEdit(
        db,
        Document(
          id: id, rev: rev, body: base.body,
          attachments: base.attachments.filter { $0.name != name }))
    }
  }

  /// The body and attachments (as stubs) of the revision an attachment write edits; `nil`
  /// when `rev` is not a leaf of the document (nothing to edit).
  private func editedRevision(_ db: SQLConnection, id: String, rev: RevisionID?) throws -> (
    body: JSONObject, attachments: [Attachment]
  )? {
    guard let rev, let cid = try DocumentReader.collectionID(db, name),
      let leaf = try DocumentReader.leaves(db, cid: cid, id: id).first(where: { $0.rev == rev }),
      let rid = try DocumentReader.rid(db, cid: cid, id: id)
    else { return nil }
    let stored = try AttachmentStore.attachments(db, rid: rid, rev: rev)
    return (
      leaf.isDeleted ? [:] : leaf.body,
      stored.map { attachment in
        var stub = attachment.attachment
        stub.isStub = true
        return stub
      }
    )
  }

  private func writeEdit(_ db: SQLConnection, _ document: Document, storedBlob: String? = nil)
    throws -> WriteResult
  {
    var writer = try DocumentWriter(db: db, collection: name, in: database)
    if let storedBlob { writer.storedBlobs.insert(storedBlob) }
    let result = try writer.write(document, mode: .edit)
    try writer.finish()
    return result
  }

  // MARK: - Reading attachments

  /// The attachments of the winning revision (or of revision `rev`: a leaf, or a replaced
  /// revision until ``compact()-6a4y8``), as stubs, by name; empty for a document without
  /// any (or without such a revision).
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func attachments(of id: String, rev: RevisionID? = nil) throws -> [Attachment] {
    try database.read(
      inCollection([]) { db, cid in
        guard let (rid, leaf) = try DocumentCollection.revision(db, cid: cid, id: id, rev: rev)
        else {
          return []
        }
        return try AttachmentStore.attachments(db, rid: rid, rev: leaf).map(\.attachment)
      })
  }

  /// An attachment with its data (decoded, when it is kept gzip-encoded), of the winning revision or of
  /// revision `rev` (a leaf, or a replaced revision until ``compact()-6a4y8``); `nil` when
  /// there is none. For large attachments,
  /// ``readAttachment(_:of:rev:_:)-1vv5s`` streams the bytes instead.
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func attachment(_ name: String, of id: String, rev: RevisionID? = nil) throws
    -> Attachment?
  {
    var bytes: [UInt8] = []
    guard var attachment = try readAttachment(name, of: id, rev: rev, { bytes += $0 }) else {
      return nil
    }
    attachment.data = bytes
    return attachment
  }

  /// Streams an attachment's bytes to `body` a chunk at a time, from one snapshot, without
  /// holding them all in memory; an attachment kept gzip-encoded (as CouchDB replicates
  /// its compressible types) is decoded on the way.
  ///
  /// - Returns: the attachment's metadata, as the bytes were given (no ``Attachment/encoding``);
  ///   `nil` (without calling `body`) when there is no such attachment.
  /// - Throws: what `body` throws, as it threw it; ``SetteeError`` with code `corruption`
  ///   when stored gzip does not decode.
  @discardableResult
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func readAttachment(
    _ name: String, of id: String, rev: RevisionID? = nil, _ body: ([UInt8]) throws -> Void
  ) throws -> Attachment? {
    try CallerError.unmarking {
      try database.read { db in
        guard let cid = try database.collectionID(db, self.name),
          let stored = try DocumentCollection.stored(db, cid: cid, name, of: id, rev: rev)
        else { return nil }
        var attachment = stored.attachment
        guard attachment.encoding != nil else {
          try AttachmentStore.read(db, aid: stored.aid) { chunk in
            try CallerError.marking { try body(chunk) }
          }
          return attachment
        }
        attachment.encoding = nil
        attachment.encodedLength = nil
        try AttachmentStore.readDecoding(db, aid: stored.aid, name: name, documentID: id) {
          chunk in try CallerError.marking { try body(chunk) }
        }
        return attachment
      }
    }
  }

  /// The attachment `name` of the winner (when live) or of revision `rev` (a leaf, or a
  /// replaced revision that keeps its body).
  static func stored(
    _ db: SQLConnection, cid: Int64, _ name: String, of id: String, rev: RevisionID?
  ) throws -> StoredAttachment? {
    guard let (rid, leaf) = try revision(db, cid: cid, id: id, rev: rev) else { return nil }
    return try AttachmentStore.attachments(db, rid: rid, rev: leaf).first { $0.name == name }
  }

  /// The row id and revision of the winner (when live) or of revision `rev`: a leaf, or a
  /// replaced revision that keeps its body (and so its attachments) until compaction.
  private static func revision(
    _ db: SQLConnection, cid: Int64, id: String, rev: RevisionID?
  ) throws -> (Int64, RevisionID)? {
    // The document's row id, the winner's revision, whether it is deleted and whether other
    // leaves exist, without its body: an attachment's read needs no document parsed.
    if Names.containsNUL(id) { return nil }
    guard
      let winner = try DocumentReader.winnerRow(db, cid: cid, id: id).first({ row in
        (
          rev: row.string(0), deleted: row.int64(1) != 0, rid: row.int64(3),
          branched: row.int64(4) != 0
        )
      })
    else { return nil }
    let rid = winner.rid
    if let rev {
      if winner.rev == rev.description { return (rid, rev) }
      // Another leaf: only a branched document has one.
      if winner.branched,
        try DocumentReader.leaves(db, cid: cid, id: id).contains(where: { $0.rev == rev })
      {
        return (rid, rev)
      }
      return try KeptBodies.keepsBody(db, rid: rid, rev: rev) ? (rid, rev) : nil
    }
    if winner.deleted { return nil }
    return (rid, try DocumentReader.storedRevision(winner.rev, documentID: id))
  }
}

extension Document {
  /// The same document with its attachments in name order (bytes).
  fileprivate func withAttachmentsSorted() -> Document {
    var document = self
    document.attachments?.sort { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
    return document
  }

  /// A document from its parts with attachments.
  fileprivate init(id: String, rev: RevisionID?, body: JSONObject, attachments: [Attachment]) {
    self.init(id: id, rev: rev, body: body)
    self.attachments = attachments
  }
}

extension DocumentReader {
  /// The row id of a document.
  static func rid(_ db: SQLConnection, cid: Int64, id: String) throws -> Int64? {
    try Int64.fetchOne(
      db.cachedStatement(sql: "SELECT rid FROM documents WHERE cid = ? AND id = ?"),
      arguments: [cid, id])
  }
}

// The async twins.
extension DocumentCollection {
  /// Adds or replaces an attachment, without blocking the caller's thread.
  @discardableResult
  public func putAttachment(
    _ name: String, to id: String, rev: RevisionID?,
    contentType: String = "application/octet-stream", data: [UInt8]
  ) async throws -> WriteResult {
    try await database.withConnection(.writing) {
      try self.putAttachment(name, to: id, rev: rev, contentType: contentType, data: data)
    }
  }

  /// Adds or replaces an attachment from a file, without blocking the caller's thread.
  @discardableResult
  public func putAttachment(
    _ name: String, to id: String, rev: RevisionID?,
    contentType: String = "application/octet-stream", contentsOf url: URL
  ) async throws -> WriteResult {
    try await database.withConnection(.writing) {
      try self.putAttachment(name, to: id, rev: rev, contentType: contentType, contentsOf: url)
    }
  }

  /// Adds or replaces an attachment whose bytes `next` gives a chunk at a time until it
  /// answers `nil`, without blocking the caller's thread. `next` runs inside the write
  /// transaction, on the connection's thread.
  @discardableResult
  public func putAttachment(
    _ name: String, to id: String, rev: RevisionID?,
    contentType: String = "application/octet-stream",
    chunks next: @escaping @Sendable () throws -> [UInt8]?
  ) async throws -> WriteResult {
    try await database.withConnection(.writing) {
      try self.putAttachment(name, to: id, rev: rev, contentType: contentType, chunks: next)
    }
  }

  /// Removes an attachment, without blocking the caller's thread.
  @discardableResult
  public func deleteAttachment(_ name: String, from id: String, rev: RevisionID) async throws
    -> WriteResult
  {
    try await database.withConnection(.writing) {
      try self.deleteAttachment(name, from: id, rev: rev)
    }
  }

  /// The attachments of a revision as stubs, without blocking the caller's thread.
  public func attachments(of id: String, rev: RevisionID? = nil) async throws -> [Attachment] {
    try await database.withConnection(.reading) { try self.attachments(of: id, rev: rev) }
  }

  /// An attachment with its data, without blocking the caller's thread.
  public func attachment(_ name: String, of id: String, rev: RevisionID? = nil) async throws
    -> Attachment?
  {
    try await database.withConnection(.reading) { try self.attachment(name, of: id, rev: rev) }
  }

  /// Streams an attachment's bytes as stored to `body` (gzip-encoded ones not decoded),
  /// without blocking the caller's thread: the replicator passes such bytes on as they
  /// are, with their ``Attachment/encoding``. `nil` when there is no such attachment.
  package func readStoredAttachment(
    _ name: String, of id: String, rev: RevisionID? = nil,
    _ body: @escaping @Sendable ([UInt8]) throws -> Void
  ) async throws -> Attachment? {
    try await database.withConnection(.reading) {
      try CallerError.unmarking {
        try self.database.read { db in
          guard let cid = try self.database.collectionID(db, self.name),
            let stored = try DocumentCollection.stored(db, cid: cid, name, of: id, rev: rev)
          else { return nil }
          try AttachmentStore.read(db, aid: stored.aid) { chunk in
            try CallerError.marking { try body(chunk) }
          }
          return stored.attachment
        }
      }
    }
  }

  /// Streams an attachment's bytes to `body`, without blocking the caller's thread.
  @discardableResult
  public func readAttachment(
    _ name: String, of id: String, rev: RevisionID? = nil,
    _ body: @escaping @Sendable ([UInt8]) throws -> Void
  ) async throws -> Attachment? {
    try await database.withConnection(.reading) {
      try self.readAttachment(name, of: id, rev: rev, body)
    }
  }
}
