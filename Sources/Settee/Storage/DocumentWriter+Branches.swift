import GRDB
import SetteeCore

/// A document's row in `documents` as a write finds it: its winning revision.
struct StoredWinner {
  var rid: Int64
  var rev: RevisionID
  var deleted: Bool
  var seq: Int64
  /// The parsed body, when live and the collection's indexes need the version replaced.
  var body: JSONObject?
}

extension DocumentWriter {
  /// Writes a revision into a document's tree: an edit of any leaf (a losing one extends
  /// its branch), or a graft of a peer's revision with its `history`. The winner is chosen
  /// again among the leaves (``StoredTree/leaves``); `documents` holds it and its body,
  /// every other leaf keeps its body in `revisions`, and the indexes follow the winner.
  mutating func writeBranch(
    _ document: Document, body: [UInt8], mode: WriteMode, history: [RevisionID]?,
    existing: StoredWinner
  ) throws -> WriteResult {
    var tree = try StoredTree.load(
      db, rid: existing.rid, id: document.id, winner: existing.rev, deleted: existing.deleted,
      seq: existing.seq)
    let leavesBefore = tree.leaves
    let written: RevisionID
    let attachments: [StoredAttachment]
    if let history {
      written = history[0]
      if tree.contains(written) {
        // Present already: at most ancestry grafted onto a stemmed root, never a change a
        // reader of the leaves would see.
        tree.add(path: history, deleted: document.isDeleted, seq: existing.seq)
        tree.stem(limit: revsLimit)
        try writeRows(
          tree, rid: existing.rid, written: written, body: body, winner: existing,
          leavesBefore: leavesBefore)
        try AttachmentStore.flag(db, rid: existing.rid)
        return WriteResult(id: document.id, rev: written, seq: existing.seq)
      }
      attachments = try resolveAttachments(
        document, parent: history.count > 1 ? (existing.rid, history[1]) : nil,
        keepsParents: false, generation: written.generation, fromPeer: true,
        documentRID: existing.rid)
      tree.add(path: history, deleted: document.isDeleted, seq: lastSeq + 1)
    } else {
      let parent = try editedLeaf(document, mode: mode, tree: tree, leaves: leavesBefore)
      attachments = try resolveAttachments(
        document, parent: (existing.rid, parent), keepsParents: true,
        generation: parent.generation + 1)
      written = RevisionID.next(
        after: parent, deleted: document.isDeleted,
        body: DocumentWriter.revisionBytes(body, attachments))
      guard !tree.contains(written) else {
        throw SetteeError(
          .conflict,
          "document update conflict: \(quoted(document.id)) already holds revision \(written), the same edit of \(parent)",
          documentID: document.id)
      }
      tree.add(path: [written, parent], deleted: document.isDeleted, seq: lastSeq + 1)
    }
    tree.stem(limit: revsLimit)
    let leaves = tree.leaves
    lastSeq += 1
    let seq = lastSeq
    let winner = leaves[0]
    // The new winner's body, read before its row gives it up.
    let winnerBody: [UInt8]? =
      winner == existing.rev
      ? nil
      : winner == written
        ? body : try StoredTree.losingLeafBody(db, rid: existing.rid, rev: winner, id: document.id)
    try writeRows(
      tree, rid: existing.rid, written: written, body: body, winner: existing,
      leavesBefore: leavesBefore)
    try AttachmentStore.insert(db, rid: existing.rid, rev: written, attachments)
    try AttachmentStore.flag(db, rid: existing.rid)
    try storeWinner(
      tree, id: document.id, seq: seq, replacing: existing, body: winnerBody,
      parsed: winner == written ? document.body : nil)
    return WriteResult(id: document.id, rev: written, seq: seq)
  }

  /// Records the tree's winner in the document's row at `seq`, with its losing leaves'
  /// counts: its revision and `body` (its stored text, when the winner is not the one the
  /// row holds) and the indexes' entries for it in place of `old`'s, or, with no `body`,
  /// only the sequence number and counts. `parsed` is the new winner's body when the
  /// caller has it parsed already.
  mutating func storeWinner(
    _ tree: StoredTree, id: String, seq: Int64, replacing old: StoredWinner, body: [UInt8]?,
    parsed: JSONObject?
  ) throws {
    let counts = tree.losingLeafCounts
    guard let body else {
      try db.cachedStatement(
        sql: "UPDATE documents SET seq = ?, conflicts = ?, deleted_conflicts = ? WHERE rid = ?"
      ).execute(arguments: [seq, counts.live, counts.deleted, old.rid])
      return
    }
    let winner = tree.leaves[0]
    let deleted = tree.nodes[winner]!.deleted
    let update = try db.cachedStatement(
      sql:
        "UPDATE documents SET rev = ?, deleted = ?, seq = ?, body = ?, conflicts = ?, deleted_conflicts = ? WHERE rid = ?"
    )
    try checkingFields(id, body) {
      try update.execute(arguments: [
        winner.description, deleted, seq, String(decoding: body, as: UTF8.self), counts.live,
        counts.deleted, old.rid,
      ])
    }
    count(from: old.deleted, to: deleted)
    let document = Document(
      id: id, rev: winner, isDeleted: deleted,
      body: try parsed ?? DocumentReader.parseBody(text: body, documentID: id))
    let previous = old.body.map { Document(id: id, rev: old.rev, body: $0) }
    try indexes.update(rid: old.rid, document: document, isNew: old.deleted, previous: previous)
  }

  /// The leaf an edit extends: the one it names (any leaf, a losing one too), or for a
  /// write naming none the winner when it is deleted (or always, for an upsert).
  private func editedLeaf(
    _ document: Document, mode: WriteMode, tree: StoredTree, leaves: [RevisionID]
  ) throws -> RevisionID {
    let winner = leaves[0]
    let parent: RevisionID
    if mode == .overwrite {
      parent = winner
    } else if let given = document.rev {
      guard leaves.contains(given) else {
        throw SetteeError(
          .conflict,
          "document update conflict: \(quoted(document.id)) has no leaf revision \(given); its leaves are \(leaves.map(\.description).joined(separator: ", "))",
          documentID: document.id)
      }
      parent = given
      if tree.nodes[winner]!.deleted && !document.isDeleted {
        throw Self.tombstoneEdit(document, given)
      }
    } else if !tree.nodes[winner]!.deleted {
      throw SetteeError(
        .conflict,
        "document update conflict: \(quoted(document.id)) exists, so the write must name its current _rev \(winner)",
        documentID: document.id)
    } else {
      parent = winner
    }
    if document.isDeleted && tree.nodes[parent]!.deleted {
      throw SetteeError(
        .notFound, "document \(quoted(document.id)) is already deleted", documentID: document.id)
    }
    return parent
  }

  /// Brings the document's rows in `revisions` to `tree`: new revisions inserted (the
  /// document's only revision too, which had no row), grafted parents set, stemmed ones
  /// deleted with their attachments, and bodies kept where ``Schema`` keeps them: every
  /// leaf that does not win, every revision this write replaced (`leavesBefore` that are
  /// leaves no more: the old winner's body comes from `documents`), and older replaced
  /// ones while the collection's budget allows (``keepsOlderBodies``); a revision whose
  /// body goes loses its attachments with it.
  mutating func writeRows(
    _ tree: StoredTree, rid: Int64, written: RevisionID, body: [UInt8], winner old: StoredWinner,
    leavesBefore: [RevisionID]
  ) throws {
    let leaves = tree.leaves
    let losers = Set(leaves.dropFirst())
    let replaced = Set(leavesBefore).subtracting(leaves).filter(tree.contains)
    let keepsOlder = keepsOlderBodies
    func needsBody(_ rev: RevisionID, _ node: StoredTree.Node) -> Bool {
      if rev == leaves.first { return false }
      return losers.contains(rev) || replaced.contains(rev) || (node.hasBody && keepsOlder)
    }
    // The old winner's body, when it becomes a losing leaf or a replaced revision.
    var oldBody: String?
    if let node = tree.nodes[old.rev], needsBody(old.rev, node) {
      oldBody = try String.fetchOne(
        db.cachedStatement(sql: "SELECT body FROM documents WHERE rid = ?"), arguments: [rid])
    }
    var dropped = Array(tree.stemmed)
    for rev in tree.stemmed {
      try db.cachedStatement(sql: "DELETE FROM revisions WHERE rid = ? AND rev = ?")
        .execute(arguments: [rid, rev.description])
    }
    for rev in tree.regrafted {
      try db.cachedStatement(
        sql: "UPDATE revisions SET parent = ? WHERE rid = ? AND rev = ?"
      ).execute(arguments: [tree.nodes[rev]!.parent?.description, rid, rev.description])
    }
    for (rev, node) in tree.nodes {
      let needsBody = needsBody(rev, node)
      let bodyText: String? =
        !needsBody
        ? nil
        : rev == old.rev ? oldBody : rev == written ? String(decoding: body, as: UTF8.self) : nil
      if tree.unstored.contains(rev) {
        try db.cachedStatement(
          sql:
            "INSERT INTO revisions (rid, rev, parent, deleted, seq, body) VALUES (?, ?, ?, ?, ?, ?)"
        ).execute(arguments: [
          rid, rev.description, node.parent?.description, node.deleted, node.seq,
          bodyText ?? (needsBody ? "{}" : nil),
        ])
      } else if needsBody != node.hasBody {
        // A body arrives (the old winner's, replaced or losing) or leaves (a leaf that won,
        // an older replaced revision past the budget).
        try db.cachedStatement(sql: "UPDATE revisions SET body = ? WHERE rid = ? AND rev = ?")
          .execute(arguments: [bodyText, rid, rev.description])
        if !needsBody && rev != leaves.first { dropped.append(rev) }
      }
    }
    keptBodies(added: replaced.count)
    if !dropped.isEmpty { try AttachmentStore.remove(db, rid: rid, revs: dropped) }
  }
}
