import GRDB
import SetteeCore

/// The `where` face's field tables (`wf_<cid>`, with their indexes `wx_…`; settings in
/// `where_settings`): kept by SQLite triggers on `documents`, so a write runs no Swift
/// code for them, but a unique index among them can refuse a document.
enum WhereFieldsKind: SecondaryIndexKind {
  static var upkeep: Upkeep { .byTrigger }

  static func refusal(
    _ db: SQLConnection, cid: Int64, _ error: DatabaseError, body: [UInt8], documentID: String
  ) -> SetteeError? {
    guard error.resultCode == .SQLITE_CONSTRAINT else { return nil }
    return WhereFieldTable.uniqueViolation(
      db, cid: cid, body: String(decoding: body, as: UTF8.self), documentID: documentID)
  }

  static func rebuild(_ db: SQLConnection, cid: Int64) throws {
    try WhereFieldTable.rebuild(db, cid: cid)
  }

  /// The settings go too, as a new, empty version (processes keep settings by version).
  static func dropAll(_ db: SQLConnection, cid: Int64) throws {
    let (settings, version) = try WhereFieldTable.load(db, cid: cid)
    try WhereFieldTable.apply(db, cid: cid, WhereSettings(), replacing: settings, version: version)
  }

  static func describe(_ db: SQLConnection, cid: Int64) throws -> [SecondaryIndexInfo] {
    let (settings, _) = try WhereFieldTable.load(db, cid: cid)
    guard !settings.columns.isEmpty else { return [] }
    let count =
      SQLFragment("SELECT count(*) FROM ") + .identifier(WhereFieldTable.tableName(cid))
    return [
      SecondaryIndexInfo(
        kind: .whereFields, name: settings.columns.map { "[\($0)]" }.joined(separator: ", "),
        upkeep: upkeep.info, rows: try Int.fetchOne(db, sql: count.text) ?? 0)
    ]
  }

  static func checkers(
    _ db: SQLConnection, _ database: Database, cid: Int64, collection: String,
    indexes: [StoredIndex]
  ) throws -> [any IndexChecker] {
    [WhereFieldsChecker(db: db, cid: cid, collection: collection)]
  }
}

/// Checks the `where` settings read back, and the field table against the documents.
struct WhereFieldsChecker: IndexChecker {
  let db: SQLConnection
  let cid: Int64
  let collection: String

  var label: String { "where settings" }

  func finish(_ report: inout CheckReport) throws {
    try Database.checkWhereSettings(db, cid: cid, collection: collection, &report)
    try WhereFieldTable.check(db, cid: cid, collection: collection, &report)
  }
}
