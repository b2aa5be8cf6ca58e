import Foundation
import GRDB
import SetteeCore

// How value-index queries run: conditions and sorting in SQL over the views' rows, once
// the views have caught up with the documents.
extension ValueIndexes {
  func run(
    _ conditions: [String: Condition], _ sortIndex: String?, _ descending: Bool, _ offset: Int,
    _ limit: Int?, documents wanted: Bool
  ) throws -> (ids: [String], documents: [Document]) {
    guard offset >= 0, (limit ?? 0) >= 0 else {
      throw SetteeError(.invalidQuery, "offset and limit must be 0 or more")
    }
    let conditionNames = conditions.keys.sorted()
    let names = conditionNames + (sortIndex.map { [$0] } ?? [])
    let views = names.map { View(collection: collection, name: $0, kind: .value) }
    return try catchingUp(views) { db, stored in
      var filters: [SQLFragment] = []
      for (index, name) in conditionNames.enumerated() {
        let view = stored[index]
        let type = try ValueIndexDefinition.type(of: view)
        let key = { (value: JSON) -> SQLFragment in
          guard let converted = ValueIndexDefinition.convert(value, to: type) else {
            return SQLFragment("NULL")
          }
          return .value(Data(try ViewCollation.raw.key(converted)))
        }
        let condition: SQLFragment
        switch conditions[name]! {
        case .equals(let value): condition = SQLFragment("key = ") + (try key(value))
        case .atLeast(let value): condition = SQLFragment("key >= ") + (try key(value))
        case .atMost(let value): condition = SQLFragment("key <= ") + (try key(value))
        case .between(let low, let high):
          condition =
            SQLFragment("key BETWEEN ") + (try key(low)) + SQLFragment(" AND ")
            + (try key(high))
        case .oneOf(let values):
          condition =
            SQLFragment("key IN (")
            + .joined(try values.map(key), separator: ", ") + SQLFragment(")")
        }
        filters.append(
          SQLFragment("d.id IN (SELECT doc_id FROM ") + view.table + SQLFragment(" WHERE ")
            + condition + SQLFragment(")"))
      }
      var sql =
        SQLFragment("SELECT d.id, d.rev, d.body FROM ")
        + .liveDocuments(cid: try collectionID(db))
        + SQLFragment(" AND ") + .notDesignID(SQLFragment("d.id"))
      for filter in filters { sql += SQLFragment(" AND ") + filter }
      if sortIndex != nil, let sortView = stored.last {
        sql +=
          SQLFragment(" ORDER BY (SELECT ") + (descending ? SQLFragment("max") : SQLFragment("min"))
          + SQLFragment("(key) FROM ") + sortView.table + SQLFragment(" WHERE doc_id = d.id)")
          + (descending ? SQLFragment(" DESC") : SQLFragment(" ASC"))
          + SQLFragment(" NULLS LAST, d.id")
      } else {
        sql += SQLFragment(" ORDER BY d.id")
      }
      if limit != nil || offset > 0 {
        sql +=
          SQLFragment(" LIMIT ") + .value(Int64(limit ?? -1)) + SQLFragment(" OFFSET ")
          + .value(Int64(offset))
      }
      var ids: [String] = []
      var documents: [Document] = []
      let rows = try Row.fetchCursor(
        db.makeStatement(sql: sql.text), arguments: sql.statementArguments)
      while let row = try rows.next() {
        let id: String = try row.value(0)
        ids.append(id)
        if wanted {
          documents.append(
            try Document(
              id: id, rev: DocumentReader.storedRevision(try row.value(1), documentID: id),
              body: DocumentReader.parseBody(row, at: 2, documentID: id)))
        }
      }
      return (ids, documents)
    }
  }

  func collectionID(_ db: SQLConnection) throws -> Int64 {
    try collection.database.collectionID(db, collection.name) ?? -1
  }

  /// Runs `body` over the views' stored rows once every one of them is up to date:
  /// in a read when none is behind, else in one write that catches them all up first.
  func catchingUp<T>(_ views: [View], _ body: (SQLConnection, [StoredView]) throws -> T)
    throws -> T
  {
    let database = collection.database
    let answer: T? = try database.query { db in
      let stored = try views.map { try $0.stored(db) }
      for view in stored where try ViewStore.isBehind(db, view) { return nil }
      return try body(db, stored)
    }
    if let answer { return answer }
    if database.configuration.readOnly {
      throw SetteeError(
        .readOnly,
        "value indexes of collection \(JSON.string(collection.name)) are behind its documents and the database was opened read-only"
      )
    }
    // In slices, as a view query catches up (see View.query).
    while true {
      let answer: T? = try database.write { db in
        var stored: [StoredView] = []
        for view in views {
          let current = try view.stored(db)
          let after = try ViewStore.catchUp(
            db, current, mapper: view.mapper(db, for: current), sliced: true)
          if try ViewStore.isBehind(db, after) { return nil }
          stored.append(after)
        }
        return try body(db, stored)
      }
      if let answer { return answer }
      ViewStore.pauseBetweenSlices()
    }
  }
}
