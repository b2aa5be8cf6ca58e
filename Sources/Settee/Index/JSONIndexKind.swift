import Foundation
import GRDB
import SetteeCore

/// Mango JSON indexes (`ix_<xid>` entry tables, catalog `indexes`): kept in the write's
/// transaction by ``JSONIndexWriter``.
enum JSONIndexKind: SecondaryIndexKind {
  static var upkeep: Upkeep { .inWriteTransaction }

  static func writers(_ db: SQLConnection, _ collection: CollectionState) -> [any IndexWriter] {
    collection.indexes.filter { $0.definition.kind == .json && $0.hasEntries }.map {
      JSONIndexWriter(db: db, index: $0)
    }
  }

  static func rebuild(_ db: SQLConnection, cid: Int64) throws {
    try StoredIndex.rebuild(db, cid: cid, kind: .json)
  }

  static func dropAll(_ db: SQLConnection, cid: Int64) throws {
    try StoredIndex.dropAll(db, cid: cid, kind: .json)
  }

  static func describe(_ db: SQLConnection, cid: Int64) throws -> [SecondaryIndexInfo] {
    try StoredIndex.describe(db, cid: cid, kind: .json, as: .json, upkeep: upkeep)
  }

  static func checkers(
    _ db: SQLConnection, _ database: Database, cid: Int64, collection: String,
    indexes: [StoredIndex]
  ) throws -> [any IndexChecker] {
    indexes.filter { $0.definition.kind == .json && $0.hasEntries }.map {
      JSONIndexChecker(db: db, index: $0, collection: collection)
    }
  }
}

/// Checks a JSON index's entries (keys, values and revisions) and its count of documents
/// with several entries against the documents.
struct JSONIndexChecker: IndexChecker {
  /// A document's entries: keys and values of each row.
  typealias Entries = Set<[IndexKeys.Entry]>

  /// Stands for the entries of a damaged document, which are not compared.
  static let damaged: Entries = [[IndexKeys.Entry(key: [0xFF], value: nil)]]

  let db: SQLConnection
  let index: StoredIndex
  let collection: String
  /// What each document should give: rid → entries.
  private var expected: [Int64: Entries] = [:]
  /// Each indexed document's revision, which its entries carry (a covered query answers
  /// `_rev` from them).
  private var revisions: [Int64: String] = [:]

  init(db: SQLConnection, index: StoredIndex, collection: String) {
    (self.db, self.index, self.collection) = (db, index, collection)
  }

  var label: String { index.definition.name }

  mutating func see(rid: Int64, document: JSON?) throws {
    guard let document else {
      expected[rid] = Self.damaged
      return
    }
    let entries = try index.rows(document)
    if !entries.isEmpty {
      expected[rid] = Set(entries)
      revisions[rid] = document.objectValue?["_rev"]?.stringValue
    }
  }

  /// Compares the stored entries with what the documents should put there.
  func finish(_ report: inout CheckReport) throws {
    let count = index.definition.fields.count
    let columns =
      (0..<count).map { StoredIndex.keyColumn($0) }
      + (0..<count).map { StoredIndex.valueColumn($0) }
    let sql =
      SQLFragment("SELECT rid, id, rev, ") + .joined(columns, separator: ", ")
      + SQLFragment(" FROM ") + index.table
    var stored: [Int64: Set<[IndexKeys.Entry]>] = [:]
    var ids: [Int64: String] = [:]
    var multiEntryDocuments = 0
    // Documents with an entry whose revision is not the document's (one report each).
    var staleRevisions: [Int64: String] = [:]
    let rows = try Row.fetchCursor(db, sql: sql.text)
    while let row = try rows.next() {
      report.indexEntries += 1
      let rid: Int64 = try row.value(0)
      ids[rid] = try row.value(1)
      let rev: String = try row.value(2)
      if let expected = revisions[rid], expected != rev { staleRevisions[rid] = rev }
      var entries: [IndexKeys.Entry] = []
      for position in 0..<count {
        let key = [UInt8]((try row.value(3 + position) as Data?) ?? Data())
        let text: String? = try row.value(3 + count + position)
        let value = text.flatMap { try? JSONParser.parse($0) }
        entries.append(
          IndexKeys.Entry(key: key == StoredIndex.missingKey ? nil : key, value: value))
      }
      if stored[rid, default: []].insert(entries).inserted, stored[rid]!.count == 2 {
        multiEntryDocuments += 1
      }
    }
    let name = index.definition.name
    for rid in Set(stored.keys).union(expected.keys).sorted()
    where stored[rid] != expected[rid] && expected[rid] != Self.damaged {
      let id =
        try ids[rid]
        ?? String.fetchOne(db, sql: "SELECT id FROM documents WHERE rid = ?", arguments: [rid])
        ?? "rid \(rid)"
      let problem =
        expected[rid] == nil
        ? "index \(quoted(name)) holds entries for a document that is deleted, gone, or outside its partial_filter_selector"
        : "index \(quoted(name)) holds \(stored[rid]?.count ?? 0) entries for this document that differ from the \(expected[rid]!.count) it should"
      report.add(.init(collection: collection, documentID: id, index: name, message: problem))
    }
    for (rid, rev) in staleRevisions.sorted(by: { $0.key < $1.key }) {
      report.add(
        .init(
          collection: collection, documentID: ids[rid], index: name,
          message:
            "index \(quoted(name)) holds an entry at revision \(quoted(rev)) for this document, which is at \(quoted(revisions[rid] ?? ""))"
        ))
    }
    let recorded =
      try Int.fetchOne(
        db, sql: "SELECT multi_docs FROM indexes WHERE xid = ?", arguments: [index.xid]) ?? 0
    if recorded != multiEntryDocuments {
      report.add(
        .init(
          collection: collection, index: name,
          message:
            "index \(quoted(name)) records \(recorded) documents with several entries, but \(multiEntryDocuments) have them (the planner relies on this count)"
        ))
    }
  }

}
