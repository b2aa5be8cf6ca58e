import Foundation
import GRDB
import SetteeCore

/// One entry of a collection's changes feed: the latest change of one document.
public struct Change: Sendable, Hashable {
  /// The sequence number of the change.
  public var seq: Int64
  /// The document id.
  public var id: String
  /// The revision.
  public var rev: RevisionID
  /// Whether the revision is a deletion.
  public var isDeleted: Bool
  /// Every leaf of the document, the winner (``rev``) first: what CouchDB's changes feed
  /// lists with `style=all_docs`. Just `[rev]` for a document without branches.
  public var leaves: [RevisionID]
}

/// One revision in a document's history.
public struct RevisionInfo: Sendable, Hashable {
  /// The revision.
  public var rev: RevisionID
  /// The revision this one edited; `nil` for the first.
  public var parent: RevisionID?
  /// Whether the revision is a deletion.
  public var isDeleted: Bool
  /// The sequence number it was written at.
  public var seq: Int64
}

/// Reads documents of one collection inside an open transaction.
enum DocumentReader {
  static func collectionID(_ db: SQLConnection, _ name: String) throws -> Int64? {
    try validateCollectionName(name)
    return try Int64.fetchOne(
      db.cachedStatement(sql: "SELECT cid FROM collections WHERE name = ?"), arguments: [name])
  }

  /// Creates the collection named `name` (in the caller's write transaction) and returns
  /// its id: the one place a collection is made, by its first document write, index, view
  /// or `where` setting.
  ///
  /// - Throws: ``SetteeError`` with code `invalidArgument` for an empty name.
  static func createCollection(_ db: SQLConnection, _ name: String) throws -> Int64 {
    try validateCollectionName(name)
    guard !name.isEmpty else {
      throw SetteeError(.invalidArgument, "collection name must not be empty")
    }
    try db.execute(sql: "INSERT INTO collections (name) VALUES (?)", arguments: [name])
    return db.lastInsertedRowID
  }

  /// The id of the collection named `name`, creating it when it has never been written to
  /// (or reviving it when it was deleted).
  static func ensureCollection(_ db: SQLConnection, _ name: String) throws -> Int64 {
    guard let cid = try collectionID(db, name) else { return try createCollection(db, name) }
    try revive(db, cid: cid)
    return cid
  }

  /// Makes a deleted collection (``Schema``'s `dropped`) exist again, keeping its id.
  static func revive(_ db: SQLConnection, cid: Int64) throws {
    try db.cachedStatement(sql: "UPDATE collections SET dropped = 0 WHERE cid = ? AND dropped")
      .execute(arguments: [cid])
  }

  /// Checks a collection name before it reaches SQL (see ``Names``).
  ///
  /// - Throws: ``SetteeError`` with code `invalidArgument`.
  static func validateCollectionName(_ name: String) throws {
    try Names.refuseNUL(name, kind: "collection name", code: .invalidArgument)
  }

  /// How many live documents the collection has (``SQLFragment/liveDocuments(cid:)``), as
  /// every write keeps it (``Schema``'s `doc_count`).
  static func liveCount(_ db: SQLConnection, cid: Int64) throws -> Int {
    try counts(db, cid: cid).live
  }

  /// How many live and deleted documents the collection has, as every write keeps them.
  static func counts(_ db: SQLConnection, cid: Int64) throws -> (live: Int, deleted: Int) {
    guard
      let row = try Row.fetchOne(
        db.cachedStatement(sql: "SELECT doc_count, deleted_count FROM collections WHERE cid = ?"),
        arguments: [cid])
    else { return (0, 0) }
    return (try row.value(0), try row.value(1))
  }

  /// Whether a document of the collection has held U+0000 in a string (see ``Schema``).
  static func holdsNUL(_ db: SQLConnection, cid: Int64) throws -> Bool {
    try Bool.fetchOne(
      db.cachedStatement(sql: "SELECT holds_nul FROM collections WHERE cid = ?"), arguments: [cid])
      ?? false
  }

  /// Whether the collection has a live document with id `id`.
  static func isLive(_ db: SQLConnection, cid: Int64, id: String) throws -> Bool {
    try Bool.fetchOne(
      db.cachedStatement(
        sql: "SELECT 1 FROM documents WHERE cid = ? AND id = ? AND deleted = 0"),
      arguments: [cid, id]) ?? false
  }

  /// The collection's highest change sequence number (0 before its first write).
  static func lastSequence(_ db: SQLConnection, cid: Int64) throws -> Int64 {
    try Int64.fetchOne(
      db.cachedStatement(sql: "SELECT last_seq FROM collections WHERE cid = ?"), arguments: [cid])
      ?? 0
  }

  /// The winning revision of a document, tombstones included.
  /// No id holds U+0000 (``Names``), and SQLite would read such an id cut short: none is
  /// looked up.
  static func document(_ db: SQLConnection, cid: Int64, id: String) throws -> Document? {
    if Names.containsNUL(id) { return nil }
    // Through SQLite's C API: GRDB's Row and arguments cost three times the lookup.
    let statement = RawStatement(
      db,
      statement: try db.rawStatement(
        sql: "SELECT rev, deleted, body FROM documents WHERE cid = ? AND id = ?"))
    statement.bind(1, cid)
    statement.bind(2, text: id)
    return try statement.first { row in
      try Document(
        id: id, rev: storedRevision(row.string(0), documentID: id), isDeleted: row.int64(1) != 0,
        body: parseBody(row.bytes(2), documentID: id))
    }
  }

  /// Parses a stored body without copying it out of SQLite.
  ///
  /// - Throws: ``SetteeError`` with code `corruption`, naming the document, when the
  ///   stored text is not a JSON object: Settee wrote it valid, so it was damaged since.
  static func parseBody(_ row: Row, at index: Int, documentID: String) throws -> JSONObject {
    try row.withUnsafeData(atIndex: index) { data in
      guard let data else { return [:] }
      return try data.withUnsafeBytes { raw in
        try parseBody(raw.bindMemory(to: UInt8.self), documentID: documentID)
      }
    }
  }

  /// Parses a stored body's bytes (empty for NULL), as ``parseBody(_:at:documentID:)``.
  static func parseBody(_ bytes: UnsafeBufferPointer<UInt8>, documentID: String) throws
    -> JSONObject
  {
    if bytes.isEmpty { return [:] }
    do {
      // As deep as any configuration lets a document be written.
      let json = try JSONParser.parse(bytes, maxDepth: Database.Configuration.maxNestingDepth)
      guard case .object(let object) = json else {
        throw SetteeError(.corruption, "the stored body is \(json.typeName), not an object")
      }
      return object
    } catch let error as SetteeError {
      throw damaged(documentID, "its stored body is not valid JSON (\(error.reason))")
    }
  }

  /// Parses a stored body read as text (as ``parseBody(_:documentID:)``).
  static func parseBody(text bytes: [UInt8], documentID: String) throws -> JSONObject {
    try bytes.withUnsafeBufferPointer { try parseBody($0, documentID: documentID) }
  }

  /// A document's JSON text made from its stored body without parsing it: `{"_id": …,
  /// "_rev": …` (and `"_deleted": true`), then the body's members, then `}`. The body must
  /// be a JSON object (checked by the caller, as ``JSONValidator`` checks).
  static func documentText(
    id: String, rev: String, deleted: Bool = false, body: UnsafeBufferPointer<UInt8>,
    reserving extra: Int = 64
  ) -> [UInt8] {
    // The body's members: what is inside its braces (JSONWriter prints no space, but a
    // stored body is not relied on for that).
    var members = 0..<0
    if let open = body.firstIndex(of: UInt8(ascii: "{")),
      let close = body.lastIndex(of: UInt8(ascii: "}")), open < close
    {
      members = (open + 1)..<close
    }
    while let first = members.first, body[first].isJSONSpace { members.removeFirst() }
    while let last = members.last, body[last].isJSONSpace { members.removeLast() }
    var text: [UInt8] = []
    text.reserveCapacity(body.count + id.utf8.count + rev.utf8.count + extra)
    text += #"{"_id":"#.utf8
    JSONWriter.write(.string(id), into: &text)
    text += #","_rev":"#.utf8
    JSONWriter.write(.string(rev), into: &text)
    if deleted { text += #","_deleted":true"#.utf8 }
    if !members.isEmpty {
      text.append(UInt8(ascii: ","))
      text += body[members]
    }
    text.append(UInt8(ascii: "}"))
    return text
  }

  /// A stored revision id.
  ///
  /// - Throws: ``SetteeError`` with code `corruption` when the text is not a revision.
  static func storedRevision(_ text: String, documentID: String) throws -> RevisionID {
    guard let revision = RevisionID(text) else {
      throw damaged(documentID, "its stored revision \(quoted(text)) is not a revision id")
    }
    return revision
  }

  /// Runs a query's `body`, turning a failure on a damaged body (SQLite's JSON functions
  /// fail with `SQLITE_ERROR`, ``SQLFunctions/match`` with `SQLITE_CORRUPT`) into a
  /// `corruption` error that names the first damaged document. SQLite gives such failures
  /// no code of their own, so the collection is searched for a body that is not JSON
  /// whenever a query fails with one of those codes (only then: the search reads every
  /// body); none found, the error is the query's own.
  static func namingDamagedBodies<T>(_ db: SQLConnection, cid: Int64, _ body: () throws -> T)
    throws -> T
  {
    do {
      return try body()
    } catch let error as DatabaseError
      where error.resultCode == .SQLITE_ERROR || error.resultCode == .SQLITE_CORRUPT
    {
      // A search that fails itself (a damaged table) leaves the query's error standing.
      let found = try? String.fetchOne(
        db, sql: "SELECT id FROM documents WHERE cid = ? AND json_valid(body) = 0 LIMIT 1",
        arguments: [cid])
      guard let id = found ?? nil else { throw error }
      throw damaged(id, "its stored body is not valid JSON")
    }
  }

  /// The error for a document whose stored form is damaged.
  static func damaged(_ documentID: String, _ problem: String) -> SetteeError {
    SetteeError(
      .corruption,
      "document \(quoted(documentID)) is damaged in the database file: \(problem); run 'settee check' and restore it from a backup",
      documentID: documentID)
  }

  static func changes(_ db: SQLConnection, cid: Int64, since: Int64, limit: Int?) throws
    -> [Change]
  {
    if let limit, limit < 0 {
      throw SetteeError(.invalidArgument, "a changes limit must be 0 or more, not \(limit)")
    }
    let rows = try Row.fetchCursor(
      db.cachedStatement(
        sql: """
          SELECT seq, id, rev, deleted, rid, conflicts + deleted_conflicts FROM documents
          WHERE cid = ? AND seq > ? ORDER BY seq LIMIT ?
          """), arguments: [cid, since, limit ?? -1])
    var changes: [Change] = []
    while let row = try rows.next() {
      let id: String = try row.value(1)
      let rev = try storedRevision(try row.value(2), documentID: id)
      let deleted: Bool = try row.value(3)
      var leaves = [rev]
      if try row.value(5) as Int64 > 0 {
        leaves = try StoredTree.load(
          db, rid: try row.value(4), id: id, winner: rev, deleted: deleted, seq: 0
        ).leaves
      }
      changes.append(
        Change(seq: try row.value(0), id: id, rev: rev, isDeleted: deleted, leaves: leaves))
    }
    return changes
  }

  /// A document's revisions, oldest first: the rows of `revisions`, and the current
  /// revision from `documents` when it is the document's first and has no row yet.
  static func revisions(_ db: SQLConnection, cid: Int64, id: String) throws -> [RevisionInfo] {
    if Names.containsNUL(id) { return [] }
    let rows = try Row.fetchCursor(
      db.cachedStatement(
        sql: """
          SELECT r.rev, r.parent, r.deleted, r.seq FROM revisions r
          JOIN documents d ON d.rid = r.rid WHERE d.cid = ? AND d.id = ?
          UNION ALL
          SELECT d.rev, NULL, d.deleted, d.seq FROM documents d WHERE d.cid = ? AND d.id = ?
            AND NOT EXISTS (SELECT 1 FROM revisions r WHERE r.rid = d.rid AND r.rev = d.rev)
          ORDER BY 4
          """), arguments: [cid, id, cid, id])
    return try revisionInfos(rows, id: id)
  }

  /// ``revisions(_:cid:id:)`` of a document whose row id is known.
  static func revisions(_ db: SQLConnection, rid: Int64, id: String) throws -> [RevisionInfo] {
    let rows = try Row.fetchCursor(
      db.cachedStatement(
        sql: """
          SELECT rev, parent, deleted, seq FROM revisions WHERE rid = ?
          UNION ALL
          SELECT d.rev, NULL, d.deleted, d.seq FROM documents d WHERE d.rid = ?
            AND NOT EXISTS (SELECT 1 FROM revisions r WHERE r.rid = d.rid AND r.rev = d.rev)
          ORDER BY 4
          """), arguments: [rid, rid])
    return try revisionInfos(rows, id: id)
  }

  /// The revisions of `rows` (rev, parent, deleted, seq).
  private static func revisionInfos(_ rows: RowCursor, id: String) throws -> [RevisionInfo] {
    var revisions: [RevisionInfo] = []
    while let row = try rows.next() {
      let parent: String? = try row.value(1)
      revisions.append(
        RevisionInfo(
          rev: try storedRevision(try row.value(0), documentID: id),
          parent: try parent.map { text throws in try storedRevision(text, documentID: id) },
          isDeleted: try row.value(2), seq: try row.value(3)))
    }
    return revisions
  }
}
