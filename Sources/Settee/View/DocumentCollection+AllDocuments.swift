import Foundation
import GRDB
import SetteeCore

extension DocumentCollection {
  /// Every live document, as rows keyed by id in code-point order (seed 002's
  /// `createAllDocumentsQuery`, CouchDB's `_all_docs`), with a view query's options:
  /// `key`, `keys`, `startKey`/`endKey` (strings), `inclusiveEnd`, `descending`, `skip`,
  /// `limit`, `prefixMatchLevel` and `includeDocs`. Each row's value is `{"rev": …}`.
  ///
  /// Design documents are included, as in CouchDB. By `keys`, a deleted document gives a
  /// row with `"deleted": true` in its value and no document, and an unknown id a row
  /// with `error: "not_found"`.
  ///
  /// - Throws: ``SetteeError`` with code `invalidQuery` for a non-string key, or for
  ///   reduce and group options (all-documents has no reduce).
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func allDocuments(_ query: ViewQuery = ViewQuery()) throws -> ViewResult {
    try query.validate(hasReduce: false, collation: .raw)
    for key in [query.key, query.startKey, query.endKey].compactMap({ $0 }) + (query.keys ?? [])
    where key.stringValue == nil {
      throw SetteeError(.invalidQuery, "all-documents keys are document ids (strings), not \(key)")
    }
    return try database.query { db in
      guard let cid = try database.collectionID(db, name) else {
        return ViewResult(
          rows: [], totalRows: 0, offset: query.includeOffset ? 0 : nil, updateSeq: 0)
      }
      return try DocumentReader.namingDamagedBodies(db, cid: cid) {
        var result = try Self.allDocuments(db, cid: cid, query, ranks: database.rowRanks)
        if query.includeDocs {
          try ListedAttachments(db, cid: cid, query.attachments).fill(db, &result)
        }
        return result
      }
    }
  }

  /// Every live document as rows, without blocking the caller's thread.
  public func allDocuments(_ query: ViewQuery = ViewQuery()) async throws -> ViewResult {
    try await database.withConnection(.reading) { try self.allDocuments(query) }
  }

  /// The live design documents' ids and revisions, `"id rev"` in id order: what functions
  /// compiled from them (JavaScript, `validate_doc_update`) check before each use, so it
  /// reads only their index range.
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func designRevisions() throws -> [String] {
    try database.query { db in
      guard let cid = try database.collectionID(db, name) else { return [] }
      return try String.fetchAll(
        db.cachedStatement(
          sql:
            "SELECT id || ' ' || rev FROM documents WHERE cid = ? AND id >= '_design/' AND id < '_design0' AND deleted = 0 ORDER BY id"
        ), arguments: [cid])
    }
  }

  /// The live design documents' ids and revisions, without blocking the caller's thread
  /// (see ``designRevisions()-9p3yi``).
  public func designRevisions() async throws -> [String] {
    try await database.withConnection(.reading) { try self.designRevisions() }
  }

  /// The live design documents, in id order: what functions are compiled from
  /// (JavaScript views, filters, `validate_doc_update`). Reads only their index range, and
  /// their revisions as ``designRevisions()-9p3yi`` gives them in the same read.
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func designDocuments() throws -> [Document] {
    try database.query { db in
      guard let cid = try database.collectionID(db, name) else { return [] }
      return try DocumentReader.namingDamagedBodies(db, cid: cid) {
        try Row.fetchAll(
          db.cachedStatement(
            sql:
              "SELECT id, rev, body FROM documents WHERE cid = ? AND id >= '_design/' AND id < '_design0' AND deleted = 0 ORDER BY id"
          ), arguments: [cid]
        ).map { row in
          let id: String = try row.value(0)
          return Document(
            id: id, rev: try DocumentReader.storedRevision(try row.value(1), documentID: id),
            body: try DocumentReader.parseBody(row, at: 2, documentID: id))
        }
      }
    }
  }

  /// The live design documents, without blocking the caller's thread (see the blocking
  /// form).
  public func designDocuments() async throws -> [Document] {
    try await database.withConnection(.reading) { try self.designDocuments() }
  }

  static func allDocuments(
    _ db: SQLConnection, cid: Int64, _ query: ViewQuery, ranks: RowRanks
  ) throws -> ViewResult {
    let (total, deletedCount) = try DocumentReader.counts(db, cid: cid)
    let seq = try DocumentReader.lastSequence(db, cid: cid)
    var select = SQLFragment("SELECT id, rev, deleted")
    if query.includeDocs { select += SQLFragment(", body") }
    select += SQLFragment(" FROM documents WHERE cid = ") + .value(cid)
    func row(_ row: Row) throws -> ViewRow {
      let id: String = try row.value(0)
      let rev = try DocumentReader.storedRevision(try row.value(1), documentID: id)
      let deleted: Bool = try row.value(2)
      var value: JSONObject = ["rev": .string(rev.description)]
      if deleted { value["deleted"] = true }
      var result = ViewRow(key: .string(id), value: .object(value), id: id)
      if query.includeDocs {
        result.document =
          deleted
          ? Document(id: id, rev: rev, isDeleted: true)
          : Document(
            id: id, rev: rev, body: try DocumentReader.parseBody(row, at: 3, documentID: id))
      }
      return result
    }
    if let keys = query.keysInOrder {
      var rows: [ViewRow] = []
      for key in keys {
        let id = key.stringValue ?? ""
        let sql = select + SQLFragment(" AND id = ") + .value(id)
        if let found = try Row.fetchOne(
          db.cachedStatement(sql: sql.text), arguments: sql.statementArguments)
        {
          rows.append(try row(found))
        } else {
          var missing = ViewRow(key: key, value: .null)
          missing.error = "not_found"
          rows.append(missing)
        }
      }
      let page = rows.dropFirst(query.skip).prefix(query.limit ?? Int.max)
      return ViewResult(rows: Array(page), totalRows: total, updateSeq: seq)
    }
    var sql = select + SQLFragment(" AND deleted = 0")
    var bounds: [SQLFragment] = []
    let start = query.key ?? query.startKey
    let end = (query.key ?? query.endKey).map {
      ViewCollation.raw.prefixEnd($0, level: query.prefixMatchLevel)
    }
    let inclusiveEnd = query.key != nil || query.inclusiveEnd
    let (low, high) = query.descending ? (end, start) : (start, end)
    let lowInclusive = query.descending ? inclusiveEnd : true
    let highInclusive = query.descending ? true : inclusiveEnd
    if let low = low?.stringValue {
      bounds.append(SQLFragment(lowInclusive ? " AND id >= " : " AND id > ") + .value(low))
    }
    if let high = high?.stringValue {
      bounds.append(SQLFragment(highInclusive ? " AND id <= " : " AND id < ") + .value(high))
    }
    for bound in bounds { sql += bound }
    sql += query.descending ? SQLFragment(" ORDER BY id DESC") : SQLFragment(" ORDER BY id ASC")
    if query.limit != nil || query.skip > 0 {
      sql +=
        SQLFragment(" LIMIT ") + .value(Int64(query.limit ?? -1)) + SQLFragment(" OFFSET ")
        + .value(Int64(query.skip))
    }
    let rows = try Row.fetchAll(
      db.cachedStatement(sql: sql.text), arguments: sql.statementArguments
    )
    .map(row)
    var offset: Int? = nil
    if query.includeOffset {
      // The documents before the range, in the query's direction, counted from the
      // nearest count already made in this state (``RowRanks``).
      let state: [Int64] = [seq, Int64(total), Int64(deletedCount)]
      func before(_ id: String, including: Bool) throws -> Int {
        var count = try ranks.countBefore(db, .documents(cid: cid), state: state, Array(id.utf8)) {
          from, to in
          var sql = SQLFragment("SELECT count(*) FROM ") + .liveDocuments(cid: cid)
          if let from {
            sql += SQLFragment(" AND id >= ") + .value(String(decoding: from, as: UTF8.self))
          }
          sql += SQLFragment(" AND id < ") + .value(String(decoding: to, as: UTF8.self))
          return try Int.fetchOne(
            db.cachedStatement(sql: sql.text), arguments: sql.statementArguments) ?? 0
        }
        if including, try DocumentReader.isLive(db, cid: cid, id: id) { count += 1 }
        return count
      }
      var count = 0
      if query.descending, let high = high?.stringValue {
        // The ids after the high bound (after or at it when it is not inclusive).
        count = total - (try before(high, including: highInclusive))
      } else if !query.descending, let low = low?.stringValue {
        count = try before(low, including: !lowInclusive)
      }
      offset = min(count + query.skip, total)
    }
    return ViewResult(rows: rows, totalRows: total, offset: offset, updateSeq: seq)
  }
}
