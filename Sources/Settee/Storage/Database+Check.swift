import Foundation
import GRDB
import SetteeCore

/// What ``Database/check()-854zx`` found.
public struct CheckReport: Sendable, Hashable {
  /// One problem: where it is and what it is.
  public struct Problem: Sendable, Hashable {
    /// The collection concerned, if any.
    public var collection: String?
    /// The document concerned, if any.
    public var documentID: String?
    /// The index concerned, if any.
    public var index: String?
    /// What is wrong, as a sentence.
    public var message: String
  }

  /// What SQLite's `PRAGMA integrity_check` reported (empty when the file is sound).
  public var integrity: [String] = []
  /// Documents read (tombstones included) and index entries compared.
  public var documents = 0
  /// Index entries compared.
  public var indexEntries = 0
  /// Damaged documents and index entries that do not match their documents, the first
  /// ``maxProblems`` of them.
  public var problems: [Problem] = []
  /// How many problems there were in all (more than `problems` holds past the cap).
  public var problemCount = 0

  /// The most problems a report lists.
  public static let maxProblems = 100

  /// Whether nothing is wrong.
  public var isHealthy: Bool { integrity.isEmpty && problemCount == 0 }

  mutating func add(_ problem: Problem) {
    problemCount += 1
    if problems.count < CheckReport.maxProblems { problems.append(problem) }
  }
}

extension Database {
  /// Checks the whole file: SQLite's integrity check, every stored body and revision
  /// parsed, and every index entry compared with the entries its document should have
  /// (JSON indexes: keys, values and revisions; TEXT indexes: one row per live document;
  /// the `where` face's materialized fields: one row per live document, each value
  /// recomputed; views and value indexes: their bookkeeping, and every row recomputed
  /// when the map function is at hand), the collections' sequence numbers and revision
  /// histories, `where` settings and metadata. A part that cannot be read is a problem of
  /// its own; the rest is still checked.
  ///
  /// It only reads, from one snapshot; it works on a database opened read-only.
  ///
  /// - Complexity: O(documents × indexes), reading every document once per collection.
  public func check() throws -> CheckReport {
    try read { db in try check(db) }
  }

  func check(_ db: SQLConnection) throws -> CheckReport {
    var report = CheckReport()
    let integrity = try String.fetchAll(db, sql: "PRAGMA integrity_check")
    report.integrity = integrity == ["ok"] ? [] : integrity
    let collections = try Row.fetchAll(db, sql: "SELECT cid, name FROM collections ORDER BY name")
    for collection in collections {
      let cid: Int64 = try collection.value(0)
      let name: String = try collection.value(1)
      report.checking(collection: name) { report in
        let indexes = try StoredIndex.all(db, cid: cid)
        var expected = try Database.checkDocuments(
          db, cid: cid, name: name, indexes: indexes, &report)
        for index in indexes {
          let entries = index.definition.kind == .json ? expected.removeFirst() : [:]
          report.checking(collection: name, index: index.definition.name) { report in
            if index.definition.kind == .json {
              try Database.checkEntries(db, index, collection: name, expected: entries, &report)
            } else {
              try Database.checkText(db, index, cid: cid, collection: name, &report)
            }
          }
        }
      }
      report.checking(collection: name) { report in
        try Database.checkSequences(db, cid: cid, collection: name, &report)
      }
      report.checking(collection: name, index: "where settings") { report in
        try Database.checkWhereSettings(db, cid: cid, collection: name, &report)
        try WhereFieldTable.check(db, cid: cid, collection: name, &report)
      }
      report.checking(collection: name) { report in
        try checkViews(db, cid: cid, collection: name, &report)
      }
    }
    report.checking(collection: nil, index: "metadata") { report in
      try Database.checkMetadata(db, &report)
    }
    return report
  }

  /// One JSON index's expected entries: rid → entries (keys and values of each row).
  typealias ExpectedEntries = [Int64: Set<[IndexKeys.Entry]>]

  /// Stands for the entries of a damaged document, which are not compared.
  static let damaged: Set<[IndexKeys.Entry]> = [[IndexKeys.Entry(key: [0xFF], value: nil)]]

  /// Reads every document, reporting damaged ones, and returns the entries each JSON
  /// index of the collection should hold, in the order of `indexes`.
  static func checkDocuments(
    _ db: SQLConnection, cid: Int64, name: String, indexes: [StoredIndex],
    _ report: inout CheckReport
  ) throws -> [ExpectedEntries] {
    let json = indexes.filter { $0.definition.kind == .json }
    var expected = Array(repeating: ExpectedEntries(), count: json.count)
    let rows = try Row.fetchCursor(
      db, sql: "SELECT rid, id, rev, deleted, body FROM documents WHERE cid = ?", arguments: [cid])
    while let row = try rows.next() {
      report.documents += 1
      let rid: Int64 = try row.value(0)
      let id: String = try row.value(1)
      let deleted: Bool = try row.value(3)
      do {
        let rev = try DocumentReader.storedRevision(try row.value(2), documentID: id)
        let body = try DocumentReader.parseBody(row, at: 4, documentID: id)
        if deleted { continue }
        let document = JSON.object(Document(id: id, rev: rev, body: body).json)
        for (position, index) in json.enumerated() {
          let entries = try index.rows(document)
          if !entries.isEmpty { expected[position][rid] = Set(entries) }
        }
      } catch let error as SetteeError {
        report.add(.init(collection: name, documentID: id, message: error.message))
        // What its entries should be is unknown: they are not compared.
        for position in expected.indices { expected[position][rid] = damaged }
      }
    }
    return expected
  }

  /// Compares a JSON index's stored entries with what its documents should put there.
  static func checkEntries(
    _ db: SQLConnection, _ index: StoredIndex, collection: String, expected: ExpectedEntries,
    _ report: inout CheckReport
  ) throws {
    let count = index.definition.fields.count
    let columns =
      (0..<count).map { StoredIndex.keyColumn($0) }
      + (0..<count).map { StoredIndex.valueColumn($0) }
    let sql =
      SQLFragment("SELECT rid, id, ") + .joined(columns, separator: ", ") + SQLFragment(" FROM ")
      + index.table
    var stored: [Int64: Set<[IndexKeys.Entry]>] = [:]
    var ids: [Int64: String] = [:]
    var multiEntryDocuments = 0
    let rows = try Row.fetchCursor(db, sql: sql.text)
    while let row = try rows.next() {
      report.indexEntries += 1
      let rid: Int64 = try row.value(0)
      ids[rid] = try row.value(1)
      var entries: [IndexKeys.Entry] = []
      for position in 0..<count {
        let key = [UInt8]((try row.value(2 + position) as Data?) ?? Data())
        let text: String? = try row.value(2 + count + position)
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
    where stored[rid] != expected[rid] && expected[rid] != damaged {
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

  /// A TEXT index holds one row per live document, and none for others.
  static func checkText(
    _ db: SQLConnection, _ index: StoredIndex, cid: Int64, collection: String,
    _ report: inout CheckReport
  ) throws {
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
