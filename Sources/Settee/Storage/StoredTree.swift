import GRDB
import SetteeCore

/// A document's revision tree as its rows hold it, loaded by a write that changes the tree
/// beyond its trunk (a document with branches, a graft of a peer's revisions, a history
/// past the collection's `revs_limit`) and by the reads that show branches.
///
/// It is the stored counterpart of `RevisionTree`, the in-memory reference, kept apart
/// from it on purpose: the differential test (`StoredTreeTests`) runs both over random
/// histories, so this one is written against rows (which exist, which change) and the
/// reference against the rules alone.
struct StoredTree {
  /// One revision: its parent (`nil` for a root, maybe a stemmed one), deletion flag,
  /// the sequence number it was written at, and whether its row holds a body.
  struct Node {
    var parent: RevisionID?
    var deleted: Bool
    var seq: Int64
    var hasBody: Bool
  }

  private(set) var nodes: [RevisionID: Node] = [:]
  /// Revisions without a row: the document's only revision (kept in `documents` alone, see
  /// ``Schema``) and the revisions a write adds.
  private(set) var unstored: Set<RevisionID> = []
  /// Stored revisions whose parent a graft set.
  private(set) var regrafted: Set<RevisionID> = []
  /// Stored revisions that stemming (or a purge) removed.
  private(set) var stemmed: Set<RevisionID> = []

  /// Loads the tree of the document whose row is `rid` and whose winning revision (in
  /// `documents`) is `winner`.
  ///
  /// - Throws: ``SetteeError`` with code `corruption` for a revision id that does not read
  ///   back.
  static func load(
    _ db: SQLConnection, rid: Int64, id: String, winner: RevisionID, deleted: Bool, seq: Int64
  ) throws -> StoredTree {
    var tree = StoredTree()
    let rows = try Row.fetchCursor(
      db.cachedStatement(
        sql: "SELECT rev, parent, deleted, seq, body IS NOT NULL FROM revisions WHERE rid = ?"),
      arguments: [rid])
    while let row = try rows.next() {
      let parent: String? = try row.value(1)
      tree.nodes[try DocumentReader.storedRevision(try row.value(0), documentID: id)] = Node(
        parent: try parent.map { try DocumentReader.storedRevision($0, documentID: id) },
        deleted: try row.value(2), seq: try row.value(3), hasBody: try row.value(4))
    }
    if tree.nodes[winner] == nil {
      tree.nodes[winner] = Node(parent: nil, deleted: deleted, seq: seq, hasBody: false)
      tree.unstored.insert(winner)
    }
    return tree
  }

  func contains(_ rev: RevisionID) -> Bool { nodes[rev] != nil }

  /// The leaves, the winner first: live before deleted, then the greater revision (the
  /// rule of SPEC section 7, which every replica applies alike).
  var leaves: [RevisionID] {
    var inner = Set<RevisionID>(minimumCapacity: nodes.count)
    for node in nodes.values { if let parent = node.parent { inner.insert(parent) } }
    // Sorted with each leaf's deletion at hand: looking it up in `nodes` at every
    // comparison made a document of 200 leaves take seconds to replicate.
    var found: [(rev: RevisionID, deleted: Bool)] = []
    for (rev, node) in nodes where !inner.contains(rev) { found.append((rev, node.deleted)) }
    found.sort { lhs, rhs in
      if lhs.deleted != rhs.deleted { return !lhs.deleted }
      return rhs.rev < lhs.rev
    }
    return found.map(\.rev)
  }

  /// How many of the leaves that do not win are live and how many deleted: what
  /// `documents.conflicts` and `deleted_conflicts` record.
  var losingLeafCounts: (live: Int64, deleted: Int64) {
    let losers = leaves.dropFirst()
    let live = losers.filter { !nodes[$0]!.deleted }.count
    return (Int64(live), Int64(losers.count - live))
  }

  /// The body a losing leaf's row keeps, as stored.
  ///
  /// - Throws: ``SetteeError`` with code `corruption`, naming the document, when it has none.
  static func losingLeafBody(_ db: SQLConnection, rid: Int64, rev: RevisionID, id: String) throws
    -> [UInt8]
  {
    guard
      let text = try String.fetchOne(
        db.cachedStatement(sql: "SELECT body FROM revisions WHERE rid = ? AND rev = ?"),
        arguments: [rid, rev.description])
    else { throw DocumentReader.damaged(id, "its losing leaf \(rev) has no body") }
    return Array(text.utf8)
  }

  /// `rev` and its stored ancestors, newest first.
  func ancestry(of rev: RevisionID) -> [RevisionID] {
    var path: [RevisionID] = []
    var next: RevisionID? = contains(rev) ? rev : nil
    while let current = next, path.count <= nodes.count {
      path.append(current)
      next = nodes[current]?.parent
    }
    return path
  }

  /// `leaves` in the order CouchDB lists a document's leaves (`open_revs=all`,
  /// `_bulk_get` without `rev`): depth first through each tree, siblings in revision
  /// order, and the trees (roots, stemmed ones included) from the greatest root down, as
  /// CouchDB's key tree gives them.
  func inCouchDBOrder(_ leaves: [RevisionID]) -> [RevisionID] {
    let paths = leaves.map { leaf in (leaf, Array(ancestry(of: leaf).reversed())) }
    return paths.sorted { lhs, rhs in
      guard let left = lhs.1.first, let right = rhs.1.first else { return false }
      if left != right { return right < left }
      return lhs.1.lexicographicallyPrecedes(rhs.1)
    }.map(\.0)
  }

  /// Adds a path of revisions, newest first (generations falling by one, checked by the
  /// caller): each revision the tree lacks is added with its parent from the path, and a
  /// root that the path gives a parent is grafted onto it. `deleted` is the newest
  /// revision's flag; ancestors the tree lacks are live (a peer sends only its leaf's).
  mutating func add(path: [RevisionID], deleted: Bool, seq: Int64) {
    for position in path.indices.reversed() {
      let rev = path[position]
      let parent = position + 1 < path.count ? path[position + 1] : nil
      if var node = nodes[rev] {
        if node.parent == nil, let parent {
          node.parent = parent
          nodes[rev] = node
          if !unstored.contains(rev) { regrafted.insert(rev) }
        }
      } else {
        nodes[rev] = Node(
          parent: parent, deleted: position == 0 && deleted, seq: seq, hasBody: false)
        unstored.insert(rev)
      }
    }
  }

  /// Keeps the newest `limit` revisions of every path from a leaf (CouchDB's stemming);
  /// the leaves stay, so the winner does.
  mutating func stem(limit: Int) {
    guard limit >= 1 else { return }
    var kept: Set<RevisionID> = []
    for leaf in leaves { kept.formUnion(ancestry(of: leaf).prefix(limit)) }
    for rev in Array(nodes.keys) where !kept.contains(rev) {
      nodes[rev] = nil
      regrafted.remove(rev)
      if unstored.remove(rev) == nil { stemmed.insert(rev) }
    }
    for (rev, node) in nodes {
      if let parent = node.parent, !kept.contains(parent) {
        nodes[rev]!.parent = nil
        if !unstored.contains(rev) { regrafted.insert(rev) }
      }
    }
  }

  /// Removes a leaf and every ancestor no other leaf descends from (CouchDB's purge of a
  /// branch); the removed revisions that had rows are recorded in ``stemmed``.
  mutating func purge(_ leaf: RevisionID) {
    var children: [RevisionID: Int] = [:]
    for node in nodes.values { if let parent = node.parent { children[parent, default: 0] += 1 } }
    var next: RevisionID? = leaf
    while let rev = next, let node = nodes[rev], children[rev, default: 0] == 0 {
      nodes[rev] = nil
      regrafted.remove(rev)
      if unstored.remove(rev) == nil { stemmed.insert(rev) }
      next = node.parent
      if let parent = node.parent { children[parent, default: 0] -= 1 }
    }
  }

  /// Marks whether a revision's row holds a body.
  mutating func setHasBody(_ rev: RevisionID, _ hasBody: Bool) {
    nodes[rev]?.hasBody = hasBody
  }
}
