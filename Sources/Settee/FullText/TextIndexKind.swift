import GRDB
import SetteeCore

/// TEXT indexes (`fts_<xid>` FTS4 tables, catalog `indexes`): kept in the write's
/// transaction, one row per live document.
enum TextIndexKind: SecondaryIndexKind {
  static var upkeep: Upkeep { .inWriteTransaction }

  static func writers(_ db: SQLConnection, _ collection: CollectionState) -> [any IndexWriter] {
    collection.indexes.filter { $0.definition.kind == .text }.map {
      TextIndexWriter(db: db, index: TextIndex(stored: $0))
    }
  }

  static func rebuild(_ db: SQLConnection, cid: Int64) throws {
    try StoredIndex.rebuild(db, cid: cid, kind: .text)
  }

  static func dropAll(_ db: SQLConnection, cid: Int64) throws {
    try StoredIndex.dropAll(db, cid: cid, kind: .text)
  }

  static func describe(_ db: SQLConnection, cid: Int64) throws -> [SecondaryIndexInfo] {
    try StoredIndex.describe(db, cid: cid, kind: .text, as: .text, upkeep: upkeep)
  }

  static func checkers(
    _ db: SQLConnection, _ database: Database, cid: Int64, collection: String,
    indexes: [StoredIndex]
  ) throws -> [any IndexChecker] {
    indexes.filter { $0.definition.kind == .text }.map {
      TextIndexChecker(db: db, index: $0, cid: cid, collection: collection)
    }
  }
}

/// Keeps a TEXT index's row for each document written.
struct TextIndexWriter: IndexWriter {
  let db: SQLConnection
  let index: TextIndex

  var needsPrevious: Bool { false }

  func update(_ change: DocumentChange) throws {
    try index.update(
      rid: change.rid, document: change.document, json: change.json, isNew: change.isNew, db: db)
  }

  func finish() throws {}
}

/// Checks that a TEXT index has a row for each live document and none for others.
struct TextIndexChecker: IndexChecker {
  let db: SQLConnection
  let index: StoredIndex
  let cid: Int64
  let collection: String

  var label: String { index.definition.name }

  /// A TEXT index holds one row per live document, and none for others.
  func finish(_ report: inout CheckReport) throws {
    let table = TextIndex.table(index)
    let missing =
      SQLFragment("SELECT id FROM documents WHERE cid = ") + .value(cid)
      + SQLFragment(" AND deleted = 0 AND rid NOT IN (SELECT docid FROM ") + table
      + SQLFragment(")")
    let extra =
      SQLFragment("SELECT docid FROM ") + table
      + SQLFragment(" WHERE docid NOT IN (SELECT rid FROM documents WHERE cid = ")
      + .value(cid) + SQLFragment(" AND deleted = 0)")
    let name = index.definition.name
    for id in try String.fetchAll(db, sql: missing.text, arguments: missing.statementArguments) {
      report.add(
        .init(
          collection: collection, documentID: id, index: name,
          message: "TEXT index \(quoted(name)) has no row for this document"))
    }
    for rid in try Int64.fetchAll(db, sql: extra.text, arguments: extra.statementArguments) {
      report.add(
        .init(
          collection: collection, index: name,
          message: "TEXT index \(quoted(name)) has a row (docid \(rid)) for no live document"))
    }
  }
}
