import Foundation
import GRDB
import SetteeCore

/// Reduced view queries: built-in reduces as SQL aggregates where they can be, grouped by
/// key or by level, else reduced in Swift as rows stream.
extension ViewStore {
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
      case "_approx_count_distinct":
        SQLFragment("SELECT count(*), count(*), count(DISTINCT key_json), NULL, NULL, 0.0")
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
      case "_approx_count_distinct": return .int(try row.value(2) as Int64)
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
