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
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
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
        var checkers: [any IndexChecker] = []
        for kind in SecondaryIndexes.kinds {
          report.checking(collection: name) { report in
            checkers += try kind.checkers(
              db, self, cid: cid, collection: name, indexes: indexes)
          }
        }
        try Database.checkDocuments(db, cid: cid, name: name, &checkers, &report)
        for checker in checkers {
          report.checking(collection: name, index: checker.label) { report in
            try checker.finish(&report)
          }
        }
      }
      report.checking(collection: name) { report in
        try Database.checkSequences(db, cid: cid, collection: name, &report)
      }
      report.checking(collection: name, index: "local documents") { report in
        try Database.checkLocalDocuments(db, cid: cid, collection: name, &report)
      }
    }
    report.checking(collection: nil, index: "metadata") { report in
      try Database.checkMetadata(db, &report)
    }
    report.checking(collection: nil, index: "attachments") { report in
      try Database.checkAttachments(db, &report)
    }
    return report
  }

  /// One JSON index's expected entries: rid → entries (keys and values of each row).
  typealias ExpectedEntries = [Int64: Set<[IndexKeys.Entry]>]

  /// Stands for the entries of a damaged document, which are not compared.
  static let damaged: Set<[IndexKeys.Entry]> = [[IndexKeys.Entry(key: [0xFF], value: nil)]]

  /// Reads every document once, reporting damaged ones, and shows each live one (or the
  /// damaged ones, as `nil`) to every checker.
  static func checkDocuments(
    _ db: SQLConnection, cid: Int64, name: String, _ checkers: inout [any IndexChecker],
    _ report: inout CheckReport
  ) throws {
    let rows = try Row.fetchCursor(
      db, sql: "SELECT rid, id, rev, deleted, body FROM documents WHERE cid = ?", arguments: [cid])
    while let row = try rows.next() {
      report.documents += 1
      let rid: Int64 = try row.value(0)
      let id: String = try row.value(1)
      let deleted: Bool = try row.value(3)
      let document: JSON
      do {
        let rev = try DocumentReader.storedRevision(try row.value(2), documentID: id)
        let body = try DocumentReader.parseBody(row, at: 4, documentID: id)
        if deleted { continue }
        document = .object(Document(id: id, rev: rev, body: body).json)
      } catch let error as SetteeError {
        report.add(.init(collection: name, documentID: id, message: error.message))
        // What its entries should be is unknown: they are not compared.
        for position in checkers.indices { try checkers[position].see(rid: rid, document: nil) }
        continue
      }
      for position in checkers.indices { try checkers[position].see(rid: rid, document: document) }
    }
  }
}

// The async twins: the same calls without blocking the caller's thread.
extension Database {
  /// Checks the whole file (``check()-854zx``), without blocking the caller's thread.
  public func check() async throws -> CheckReport {
    try await withConnection(.reading) { try self.check() }
  }
}
