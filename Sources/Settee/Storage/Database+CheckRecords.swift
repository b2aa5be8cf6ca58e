import Foundation
import GRDB
import SetteeCore

extension Database {
  /// A collection's sequence numbers and revisions: its `last_seq` is at least every
  /// document's (a write takes the next one, which another document would already hold),
  /// every revision id reads back, and every recorded revision belongs to a document of
  /// the collection and is older than its current one.
  static func checkSequences(
    _ db: SQLConnection, cid: Int64, collection: String, _ report: inout CheckReport
  ) throws {
    let lastSeq = try DocumentReader.lastSequence(db, cid: cid)
    let highest =
      try Int64.fetchOne(
        db, sql: "SELECT max(seq) FROM documents WHERE cid = ?", arguments: [cid]) ?? 0
    if highest > lastSeq {
      report.add(
        .init(
          collection: collection,
          message:
            "the collection records sequence number \(lastSeq), behind its documents' highest, \(highest): every write would fail"
        ))
    }
    let revisions = try Row.fetchCursor(
      db,
      sql: """
        SELECT d.id, r.rev, r.seq, d.rev, d.seq FROM revisions r
        JOIN documents d ON d.rid = r.rid WHERE d.cid = ?
        """, arguments: [cid])
    while let row = try revisions.next() {
      let id: String = try row.value(0)
      do {
        let old = try DocumentReader.storedRevision(try row.value(1), documentID: id)
        let current = try DocumentReader.storedRevision(try row.value(3), documentID: id)
        let (oldSeq, currentSeq): (Int64, Int64) = (try row.value(2), try row.value(4))
        if old != current, old.generation >= current.generation || oldSeq > currentSeq {
          report.add(
            .init(
              collection: collection, documentID: id,
              message:
                "the document's history holds revision \(old), which is not older than its current \(current)"
            ))
        }
      } catch let error as SetteeError {
        report.add(.init(collection: collection, documentID: id, message: error.message))
      }
    }
  }

  /// The collection's `where` settings read back, aliases included.
  static func checkWhereSettings(
    _ db: SQLConnection, cid: Int64, collection: String, _ report: inout CheckReport
  ) throws {
    let (settings, version) = try WhereFieldTable.load(db, cid: cid)
    _ = try WhereFields(settings: settings, cid: cid, version: version)
  }

  /// Every metadata value reads back as JSON.
  static func checkMetadata(_ db: SQLConnection, _ report: inout CheckReport) throws {
    let rows = try Row.fetchCursor(db, sql: "SELECT key, value FROM metadata ORDER BY key")
    while let row = try rows.next() {
      let key: String = try row.value(0)
      do {
        _ = try StoredData.json(try row.value(1) as String, "metadata \(quoted(key))")
      } catch let error as SetteeError {
        report.add(.init(message: error.message))
      }
    }
  }
}
