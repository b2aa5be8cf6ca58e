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
      try AttachmentStore.remove(db, rid: rid, revs: leavesBefore + Array(tree.stemmed))
      try db.cachedStatement(sql: "DELETE FROM revisions WHERE rid = ?").execute(arguments: [rid])
      try db.cachedStatement(sql: "DELETE FROM documents WHERE rid = ?").execute(arguments: [rid])
      count(from: deleted, to: nil)
      try SecondaryIndexes.forget(db, cid: cid, documentID: id)
      return purged
    }
    let winnerBody =
      newWinner == winner
      ? nil : try StoredTree.losingLeafBody(db, rid: rid, rev: newWinner, id: id)
    let old = StoredWinner(rid: rid, rev: winner, deleted: deleted, seq: 0, body: previous?.body)
    try writeRows(
      tree, rid: rid, written: winner, body: [], winner: old, leavesBefore: leavesBefore)
    try AttachmentStore.remove(db, rid: rid, revs: purged)
    try AttachmentStore.flag(db, rid: rid)
    lastSeq += 1
    try storeWinner(tree, id: id, seq: lastSeq, replacing: old, body: winnerBody, parsed: nil)
    return purged
  }
}
