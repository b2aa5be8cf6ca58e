import GRDB
import SetteeCore

extension DocumentWriter {
  /// Purges leaves of a document (CouchDB's `_purge`): each leaf of `revs` goes with every
  /// ancestor no other leaf descends from, bodies and attachments included. When no leaf
  /// is left the document goes for good: no tombstone, no entry in the changes feed, and
  /// every index forgets it. Otherwise the winner is chosen again among the leaves left,
  /// and the document gets a new sequence number. Revisions that are not leaves are left
  /// alone, as CouchDB leaves them.
  ///
  /// - Returns: the leaves purged, in the order asked.
  mutating func purge(id: String, revs: [RevisionID]) throws -> [RevisionID] {
    guard
      let row = try Row.fetchOne(
        db.cachedStatement(
          sql: "SELECT rid, rev, deleted, seq, body FROM documents WHERE cid = ? AND id = ?"),
        arguments: [cid, id])
    else { return [] }
    let rid: Int64 = try row.value(0)
    let winner = try DocumentReader.storedRevision(try row.value(1), documentID: id)
    let deleted: Bool = try row.value(2)
    let previous =
      deleted
      ? nil
      : Document(
        id: id, rev: winner, body: try DocumentReader.parseBody(row, at: 4, documentID: id))
    var tree = try StoredTree.load(
      db, rid: rid, id: id, winner: winner, deleted: deleted, seq: try row.value(3))
    let leavesBefore = tree.leaves
    var purged: [RevisionID] = []
    for rev in revs where leavesBefore.contains(rev) && !purged.contains(rev) {
      purged.append(rev)
      tree.purge(rev)
    }
    guard !purged.isEmpty else { return [] }
    let leaves = tree.leaves
    guard let newWinner = leaves.first else {
      // No leaf left: the document goes, from every index too.
      if previous != nil {
        try indexes.update(
          rid: rid, document: Document(id: id, rev: winner, isDeleted: true), isNew: false,
          previous: previous)
      }
      try AttachmentStore.remove(db, rid: rid, revs: leavesBefore)
      try db.cachedStatement(sql: "DELETE FROM revisions WHERE rid = ?").execute(arguments: [rid])
      try db.cachedStatement(sql: "DELETE FROM documents WHERE rid = ?").execute(arguments: [rid])
      try SecondaryIndexes.forget(db, cid: cid, documentID: id)
      return purged
    }
    let winnerDeleted = tree.nodes[newWinner]!.deleted
    let winnerBody = newWinner == winner ? nil : try storedBody(rid: rid, rev: newWinner)
    let old = StoredWinner(rid: rid, rev: winner, deleted: deleted, seq: 0, body: nil)
    try writeRows(tree, rid: rid, written: winner, body: [], winner: old)
    try AttachmentStore.remove(db, rid: rid, revs: purged)
    try AttachmentStore.flag(db, rid: rid)
    lastSeq += 1
    let live = Int64(leaves.dropFirst().filter { !tree.nodes[$0]!.deleted }.count)
    let deletedLeaves = Int64(leaves.count - 1) - live
    if let winnerBody {
      try db.cachedStatement(
        sql: """
          UPDATE documents SET rev = ?, deleted = ?, seq = ?, body = ?, conflicts = ?,
            deleted_conflicts = ? WHERE rid = ?
          """
      ).execute(arguments: [
        newWinner.description, winnerDeleted, lastSeq, String(decoding: winnerBody, as: UTF8.self),
        live, deletedLeaves, rid,
      ])
      let body = try winnerBody.withUnsafeBufferPointer {
        try DocumentReader.parseBody($0, documentID: id)
      }
      try indexes.update(
        rid: rid, document: Document(id: id, rev: newWinner, isDeleted: winnerDeleted, body: body),
        isNew: deleted, previous: previous)
    } else {
      try db.cachedStatement(
        sql: "UPDATE documents SET seq = ?, conflicts = ?, deleted_conflicts = ? WHERE rid = ?"
      ).execute(arguments: [lastSeq, live, deletedLeaves, rid])
    }
    return purged
  }
}
