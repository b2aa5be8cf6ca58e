import Foundation
import GRDB
import SetteeCore

extension Database {
  /// A collection's sequence numbers and revisions: its `last_seq` is at least every
  /// document's (a write takes the next one, which another document would already hold),
  /// its counts of live and deleted documents are those it holds,
  /// every revision id reads back, and every stored revision tree holds together
  /// (``treeProblems(_:row:id:)``).
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
    // The counts every write keeps, against the documents counted.
    let stored = try DocumentReader.counts(db, cid: cid)
    if let counted = try Row.fetchOne(
      db,
      sql:
        "SELECT count(*) FILTER (WHERE NOT deleted), count(*) FILTER (WHERE deleted) FROM documents WHERE cid = ?",
      arguments: [cid])
    {
      let (live, deleted): (Int, Int) = (try counted.value(0), try counted.value(1))
      if (live, deleted) != (stored.live, stored.deleted) {
        report.add(
          .init(
            collection: collection,
            message:
              "the collection records \(stored.live) live and \(stored.deleted) deleted documents but holds \(live) and \(deleted)"
          ))
      }
    }
    let branched = try Row.fetchCursor(
      db,
      sql: """
        SELECT d.rid, d.id, d.rev, d.deleted, d.seq, d.conflicts, d.deleted_conflicts
        FROM documents d WHERE d.cid = ? AND (d.conflicts + d.deleted_conflicts > 0
          OR EXISTS (SELECT 1 FROM revisions r WHERE r.rid = d.rid))
        """, arguments: [cid])
    while let row = try branched.next() {
      let id: String = try row.value(1)
      do {
        for problem in try treeProblems(db, row: row, id: id) {
          report.add(.init(collection: collection, documentID: id, message: problem))
        }
      } catch let error as SetteeError {
        report.add(.init(collection: collection, documentID: id, message: error.message))
      }
    }
  }

  /// What is wrong with a document's stored revision tree: a parent missing from it, a
  /// parent of another generation than its child's minus one, a winner in `documents` that is not the
  /// greatest leaf, conflict counts that differ from the leaves, a body kept for the
  /// winner (whose body is in `documents`) or none where a losing leaf needs one, a
  /// revision newer than the document's sequence number.
  private static func treeProblems(_ db: SQLConnection, row: Row, id: String) throws -> [String] {
    let rid: Int64 = try row.value(0)
    let winner = try DocumentReader.storedRevision(try row.value(2), documentID: id)
    let (deleted, seq): (Bool, Int64) = (try row.value(3), try row.value(4))
    let counts: (Int64, Int64) = (try row.value(5), try row.value(6))
    let tree = try StoredTree.load(
      db, rid: rid, id: id, winner: winner, deleted: deleted, seq: seq)
    var problems: [String] = []
    for (rev, node) in tree.nodes {
      // A stemmed history's oldest revision has no parent: a parent named must be kept.
      if let parent = node.parent, tree.nodes[parent] == nil {
        problems.append(
          "the document's history is missing revision \(parent), the parent of \(rev)")
      }
      if let parent = node.parent, parent.generation != rev.generation - 1 {
        problems.append("the document's history has revision \(rev) after \(parent)")
      }
      if node.seq > seq {
        problems.append(
          "the document's history holds revision \(rev) at sequence number \(node.seq), after the document's \(seq)"
        )
      }
    }
    let leaves = tree.leaves
    guard let best = leaves.first else { return problems }
    if best != winner || tree.nodes[best]!.deleted != deleted {
      problems.append(
        "the document's winning revision is \(winner), but its greatest leaf is \(best)")
    }
    let actual = tree.losingLeafCounts
    if counts != actual {
      problems.append(
        "the document records \(counts.0) live and \(counts.1) deleted losing leaves, but has \(actual.live) and \(actual.deleted)"
      )
    }
    // A losing leaf keeps its body in its row, a replaced revision may until compaction,
    // and the winner's is in `documents`.
    for leaf in leaves.dropFirst() where !tree.nodes[leaf]!.hasBody {
      problems.append("the document's losing leaf \(leaf) has no body")
    }
    if tree.nodes[best]!.hasBody {
      problems.append(
        "the document's history keeps a second body for its winning revision \(best)")
    }
    return problems.sorted()
  }

  /// The collection's `where` settings read back, aliases included.
  static func checkWhereSettings(
    _ db: SQLConnection, cid: Int64, collection: String, _ report: inout CheckReport
  ) throws {
    let (settings, version) = try WhereFieldTable.load(db, cid: cid)
    _ = try WhereFields(settings: settings, cid: cid, version: version)
  }

  /// Every local document's body reads back as a JSON object.
  static func checkLocalDocuments(
    _ db: SQLConnection, cid: Int64, collection: String, _ report: inout CheckReport
  ) throws {
    let rows = try Row.fetchCursor(
      db, sql: "SELECT name, rev, body FROM local_documents WHERE cid = ?", arguments: [cid])
    while let row = try rows.next() {
      do {
        _ = try LocalDocuments.document(row)
      } catch let error as SetteeError {
        report.add(
          .init(collection: collection, documentID: error.documentID, message: error.message))
      }
    }
  }

  /// Attachments: every row names a stored blob and a leaf of a document, every blob is
  /// held by a row, and its chunks hold its length and digest.
  static func checkAttachments(_ db: SQLConnection, _ report: inout CheckReport) throws {
    let orphans = try Row.fetchAll(
      db,
      sql: """
        SELECT a.name, a.rev, d.id, c.name FROM attachments a
        LEFT JOIN documents d ON d.rid = a.rid LEFT JOIN collections c ON c.cid = d.cid
        WHERE NOT EXISTS (SELECT 1 FROM attachment_blobs b WHERE b.aid = a.aid)
          OR d.rid IS NULL
          OR (d.rev != a.rev AND NOT EXISTS (
            SELECT 1 FROM revisions r WHERE r.rid = a.rid AND r.rev = a.rev AND r.body IS NOT NULL))
        """)
    for row in orphans {
      report.add(
        .init(
          collection: try row.value(3), documentID: try row.value(2),
          message:
            "attachment \(quoted(try row.value(0))) of revision \(try row.value(1) as String) names no stored blob or no leaf"
        ))
    }
    let flags = try Row.fetchAll(
      db,
      sql: """
        SELECT d.id, c.name, d.attachments FROM documents d JOIN collections c ON c.cid = d.cid
        WHERE d.attachments != EXISTS (SELECT 1 FROM attachments a WHERE a.rid = d.rid)
        """)
    for row in flags {
      let flagged: Bool = try row.value(2)
      report.add(
        .init(
          collection: try row.value(1), documentID: try row.value(0),
          message: flagged
            ? "the document is marked as holding attachments, but none of its revisions holds one"
            : "the document holds attachments, but is not marked as holding any: edits would lose them"
        ))
    }
    let blobs = try Row.fetchAll(db, sql: "SELECT aid, digest, length FROM attachment_blobs")
    for blob in blobs {
      let (aid, digest, length): (Int64, String, Int64) = (
        try blob.value(0), try blob.value(1), try blob.value(2)
      )
      guard
        try Bool.fetchOne(
          db, sql: "SELECT EXISTS (SELECT 1 FROM attachments WHERE aid = ?)", arguments: [aid])
          == true
      else {
        report.add(.init(message: "attachment blob \(digest) is held by no revision"))
        continue
      }
      var md5 = MD5()
      var read: Int64 = 0
      try AttachmentStore.read(db, aid: aid) { chunk in
        chunk.withUnsafeBytes { md5.update($0) }
        read += Int64(chunk.count)
      }
      let actual = "md5-" + Data(md5.finalize()).base64EncodedString()
      if read != length || actual != digest {
        report.add(
          .init(
            message:
              "attachment blob \(digest) is damaged: it holds \(read) bytes with digest \(actual), not \(length)"
          ))
      }
    }
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
