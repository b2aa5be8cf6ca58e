import Foundation
import GRDB
import SetteeCore

/// One entry of a collection's changes feed: the latest change of one document.
public struct Change: Sendable, Hashable {
  public var seq: Int64
  public var id: String
  public var rev: RevisionID
  public var isDeleted: Bool
}

/// One revision in a document's history.
public struct RevisionInfo: Sendable, Hashable {
  public var rev: RevisionID
  /// The revision this one edited; `nil` for the first.
  public var parent: RevisionID?
  public var isDeleted: Bool
  public var seq: Int64
}

/// Reads documents of one collection inside an open transaction.
enum DocumentReader {
  static func collectionID(_ db: SQLConnection, _ name: String) throws -> Int64? {
    try validateCollectionName(name)
    return try Int64.fetchOne(
      db.cachedStatement(sql: "SELECT cid FROM collections WHERE name = ?"), arguments: [name])
  }

  /// Checks a collection name before it reaches SQL (see ``Names``).
  ///
  /// - Throws: ``SetteeError`` with code `invalidArgument`.
  static func validateCollectionName(_ name: String) throws {
    try Names.refuseNUL(name, kind: "collection name", code: .invalidArgument)
  }

  /// The winning revision of a document, tombstones included.
  /// No id holds U+0000 (``Names``), and SQLite would read such an id cut short: none is
  /// looked up.
  static func document(_ db: SQLConnection, cid: Int64, id: String) throws -> Document? {
    if Names.containsNUL(id) { return nil }
    let statement = try db.cachedStatement(
      sql: "SELECT rev, deleted, body FROM documents WHERE cid = ? AND id = ?")
    guard let row = try Row.fetchOne(statement, arguments: [cid, id]) else { return nil }
    return try Document(
      id: id, rev: RevisionID(parsing: row[0]), isDeleted: row[1], body: parseBody(row, at: 2))
  }

  /// Parses a stored body without copying it out of SQLite.
  static func parseBody(_ row: Row, at index: Int) throws -> JSONObject {
    let json = try row.withUnsafeData(atIndex: index) { data -> JSON in
      guard let data else { return .object([:]) }
      return try data.withUnsafeBytes { raw in
        try JSONParser.parse(raw.bindMemory(to: UInt8.self))
      }
    }
    guard case .object(let object) = json else {
      throw SetteeError(.storage, "a stored body is not a JSON object")
    }
    return object
  }

  static func changes(_ db: SQLConnection, cid: Int64, since: Int64, limit: Int?) throws
    -> [Change]
  {
    let rows = try Row.fetchCursor(
      db.cachedStatement(
        sql:
          "SELECT seq, id, rev, deleted FROM documents WHERE cid = ? AND seq > ? ORDER BY seq LIMIT ?"
      ), arguments: [cid, since, limit ?? -1])
    var changes: [Change] = []
    while let row = try rows.next() {
      changes.append(
        Change(seq: row[0], id: row[1], rev: try RevisionID(parsing: row[2]), isDeleted: row[3]))
    }
    return changes
  }

  static func revisions(_ db: SQLConnection, cid: Int64, id: String) throws -> [RevisionInfo] {
    if Names.containsNUL(id) { return [] }
    let rows = try Row.fetchCursor(
      db.cachedStatement(
        sql: """
          SELECT r.rev, r.parent, r.deleted, r.seq FROM revisions r
          JOIN documents d ON d.rid = r.rid WHERE d.cid = ? AND d.id = ? ORDER BY r.seq
          """), arguments: [cid, id])
    var revisions: [RevisionInfo] = []
    while let row = try rows.next() {
      let parent: String? = row[1]
      revisions.append(
        RevisionInfo(
          rev: try RevisionID(parsing: row[0]),
          parent: try parent.map { text throws in try RevisionID(parsing: text) },
          isDeleted: row[2], seq: row[3]))
    }
    return revisions
  }
}
