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
    _ db: SQLConnection, _ view: StoredView, _ query: ViewQuery, reduce: ViewReduce?
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
      if query.includeOffset && query.keys == nil {
        offset = try rowsBefore(db, view, query) + query.skip
      }
    }
    return ViewResult(
      rows: rows, totalRows: view.totalRows, offset: offset.map { min($0, view.totalRows) },
      updateSeq: view.lastSeq, errors: try errors(db, view), isReduced: reducing)
  }

  // MARK: - Map rows

  static func mapRows(_ db: SQLConnection, _ view: StoredView, _ query: ViewQuery) throws
    -> [ViewRow]
  {
    if query.limit == 0 { return [] }
    let direction = query.descending ? SQLFragment(" DESC") : SQLFragment(" ASC")
    var select = SQLFragment("SELECT v.key_json, v.doc_id, v.value")
    if query.includeDocs { select += SQLFragment(", d.rev, d.body") }
    select += SQLFragment(" FROM ") + view.table + SQLFragment(" v")
    if query.includeDocs {
      select +=
        SQLFragment(
          " LEFT JOIN documents d ON d.cid = ") + .value(view.cid)
        + SQLFragment(" AND d.id = v.doc_id AND d.deleted = 0")
    }
    let order =
      SQLFragment(" ORDER BY v.key") + direction + SQLFragment(", v.doc_id") + direction
      + SQLFragment(", v.n") + direction
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
  /// revision, which only the current one can be (Settee keeps no older bodies). A
  /// document that is missing, deleted or at another revision is `"doc": null`.
  static func linkedDocument(_ db: SQLConnection, cid: Int64, value: JSON) throws -> Document? {
    guard case .object(let members) = value, case .string(let id)? = members["_id"] else {
      return nil
    }
    let missing = Document(id: id, isDeleted: true)
    guard let found = try DocumentReader.document(db, cid: cid, id: id), !found.isDeleted else {
      return missing
    }
    if let rev = members["_rev"] {
      guard case .string(let text) = rev, text == found.rev?.description else { return missing }
    }
    return found
  }

  /// How many rows come before the query's range in its direction.
  static func rowsBefore(_ db: SQLConnection, _ view: StoredView, _ query: ViewQuery) throws -> Int
  {
    let (low, high) = try bounds(query, collation: view.collation)
    guard let bound = query.descending ? high : low else { return 0 }
    let inside = bound.condition(
      low: !query.descending, keyColumn: SQLFragment("key"), idColumn: SQLFragment("doc_id"))
    let sql =
      SQLFragment("SELECT count(*) FROM ") + view.table + SQLFragment(" WHERE NOT ")
      + inside.grouped
    return try Int.fetchOne(db, sql: sql.text, arguments: sql.statementArguments) ?? 0
  }

  // MARK: - Reduce

  /// Reduces the query's rows, grouped as it asks, then applies skip and limit to the
  /// groups. Rows stream in key order; each group is reduced in chunks (then rereduced),
  /// so memory holds one chunk, not the view.
  static func reducedRows(
    _ db: SQLConnection, _ view: StoredView, _ query: ViewQuery, reduce: ViewReduce
  ) throws -> [ViewRow] {
    if query.limit == 0 { return [] }
    if let rows = try aggregatedRows(db, view, query, reduce: reduce) { return rows }
    return try streamedRows(db, view, query, reduce: reduce)
  }

  /// Built-in reductions of numbers as SQL aggregates: `nil` when a value is not a number
  /// or an integer sum overflows, where the Swift path decides (arrays and objects,
  /// errors naming the document).
  ///
  /// Grouping by whole key is a `GROUP BY key`, which reads the table in key order. A group
  /// level seeks group by group: each group is a contiguous range of binary keys (the
  /// arrays starting with the group's elements share those bytes), so two index seeks and
  /// an aggregate over the range make a group. Past ``seekGroups`` groups, the rest is one
  /// `GROUP BY settee_view_group(…)`, which sorts.
  static func aggregatedRows(
    _ db: SQLConnection, _ view: StoredView, _ query: ViewQuery, reduce: ViewReduce
  ) throws -> [ViewRow]? {
    guard let builtin = reduce.builtinName else { return nil }
    let level = query.effectiveGroupLevel
    // When the view holds only numbers (``StoredView/otherValues``), no value's type needs
    // checking.
    let numbersOnly = view.otherValues == 0
    let aggregates =
      switch builtin {
      case "_count": SQLFragment("SELECT count(*), count(*), NULL, NULL, NULL, 0.0")
      case "_sum" where numbersOnly:
        SQLFragment("SELECT count(*), count(*), sum(value), NULL, NULL, 0.0")
      case _ where numbersOnly:
        SQLFragment(
          "SELECT count(*), count(*), sum(value), min(value), max(value), total(value * value)")
      case "_sum":
        SQLFragment(
          "SELECT count(*), count(CASE WHEN typeof(value) IN ('integer', 'real') THEN 1 END), sum(value), NULL, NULL, 0.0, key_json"
        )
      default:
        SQLFragment(
          "SELECT count(*), count(CASE WHEN typeof(value) IN ('integer', 'real') THEN 1 END), sum(value), min(value), max(value), total(value * value)"
        )
      }
    // The group's key comes from one of its rows; without grouping no row is read (a
    // count then reads only the smallest index).
    let keyColumn =
      level == nil && query.keys == nil ? SQLFragment(", NULL") : SQLFragment(", key_json")
    let select =
      aggregates + keyColumn + SQLFragment(" FROM ") + view.table + SQLFragment(" WHERE ")
    /// The reduced value of an aggregate row; `nil` when not every value was a number.
    func reduced(_ row: Row) throws -> JSON? {
      let count: Int64 = try row.value(0)
      if try row.value(1) as Int64 != count { return nil }
      switch builtin {
      case "_count": return .int(count)
      case "_sum": return try decodeValue(try row.value(2))
      default:
        return [
          "sum": try decodeValue(try row.value(2)), "count": .int(count),
          "min": try decodeValue(try row.value(3)),
          "max": try decodeValue(try row.value(4)), "sumsqr": .double(try row.value(5)),
        ]
      }
    }
    func groupKey(_ row: Row, at index: Int) throws -> JSON {
      guard let level else { return .null }
      let key = try StoredData.json(
        try row.value(index) as String, "a row of view \(JSON.string(view.name))")
      if case .array(let elements) = key, elements.count > level {
        return .array(Array(elements.prefix(level)))
      }
      return key
    }
    /// One aggregate over `condition` (a group, or the whole range without grouping).
    func aggregate(_ condition: SQLFragment) throws -> (count: Int64, row: Row)? {
      let sql = select + condition
      guard
        let row = try Row.fetchOne(
          db.cachedStatement(sql: sql.text), arguments: sql.statementArguments)
      else { return nil }
      return (try row.value(0), row)
    }
    do {
      if let keys = query.keysInOrder {
        // Each key is one group (its rows share the key).
        var rows: [ViewRow] = []
        for key in keys {
          let condition = SQLFragment("key = ") + .value(Data(try view.collation.key(key)))
          guard let found = try aggregate(condition), found.count > 0 else { continue }
          guard let value = try reduced(found.row) else { return nil }
          rows.append(ViewRow(key: try groupKey(found.row, at: 6), value: value))
        }
        return Array(rows.dropFirst(query.skip).prefix(query.limit ?? Int.max))
      }
      let range = try rangeCondition(
        query, view, keyColumn: SQLFragment("key"), idColumn: SQLFragment("doc_id"))
      guard let level else {
        // Counting every row: the view keeps the count.
        if builtin == "_count", query.skip == 0, query.key == nil, query.startKey == nil,
          query.endKey == nil
        {
          return view.totalRows == 0
            ? [] : [ViewRow(key: .null, value: .int(Int64(view.totalRows)))]
        }
        guard query.skip == 0, let found = try aggregate(range), found.count > 0 else { return [] }
        return try reduced(found.row).map { [ViewRow(key: .null, value: $0)] }
      }
      if level == Int.max {
        return try grouped(
          db, select: select, range, by: SQLFragment("key"), query, skip: query.skip,
          limit: query.limit, reduced: reduced, groupKey: groupKey)
      }
      return try seekingGroups(
        db, view, query, level: level, range: range, select: select, reduced: reduced,
        groupKey: groupKey)
    } catch let error as DatabaseError where error.message == "integer overflow" {
      return nil
    }
  }

  /// How many groups a group-level reduction finds by seeking before it lets SQLite group
  /// the rest.
  static let seekGroups = 64

  /// `GROUP BY` over a range, in the query's direction, with skip and limit in SQL.
  static func grouped(
    _ db: SQLConnection, select: SQLFragment, _ range: SQLFragment, by group: SQLFragment,
    _ query: ViewQuery, skip: Int, limit: Int?, reduced: (Row) throws -> JSON?,
    groupKey: (Row, Int) throws -> JSON
  ) throws -> [ViewRow]? {
    var sql =
      select + range + SQLFragment(" GROUP BY ") + group + SQLFragment(" ORDER BY ")
      + group + (query.descending ? SQLFragment(" DESC") : SQLFragment(" ASC"))
    if limit != nil || skip > 0 {
      sql +=
        SQLFragment(" LIMIT ") + .value(Int64(limit ?? -1)) + SQLFragment(" OFFSET ")
        + .value(Int64(skip))
    }
    var rows: [ViewRow] = []
    for row in try Row.fetchAll(
      db.cachedStatement(sql: sql.text), arguments: sql.statementArguments)
    {
      guard let value = try reduced(row) else { return nil }
      rows.append(ViewRow(key: try groupKey(row, 6), value: value))
    }
    return rows
  }

  /// Groups at a level, found by seeking from group to group (see ``aggregatedRows``).
  static func seekingGroups(
    _ db: SQLConnection, _ view: StoredView, _ query: ViewQuery, level: Int, range: SQLFragment,
    select: SQLFragment, reduced: (Row) throws -> JSON?, groupKey: (Row, Int) throws -> JSON
  ) throws -> [ViewRow]? {
    let direction = query.descending ? SQLFragment(" DESC") : SQLFragment(" ASC")
    let first = SQLFragment("SELECT key, key_json FROM ") + view.table + SQLFragment(" WHERE ")
    var rows: [ViewRow] = []
    var toSkip = query.skip
    var past = SQLFragment("1")  // excludes the groups already made
    for _ in 0..<seekGroups {
      if let limit = query.limit, rows.count >= limit { return rows }
      let sql =
        first + range + SQLFragment(" AND ") + past + SQLFragment(" ORDER BY key")
        + direction + SQLFragment(" LIMIT 1")
      guard
        let row = try Row.fetchOne(
          db.cachedStatement(sql: sql.text), arguments: sql.statementArguments)
      else { return rows }
      let key = [UInt8](try row.value(0) as Data)
      let json = try StoredData.json(
        try row.value(1) as String, "a row of view \(JSON.string(view.name))")
      // An array of at least `level` elements: every array starting with the same elements
      // is in its group, the keys starting with those bytes. Anything else: its own key.
      let group: SQLFragment
      if case .array(let elements) = json, elements.count >= level,
        let cut = key.withUnsafeBytes({ view.collation.groupKey($0, level: level) })
      {
        let prefix = Array(cut.dropLast())
        let upper = successor(prefix)
        group =
          SQLFragment("key >= ") + .value(Data(prefix))
          + (upper.map { SQLFragment(" AND key < ") + .value(Data($0)) } ?? SQLFragment(""))
        past =
          query.descending
          ? SQLFragment("key < ") + .value(Data(prefix))
          : (upper.map { SQLFragment("key >= ") + .value(Data($0)) } ?? SQLFragment("0"))
      } else {
        group = SQLFragment("key = ") + .value(Data(key))
        past = SQLFragment(query.descending ? "key < " : "key > ") + .value(Data(key))
      }
      if toSkip > 0 {
        toSkip -= 1
        continue
      }
      let aggregate = select + range + SQLFragment(" AND ") + group
      guard
        let found = try Row.fetchOne(
          db.cachedStatement(sql: aggregate.text), arguments: aggregate.statementArguments),
        let value = try reduced(found)
      else { return nil }
      rows.append(ViewRow(key: try groupKey(found, 6), value: value))
    }
    // Many groups: SQLite groups the rest (sorting by the computed group key).
    let group =
      SQLFragment("settee_view_group(key, ") + .value(view.collation == .raw ? 1 : 0)
      + SQLFragment(", ") + .value(Int64(level)) + SQLFragment(")")
    guard
      let rest = try grouped(
        db, select: select, range + SQLFragment(" AND ") + past, by: group, query, skip: toSkip,
        limit: query.limit.map { $0 - rows.count }, reduced: reduced, groupKey: groupKey)
    else { return nil }
    return rows + rest
  }

  /// The smallest byte string greater than every string starting with `prefix`; `nil`
  /// when there is none (all 0xFF).
  static func successor(_ prefix: [UInt8]) -> [UInt8]? {
    var bytes = prefix
    while let last = bytes.popLast() {
      if last < 0xFF { return bytes + [last + 1] }
    }
    return nil
  }

  /// The query's key range as one SQL condition (`1` for all rows).
  static func rangeCondition(
    _ query: ViewQuery, _ view: StoredView, keyColumn: SQLFragment, idColumn: SQLFragment
  ) throws -> SQLFragment {
    let (low, high) = try bounds(query, collation: view.collation)
    var conditions: [SQLFragment] = []
    if let low {
      conditions.append(low.condition(low: true, keyColumn: keyColumn, idColumn: idColumn))
    }
    if let high {
      conditions.append(high.condition(low: false, keyColumn: keyColumn, idColumn: idColumn))
    }
    return .and(conditions)
  }

  /// Any reduction, in Swift, over the rows streamed in key order.
  static func streamedRows(
    _ db: SQLConnection, _ view: StoredView, _ query: ViewQuery, reduce: ViewReduce
  ) throws -> [ViewRow] {
    let level = query.effectiveGroupLevel
    var groups: [ViewRow] = []
    var toSkip = query.skip
    let direction = query.descending ? SQLFragment(" DESC") : SQLFragment(" ASC")
    let select = SQLFragment("SELECT key, key_json, doc_id, value FROM ") + view.table
    let order =
      SQLFragment(" ORDER BY key") + direction + SQLFragment(", doc_id") + direction
      + SQLFragment(", n") + direction
    /// Streams the rows of one range, a group at a time; a group that `skip` leaves out
    /// is not reduced. Returns false once `limit` groups are made.
    func run(_ condition: SQLFragment) throws -> Bool {
      let sql = select + SQLFragment(" WHERE ") + condition + order
      let cursor = try Row.fetchCursor(
        db.cachedStatement(sql: sql.text), arguments: sql.statementArguments)
      var group: GroupReducer? = nil
      var skipping = false
      var started = false
      var groupBinary: [UInt8] = []
      var groupJSON: JSON = .null
      func finish() throws -> Bool {
        guard var finished = group, !skipping else { return true }
        groups.append(ViewRow(key: groupJSON, value: try finished.finish()))
        return query.limit.map { groups.count < $0 } ?? true
      }
      while let row = try cursor.next() {
        let key = try StoredData.json(
          try row.value(1) as String, "a row of view \(JSON.string(view.name))")
        var binary: [UInt8] = []
        var json: JSON = .null
        if let level {
          if case .array(let elements) = key, elements.count > level {
            json = .array(Array(elements.prefix(level)))
            binary = try view.collation.key(json)
          } else {
            json = key
            binary = [UInt8](try row.value(0) as Data)
          }
        }
        if !started || binary != groupBinary {
          if started, !(try finish()) { return false }
          started = true
          skipping = toSkip > 0
          if skipping { toSkip -= 1 }
          group = skipping ? nil : GroupReducer(reduce: reduce)
          groupBinary = binary
          groupJSON = json
        }
        try group?.add(key: key, id: try row.value(2), value: try decodeValue(try row.value(3)))
      }
      return started ? try finish() : true
    }
    if let keys = query.keysInOrder {
      for key in keys {
        guard try run(SQLFragment("key = ") + .value(Data(try view.collation.key(key)))) else {
          break
        }
      }
      return groups
    }
    let (low, high) = try bounds(query, collation: view.collation)
    var conditions: [SQLFragment] = []
    if let low {
      conditions.append(
        low.condition(low: true, keyColumn: SQLFragment("key"), idColumn: SQLFragment("doc_id")))
    }
    if let high {
      conditions.append(
        high.condition(low: false, keyColumn: SQLFragment("key"), idColumn: SQLFragment("doc_id")))
    }
    _ = try run(.and(conditions))
    return groups
  }
}
