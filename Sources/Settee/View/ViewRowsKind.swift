import GRDB
import SetteeCore

/// Views and value indexes (`vw_<vid>` row tables, catalog `views`): caught up from the
/// collection's changes when queried, so a write does nothing for them.
enum ViewRowsKind: SecondaryIndexKind {
  static var upkeep: Upkeep { .onRead }

  /// Empties every view and value index of the collection: each catches up from the
  /// first change when next queried (a Swift-mapped one once its map is registered).
  static func rebuild(_ db: SQLConnection, cid: Int64) throws {
    for kind in [ViewKind.view, .value] {
      for view in try ViewStore.all(db, cid: cid, kind: kind) { try ViewStore.reset(db, view) }
    }
  }

  static func dropAll(_ db: SQLConnection, cid: Int64) throws {
    for kind in [ViewKind.view, .value] {
      for view in try ViewStore.all(db, cid: cid, kind: kind) { try ViewStore.drop(db, view) }
    }
  }

  /// Removes a purged document's rows (and recorded map error) from every view and value
  /// index, with their counts: a catch-up would never see the document go.
  static func forget(_ db: SQLConnection, cid: Int64, documentID: String) throws {
    for kind in [ViewKind.view, .value] {
      for view in try ViewStore.all(db, cid: cid, kind: kind) {
        let removed = try Bool.fetchAll(
          db,
          sql: (SQLFragment("DELETE FROM ") + view.table
            + SQLFragment(" WHERE doc_id = ? RETURNING ") + ViewStore.otherValue).text,
          arguments: [documentID])
        try db.execute(
          sql: """
            UPDATE views SET total_rows = total_rows - ?, other_values = other_values - ?
            WHERE vid = ?
            """, arguments: [removed.count, removed.filter { $0 }.count, view.vid])
        try db.execute(
          sql: "DELETE FROM view_errors WHERE vid = ? AND doc_id = ?",
          arguments: [view.vid, documentID])
      }
    }
  }

  static func describe(_ db: SQLConnection, cid: Int64) throws -> [SecondaryIndexInfo] {
    let lastSeq = try DocumentReader.lastSequence(db, cid: cid)
    var infos: [SecondaryIndexInfo] = []
    for kind in [ViewKind.view, .value] {
      for view in try ViewStore.all(db, cid: cid, kind: kind) {
        infos.append(
          SecondaryIndexInfo(
            kind: kind == .view ? .view : .valueIndex, name: view.name, upkeep: upkeep.info,
            rows: Int(view.totalRows), changesBehind: max(0, lastSeq - view.lastSeq)))
      }
    }
    return infos
  }

  static func checkers(
    _ db: SQLConnection, _ database: Database, cid: Int64, collection: String,
    indexes: [StoredIndex]
  ) throws -> [any IndexChecker] {
    let collectionSeq = try DocumentReader.lastSequence(db, cid: cid)
    var checkers: [any IndexChecker] = []
    for kind in [ViewKind.view, .value] {
      for stored in try ViewStore.all(db, cid: cid, kind: kind) {
        checkers.append(
          ViewRowsChecker(
            db: db, database: database, stored: stored, collection: collection,
            collectionSeq: collectionSeq,
            label: "\(kind == .view ? "view" : "value index") \(quoted(stored.name))"))
      }
    }
    return checkers
  }
}

/// Checks a view's bookkeeping and rows (``Database/checkView(_:_:label:collection:collectionSeq:_:)``).
struct ViewRowsChecker: IndexChecker {
  let db: SQLConnection
  let database: Database
  let stored: StoredView
  let collection: String
  let collectionSeq: Int64
  let label: String

  func finish(_ report: inout CheckReport) throws {
    try database.checkView(
      db, stored, label: label, collection: collection, collectionSeq: collectionSeq, &report)
  }
}
