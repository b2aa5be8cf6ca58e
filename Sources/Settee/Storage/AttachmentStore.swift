import Foundation
import GRDB
import SetteeCore

/// One attachment of a stored revision: a row of `attachments` with its blob's digest and
/// stored length.
struct StoredAttachment: Sendable, Hashable {
  var name: String
  var aid: Int64
  var contentType: String
  var revpos: Int
  var length: Int64
  var encoding: String?
  var digest: String
  var storedLength: Int64

  /// The attachment's metadata (no data).
  var attachment: Attachment {
    Attachment(
      name: name, contentType: contentType, length: length, digest: digest, revpos: revpos,
      encoding: encoding, encodedLength: encoding == nil ? nil : storedLength)
  }
}

extension StoredAttachment {
  /// An attachment from a row of `name, aid, content_type, revpos, length, encoding,
  /// digest, stored length`, the columns every read of `attachments` selects.
  init(_ row: Row) throws {
    self.init(
      name: try row.value(0), aid: try row.value(1), contentType: try row.value(2),
      revpos: try row.value(3), length: try row.value(4), encoding: try row.value(5),
      digest: try row.value(6), storedLength: try row.value(7))
  }
}

/// The blobs of attachments and which revisions hold them (see ``Schema``, v14).
enum AttachmentStore {
  /// The bytes of one stored chunk: a blob is written and read this much at a time.
  static let chunkSize = 256 * 1024

  /// Stores bytes that `next` gives a chunk at a time (until `nil`) as one blob, computing
  /// its digest on the way; a blob with the same digest already stored is used instead.
  static func store(_ db: SQLConnection, _ next: () throws -> [UInt8]?) throws -> (
    aid: Int64, digest: String, length: Int64
  ) {
    try db.execute(
      sql: "INSERT INTO attachment_blobs (digest, length) VALUES (?, 0)",
      arguments: ["pending-" + Document.generateID()])
    let aid = db.lastInsertedRowID
    var md5 = MD5()
    var length: Int64 = 0
    var n: Int64 = 0
    var pending: [UInt8] = []
    func flush() throws {
      try db.cachedStatement(sql: "INSERT INTO attachment_chunks (aid, n, data) VALUES (?, ?, ?)")
        .execute(arguments: [aid, n, Data(pending)])
      n += 1
      pending.removeAll(keepingCapacity: true)
    }
    while let chunk = try next() {
      chunk.withUnsafeBytes { md5.update($0) }
      length += Int64(chunk.count)
      pending += chunk
      while pending.count >= chunkSize {
        let rest = Array(pending[chunkSize...])
        pending.removeLast(pending.count - chunkSize)
        try flush()
        pending = rest
      }
    }
    if !pending.isEmpty { try flush() }
    let digest = "md5-" + Data(md5.finalize()).base64EncodedString()
    if let existing = try Int64.fetchOne(
      db.cachedStatement(sql: "SELECT aid FROM attachment_blobs WHERE digest = ?"),
      arguments: [digest])
    {
      try delete(db, aid: aid)
      return (existing, digest, length)
    }
    try db.cachedStatement(sql: "UPDATE attachment_blobs SET digest = ?, length = ? WHERE aid = ?")
      .execute(arguments: [digest, length, aid])
    return (aid, digest, length)
  }

  /// Stores an attachment's plain bytes, given by `next` a chunk at a time: gzip-encoded at
  /// CouchDB's level when its type is compressible (``Gzip/isCompressible(contentType:)``),
  /// as CouchDB stores it, so that the digest is the one every CouchDB replica gives the
  /// same revision; otherwise as they are.
  ///
  /// - Returns: the blob (its digest and stored length), the plain length, and the
  ///   encoding (`"gzip"` or `nil`).
  static func storePlain(
    _ db: SQLConnection, contentType: String, _ next: () throws -> [UInt8]?
  ) throws -> (aid: Int64, digest: String, storedLength: Int64, length: Int64, encoding: String?) {
    guard Gzip.isCompressible(contentType: contentType) else {
      let blob = try store(db, next)
      return (blob.aid, blob.digest, blob.length, blob.length, nil)
    }
    let encoder = GzipEncoder(level: Gzip.attachmentLevel)
    var ended = false
    let blob = try store(db) {
      if ended { return nil }
      guard let chunk = try next() else {
        ended = true
        return encoder.encode([], finish: true)
      }
      return encoder.encode(chunk)
    }
    return (blob.aid, blob.digest, blob.length, encoder.consumed, "gzip")
  }

  /// Stores bytes held in memory as one blob (see ``store(_:_:)``).
  static func store(_ db: SQLConnection, bytes: [UInt8]) throws -> (
    aid: Int64, digest: String, length: Int64
  ) {
    var given = false
    return try store(db) {
      defer { given = true }
      return given ? nil : bytes
    }
  }

  /// The blob whose digest is `digest`, if stored.
  static func blob(_ db: SQLConnection, digest: String) throws -> (aid: Int64, length: Int64)? {
    guard
      let row = try Row.fetchOne(
        db.cachedStatement(sql: "SELECT aid, length FROM attachment_blobs WHERE digest = ?"),
        arguments: [digest])
    else { return nil }
    return (try row.value(0), try row.value(1))
  }

  /// An attachment with digest `digest` that some revision of document `rid` holds.
  static func attachment(_ db: SQLConnection, rid: Int64, digest: String) throws
    -> StoredAttachment?
  {
    guard
      let row = try Row.fetchOne(
        db.cachedStatement(
          sql: """
            SELECT a.name, a.aid, a.content_type, a.revpos, a.length, a.encoding, b.digest, b.length
            FROM attachments a JOIN attachment_blobs b ON b.aid = a.aid
            WHERE a.rid = ? AND b.digest = ? LIMIT 1
            """), arguments: [rid, digest])
    else { return nil }
    return try StoredAttachment(row)
  }

  /// The attachments of a revision, by name.
  static func attachments(_ db: SQLConnection, rid: Int64, rev: RevisionID) throws
    -> [StoredAttachment]
  {
    let rows = try Row.fetchCursor(
      db.cachedStatement(
        sql: """
          SELECT a.name, a.aid, a.content_type, a.revpos, a.length, a.encoding, b.digest, b.length
          FROM attachments a JOIN attachment_blobs b ON b.aid = a.aid
          WHERE a.rid = ? AND a.rev = ? ORDER BY a.name
          """), arguments: [rid, rev.description])
    var attachments: [StoredAttachment] = []
    while let row = try rows.next() { attachments.append(try StoredAttachment(row)) }
    return attachments
  }

  /// Records the attachments of a new revision.
  static func insert(
    _ db: SQLConnection, rid: Int64, rev: RevisionID, _ attachments: [StoredAttachment]
  )
    throws
  {
    for attachment in attachments {
      try db.cachedStatement(
        sql: """
          INSERT INTO attachments (rid, rev, name, aid, content_type, revpos, length, encoding)
          VALUES (?, ?, ?, ?, ?, ?, ?, ?)
          """
      ).execute(arguments: [
        rid, rev.description, attachment.name, attachment.aid, attachment.contentType,
        attachment.revpos, attachment.length, attachment.encoding,
      ])
    }
  }

  /// Removes the attachments of revisions that are no longer leaves, and the blobs no
  /// revision holds any more.
  static func remove(_ db: SQLConnection, rid: Int64, revs: [RevisionID]) throws {
    var aids: Set<Int64> = []
    for rev in revs {
      aids.formUnion(
        try Int64.fetchAll(
          db.cachedStatement(sql: "SELECT aid FROM attachments WHERE rid = ? AND rev = ?"),
          arguments: [rid, rev.description]))
      try db.cachedStatement(sql: "DELETE FROM attachments WHERE rid = ? AND rev = ?")
        .execute(arguments: [rid, rev.description])
    }
    for aid in aids
    where try !Bool.fetchOne(
      db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM attachments WHERE aid = ?)"),
      arguments: [aid])!
    {
      try delete(db, aid: aid)
    }
  }

  /// Removes every attachment of the collection's documents, and the blobs no other
  /// collection's revision holds (the collection is being deleted).
  static func removeAll(_ db: SQLConnection, cid: Int64) throws {
    let aids = try Int64.fetchAll(
      db,
      sql:
        "SELECT DISTINCT a.aid FROM attachments a JOIN documents d ON d.rid = a.rid WHERE d.cid = ?",
      arguments: [cid])
    try db.execute(
      sql: "DELETE FROM attachments WHERE rid IN (SELECT rid FROM documents WHERE cid = ?)",
      arguments: [cid])
    for aid in aids
    where try !Bool.fetchOne(
      db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM attachments WHERE aid = ?)"),
      arguments: [aid])!
    {
      try delete(db, aid: aid)
    }
  }

  private static func delete(_ db: SQLConnection, aid: Int64) throws {
    try db.cachedStatement(sql: "DELETE FROM attachment_chunks WHERE aid = ?")
      .execute(arguments: [aid])
    try db.cachedStatement(sql: "DELETE FROM attachment_blobs WHERE aid = ?")
      .execute(arguments: [aid])
  }

  /// Hands a blob's bytes to `body` a chunk at a time, in order.
  static func read(_ db: SQLConnection, aid: Int64, _ body: ([UInt8]) throws -> Void) throws {
    var n: Int64 = 0
    while let chunk = try Data.fetchOne(
      db.cachedStatement(sql: "SELECT data FROM attachment_chunks WHERE aid = ? AND n = ?"),
      arguments: [aid, n])
    {
      try body(Array(chunk))
      n += 1
    }
  }

  /// Hands the bytes a gzip blob stands for to `body` a slice at a time, in order.
  ///
  /// - Throws: ``SetteeError`` with code `corruption` when the blob does not decode.
  static func readDecoding(
    _ db: SQLConnection, aid: Int64, name: String, documentID: String,
    _ body: ([UInt8]) throws -> Void
  ) throws {
    func corrupt(_ error: GzipError) -> SetteeError {
      error.corruption(attachment: name, documentID: documentID)
    }
    let decoder: GzipDecoder
    do { decoder = try GzipDecoder(limit: Attachment.maxDecodedLength) } catch let error
      as GzipError
    { throw corrupt(error) }
    try read(db, aid: aid) { chunk in
      var rest = chunk[...]
      while !rest.isEmpty {
        let decoded: [UInt8]
        do { decoded = try decoder.decode(taking: &rest) } catch let error as GzipError {
          throw corrupt(error)
        }
        if !decoded.isEmpty { try body(decoded) }
      }
    }
    do { _ = try decoder.finish() } catch let error as GzipError { throw corrupt(error) }
  }

  /// The digest of the bytes an encoded attachment stands for (what a peer that stored it
  /// plain knows it by).
  static func decodedDigest(_ db: SQLConnection, _ attachment: StoredAttachment, documentID: String)
    throws -> String
  {
    var md5 = MD5()
    try readDecoding(db, aid: attachment.aid, name: attachment.name, documentID: documentID) {
      chunk in chunk.withUnsafeBytes { md5.update($0) }
    }
    return "md5-" + Data(md5.finalize()).base64EncodedString()
  }

  /// A blob's bytes, whole.
  static func bytes(_ db: SQLConnection, aid: Int64) throws -> [UInt8] {
    var bytes: [UInt8] = []
    try read(db, aid: aid) { bytes += $0 }
    return bytes
  }

  /// Sets the document's `attachments` flag (see ``Schema``, v14): to `holds`, or, when
  /// not given, to whether any of its revisions holds one.
  static func flag(_ db: SQLConnection, rid: Int64, _ holds: Bool? = nil) throws {
    if let holds {
      try db.cachedStatement(sql: "UPDATE documents SET attachments = ? WHERE rid = ?")
        .execute(arguments: [holds, rid])
    } else {
      try db.cachedStatement(
        sql: """
          UPDATE documents SET attachments = EXISTS (SELECT 1 FROM attachments WHERE rid = ?)
          WHERE rid = ?
          """
      ).execute(arguments: [rid, rid])
    }
  }
}

extension Database {
  /// How many attachment blobs the file holds (for tests of sharing and removal).
  package func storedAttachmentBlobs() throws -> Int {
    try read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM attachment_blobs") ?? 0 }
  }
}
