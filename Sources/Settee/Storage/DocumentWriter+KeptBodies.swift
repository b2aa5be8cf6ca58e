import GRDB
import SetteeCore

/// The bodies replaced revisions keep until compaction (``Schema``, v20): cleared for one
/// document by a write past the collection's budget, and for a whole collection by
/// ``DocumentCollection/compact()-6a4y8``.
extension DocumentWriter {
  /// Clears the bodies, and the attachments, that the replaced revisions of a document
  /// without branches keep (every body its rows hold is one: its winner's is in
  /// `documents`). `attached` is the document's `attachments` flag.
  mutating func clearKeptBodies(rid: Int64, attached: Bool) throws {
    if attached {
      let revs = try KeptBodies.revisions(db, rid: rid)
      guard !revs.isEmpty else { return }
      try AttachmentStore.remove(db, rid: rid, revs: revs)
      try AttachmentStore.flag(db, rid: rid)
    }
    try db.cachedStatement(
      sql: "UPDATE revisions SET body = NULL WHERE rid = ? AND body IS NOT NULL"
    ).execute(arguments: [rid])
  }
}

/// Compaction: what CouchDB's `_compact` does to a database's documents, for one
/// collection's replaced revisions.
enum KeptBodies {
  /// How many replaced revisions one transaction of a compaction clears: writers wait at
  /// most that long for one.
  static let batchSize = 1000

  /// The revisions of document `rid` whose rows keep a body.
  static func revisions(_ db: SQLConnection, rid: Int64) throws -> [RevisionID] {
    try String.fetchAll(
      db.cachedStatement(sql: "SELECT rev FROM revisions WHERE rid = ? AND body IS NOT NULL"),
      arguments: [rid]
    ).compactMap(RevisionID.init)
  }

  /// Whether revision `rev` of document `rid` keeps a body in its row (a losing leaf, or a
  /// replaced revision before compaction).
  static func keepsBody(_ db: SQLConnection, rid: Int64, rev: RevisionID) throws -> Bool {
    try Bool.fetchOne(
      db.cachedStatement(
        sql:
          "SELECT EXISTS (SELECT 1 FROM revisions WHERE rid = ? AND rev = ? AND body IS NOT NULL)"
      ), arguments: [rid, rev.description]) ?? false
  }

  /// Revision `rev` of document `id` with its body: a leaf, or a replaced revision whose
  /// row keeps its body until compaction; `nil` for any other.
  static func revision(_ db: SQLConnection, cid: Int64, id: String, rev: RevisionID) throws
    -> Document?
  {
    guard let row = try DocumentReader.leafRow(db, cid: cid, id: id) else { return nil }
    if let leaf = row.leaves.first(where: { $0.rev == rev }) { return leaf }
    return try document(db, rid: row.rid, id: id, rev: rev)
  }

  /// Replaced revision `rev` of document `rid`, when its row keeps its body.
  static func document(_ db: SQLConnection, rid: Int64, id: String, rev: RevisionID) throws
    -> Document?
  {
    guard
      let row = try Row.fetchOne(
        db.cachedStatement(
          sql: "SELECT deleted, body FROM revisions WHERE rid = ? AND rev = ? AND body IS NOT NULL"
        ), arguments: [rid, rev.description])
    else { return nil }
    return Document(
      id: id, rev: rev, isDeleted: try row.value(0),
      body: try DocumentReader.parseBody(row, at: 1, documentID: id))
  }

  /// Clears up to ``batchSize`` bodies of the collection's replaced revisions (rows with a
  /// body and a child: losing leaves keep theirs), with their attachments and the blobs no
  /// other revision holds; when none is left the collection's count of kept bodies starts
  /// again from 0.
  ///
  /// - Returns: how many it cleared; 0 when none was left.
  static func compactBatch(_ db: SQLConnection, cid: Int64) throws -> Int {
    let rows = try Row.fetchAll(
      db.cachedStatement(
        sql: """
          SELECT r.rid, r.rev, d.attachments FROM revisions r JOIN documents d ON d.rid = r.rid
          WHERE d.cid = ? AND r.body IS NOT NULL
            AND EXISTS (SELECT 1 FROM revisions c WHERE c.rid = r.rid AND c.parent = r.rev)
          LIMIT ?
          """), arguments: [cid, batchSize])
    var attached: [Int64: [RevisionID]] = [:]
    for row in rows {
      let (rid, rev, holds): (Int64, String, Bool) = (row[0], row[1], row[2])
      try db.cachedStatement(sql: "UPDATE revisions SET body = NULL WHERE rid = ? AND rev = ?")
        .execute(arguments: [rid, rev])
      if holds, let parsed = RevisionID(rev) { attached[rid, default: []].append(parsed) }
    }
    for (rid, revs) in attached {
      try AttachmentStore.remove(db, rid: rid, revs: revs)
      try AttachmentStore.flag(db, rid: rid)
    }
    if rows.count < batchSize {
      try db.cachedStatement(sql: "UPDATE collections SET kept_bodies = 0 WHERE cid = ?")
        .execute(arguments: [cid])
    }
    return rows.count
  }
}
