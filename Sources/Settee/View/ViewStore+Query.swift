import Foundation
import GRDB
import SetteeCore

extension ViewStore {
  /// One end of a key range: a binary key, optionally with a document id among rows of
  /// that key, inclusive or not.
  struct Bound {
    var key: [UInt8]
    var documentID: String?
    var inclusive: Bool

    /// The SQL condition that a row is on the right side of this bound.
    func condition(low: Bool, keyColumn: SQLFragment, idColumn: SQLFragment) -> SQLFragment {
      let comparison: SQLFragment =
        switch (low, inclusive) {
        case (true, true): SQLFragment(" >= ")
        case (true, false): SQLFragment(" > ")
        case (false, true): SQLFragment(" <= ")
        case (false, false): SQLFragment(" < ")
        }
      let bound = SQLFragment.value(Data(key))
      guard let documentID else { return keyColumn + comparison + bound }
      let pair = SQLFragment("(") + keyColumn + SQLFragment(", ") + idColumn + SQLFragment(")")
      return pair + comparison + SQLFragment("(") + bound + SQLFragment(", ")
        + .value(documentID) + SQLFragment(")")
    }
  }

  /// The range a query reads, as low and high bounds in key order (a descending query's
  /// start is its high end). Prefix matching extends the high end.
  static func bounds(_ query: ViewQuery, collation: ViewCollation) throws -> (
    low: Bound?, high: Bound?
  ) {
    let start = query.key ?? query.startKey
    let end = query.key ?? query.endKey
    let inclusiveEnd = query.key != nil || query.inclusiveEnd
    func bound(_ key: JSON?, _ documentID: String?, inclusive: Bool, high: Bool) throws -> Bound? {
      guard var key else { return nil }
      if high { key = collation.prefixEnd(key, level: query.prefixMatchLevel) }
      return Bound(key: try collation.key(key), documentID: documentID, inclusive: inclusive)
    }
    if query.descending {
      return (
        try bound(end, query.endKeyDocID, inclusive: inclusiveEnd, high: false),
        try bound(start, query.startKeyDocID, inclusive: true, high: true)
      )
    }
    return (
      try bound(start, query.startKeyDocID, inclusive: true, high: false),
      try bound(end, query.endKeyDocID, inclusive: inclusiveEnd, high: true)
    )
  }

  /// Runs a query on a view that is as up to date as the query wants, in the caller's
  /// transaction.
  static func query(
    _ db: SQLConnection, _ view: StoredView, _ query: ViewQuery, reduce: ViewReduce?,
    ranks: RowRanks
  ) throws -> ViewResult {
    let reducing = query.reduce ?? (view.reduceName != nil)
    let rows: [ViewRow]
    var offset: Int? = nil
    if reducing {
      guard let reduce else {
        throw SetteeError(
          .viewNotRegistered,
          "view \(JSON.string(view.name)) has a custom reduce function that is not registered in this process: register the view (with its reduce) before querying, or query with reduce: false"
        )
      }
      rows = try reducedRows(db, view, query, reduce: reduce)
    } else {
      rows = try mapRows(db, view, query)
      if query.includeOffset {
        if let first = query.keysInOrder?.first {
          // By keys, CouchDB's offset is where the first key's rows start.
          var single = query
          single.keys = nil
          single.key = first
          offset = try rowsBefore(db, view, single, ranks: ranks)
        } else {
          offset = try rowsBefore(db, view, query, ranks: ranks) + query.skip
        }
      }
    }
    var result = ViewResult(
      rows: rows, totalRows: view.totalRows, offset: offset.map { min($0, view.totalRows) },
      updateSeq: view.lastSeq, errors: try errors(db, view), isReduced: reducing)
    if query.includeDocs {
      try ListedAttachments(db, cid: view.cid, query.attachments).fill(db, &result)
    }
    return result
  }

  // MARK: - Map rows

  static func mapRows(_ db: SQLConnection, _ view: StoredView, _ query: ViewQuery) throws
    -> [ViewRow]
  {
    if query.limit == 0 { return [] }
    let direction = query.descending ? SQLFragment(" DESC") : SQLFragment(" ASC")
    let order =
      SQLFragment(" ORDER BY v.key") + direction + SQLFragment(", v.doc_id") + direction
      + SQLFragment(", v.n") + direction
    // With documents, each row's document by its rowid, found by a lookup of its id:
    // joined on (cid, id) instead, SQLite (once ANALYZE has counted the documents, and the
    // page's LIMIT a parameter it cannot see) built a Bloom filter over every document of
    // the collection for each page, 10 ms at 100,000.
    let select =
      query.includeDocs
      ? SQLFragment("SELECT v.key_json, v.doc_id, v.value, d.rev, d.body FROM ") + view.table
        + SQLFragment(
          " v LEFT JOIN documents d ON d.rid = (SELECT x.rid FROM documents x WHERE x.cid = ")
        + .value(view.cid) + SQLFragment(" AND x.id = v.doc_id AND x.deleted = 0)")
      : SQLFragment("SELECT v.key_json, v.doc_id, v.value FROM ") + view.table
        + SQLFragment(" v")
    func fetch(_ condition: SQLFragment, skip: Int, limit: Int?) throws -> [ViewRow] {
      var sql = select + SQLFragment(" WHERE ") + condition + order
      if limit != nil || skip > 0 {
        sql +=
          SQLFragment(" LIMIT ") + .value(Int64(limit ?? -1)) + SQLFragment(" OFFSET ")
          + .value(Int64(skip))
      }
      if !query.includeDocs {
        // The common case, read through SQLite's C API (see RawStatement).
        var rows: [ViewRow] = []
        try RawStatement(db, sql).forEach { row in
          rows.append(
            ViewRow(
              key: try row.json(0, "a row of view \(JSON.string(view.name))"),
              value: try row.json(2, "a row of view \(JSON.string(view.name))"),
              id: row.string(1)))
          return true
        }
        return rows
      }
      return try Row.fetchAll(
        db.cachedStatement(sql: sql.text), arguments: sql.statementArguments
      ).map { row in
        let id: String = try row.value(1)
        var result = ViewRow(
          key: try StoredData.json(
            try row.value(0) as String, "a row of view \(JSON.string(view.name))"),
          value: try decodeValue(try row.value(2)), id: id)
        if let linked = try linkedDocument(db, cid: view.cid, value: result.value) {
          result.document = linked
        } else if let rev = try row.value(3) as String? {
          result.document = try Document(
            id: id, rev: DocumentReader.storedRevision(rev, documentID: id),
            body: DocumentReader.parseBody(row, at: 4, documentID: id))
        } else {
          // Deleted since the view caught up: `"doc": null`, as CouchDB answers.
          result.document = Document(id: id, isDeleted: true)
        }
        return result
      }
    }
    let keyColumn = SQLFragment("v.key")
    guard let keys = query.keys else {
      let (low, high) = try bounds(query, collation: view.collation)
      var conditions: [SQLFragment] = []
      if let low {
        conditions.append(
          low.condition(low: true, keyColumn: keyColumn, idColumn: SQLFragment("v.doc_id")))
      }
      if let high {
        conditions.append(
          high.condition(low: false, keyColumn: keyColumn, idColumn: SQLFragment("v.doc_id")))
      }
      return try fetch(.and(conditions), skip: query.skip, limit: query.limit)
    }
    // Keys in the order given (reversed when descending): each key's rows, within the
    // document id range if one is given, then skip and limit over them all.
    var rows: [ViewRow] = []
    var toSkip = query.skip
    var idRange: [SQLFragment] = []
    let (first, last): (StaticString, StaticString) =
      query.descending ? (" <= ", " >= ") : (" >= ", " <= ")
    if let start = query.startKeyDocID {
      idRange.append(SQLFragment("v.doc_id") + SQLFragment(first) + .value(start))
    }
    if let end = query.endKeyDocID {
      let operation: StaticString = query.inclusiveEnd ? last : (query.descending ? " > " : " < ")
      idRange.append(SQLFragment("v.doc_id") + SQLFragment(operation) + .value(end))
    }
    for key in query.keysInOrder ?? keys {
      let wanted = query.limit.map { $0 - rows.count }
      if let wanted, wanted <= 0 { break }
      var found = try fetch(
        .and(
          [keyColumn + SQLFragment(" = ") + .value(Data(try view.collation.key(key)))] + idRange),
        skip: 0, limit: nil)
      if toSkip > 0 {
        let dropped = min(toSkip, found.count)
        found.removeFirst(dropped)
        toSkip -= dropped
      }
      if let wanted, found.count > wanted { found.removeLast(found.count - wanted) }
      rows += found
    }
    return rows
  }

  /// CouchDB's linked documents: with `include_docs`, a row whose value is an object with
  /// an `_id` carries that document instead of the emitting one; with a `_rev` too, that
  /// revision (a leaf, or a replaced revision until compaction), as CouchDB's
  /// `couch_index_util:load_doc` opens it. A document or revision that is missing or
  /// deleted is `"doc": null`.
  static func linkedDocument(_ db: SQLConnection, cid: Int64, value: JSON) throws -> Document? {
    guard case .object(let members) = value, case .string(let id)? = members["_id"] else {
      return nil
    }
    let missing = Document(id: id, isDeleted: true)
    guard let rev = members["_rev"] else {
      guard let found = try DocumentReader.document(db, cid: cid, id: id), !found.isDeleted
      else { return missing }
      return found
    }
    guard case .string(let text) = rev, let wanted = RevisionID(text),
      let found = try KeptBodies.revision(db, cid: cid, id: id, rev: wanted), !found.isDeleted
    else { return missing }
    return found
  }

  /// How many rows come before the query's range in its direction: counted from the
  /// nearest count already made for the view's state (``RowRanks``) when the bound is a
  /// key alone, else counted whole.
  static func rowsBefore(
    _ db: SQLConnection, _ view: StoredView, _ query: ViewQuery, ranks: RowRanks
  ) throws -> Int {
    let (low, high) = try bounds(query, collation: view.collation)
    guard var bound = query.descending ? high : low else { return 0 }
    if bound.documentID == nil {
      // Rows with a key before `key`, or at most `key`: before `key` followed by a zero
      // byte, the next blob in memcmp order.
      func before(_ key: [UInt8], including: Bool) throws -> Int {
        let position = including ? key + [0] : key
        return try ranks.countBefore(
          db, .view(vid: view.vid),
          state: [view.generation, view.lastSeq, Int64(view.totalRows)], position
        ) { from, to in
          var sql = SQLFragment("SELECT count(*) FROM ") + view.table + SQLFragment(" WHERE ")
          if let from { sql += SQLFragment("key >= ") + .value(Data(from)) + SQLFragment(" AND ") }
          sql += SQLFragment("key < ") + .value(Data(to))
          return try Int.fetchOne(
            db.cachedStatement(sql: sql.text), arguments: sql.statementArguments) ?? 0
        }
      }
      if query.descending {
        // The rows after the high bound (after or at it when it is not inclusive).
        return view.totalRows - (try before(bound.key, including: bound.inclusive))
      }
      return try before(bound.key, including: !bound.inclusive)
    }
    // The rows on the other side of the bound, as a range the key index reads (a `NOT` of
    // the bound's own condition made SQLite read every row of the view).
    bound.inclusive.toggle()
    let before = bound.condition(
      low: query.descending, keyColumn: SQLFragment("key"), idColumn: SQLFragment("doc_id"))
    let sql =
      SQLFragment("SELECT count(*) FROM ") + view.table + SQLFragment(" WHERE ") + before
    return try Int.fetchOne(db, sql: sql.text, arguments: sql.statementArguments) ?? 0
  }
}
