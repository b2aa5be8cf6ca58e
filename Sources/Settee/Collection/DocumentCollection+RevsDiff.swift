import GRDB
import SetteeCore

/// What a collection lacks of the revisions a peer offers for one document (CouchDB's
/// `_revs_diff`).
public struct RevisionDifference: Sendable, Hashable {
  /// The offered revisions the collection does not hold, in the order offered.
  public var missing: [RevisionID]
  /// The document's leaves whose generation is below the highest missing one: revisions
  /// the peer may hold as ancestors of what it sends, so it can send only what follows.
  public var possibleAncestors: [RevisionID]

  /// A difference: the missing revisions and the possible ancestors.
  public init(missing: [RevisionID], possibleAncestors: [RevisionID] = []) {
    self.missing = missing
    self.possibleAncestors = possibleAncestors
  }

  /// CouchDB's shape: `{"missing": […]}`, with `"possible_ancestors"` when there are any.
  public var json: JSON {
    var members: [(String, JSON)] = [("missing", .array(missing.map { .string($0.description) }))]
    if !possibleAncestors.isEmpty {
      members.append(
        ("possible_ancestors", .array(possibleAncestors.map { .string($0.description) })))
    }
    return .object(JSONObject(members))
  }

  /// Appends ``json`` as `JSONWriter` prints it, without making it (a `_revs_diff` answer
  /// holds one per document of a replication's batch).
  package func write(into output: inout [UInt8]) {
    output += #"{"missing":"#.utf8
    missing.writeJSON(into: &output)
    if !possibleAncestors.isEmpty {
      output += #","possible_ancestors":"#.utf8
      possibleAncestors.writeJSON(into: &output)
    }
    output.append(UInt8(ascii: "}"))
  }
}

extension DocumentCollection {
  /// CouchDB's `_revs_diff`: for each document id, the offered revisions the collection
  /// does not hold and its possible ancestors among them, read from one snapshot.
  /// Documents with nothing missing are left out, as CouchDB leaves them out; a document
  /// the collection has never held misses every revision offered.
  ///
  /// The answer comes from the stored revision tree as the reference model
  /// (`RevisionTree`) reads it, so it stays right as trees gain branches.
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func revsDiff(_ offered: [String: [RevisionID]]) throws -> [String: RevisionDifference] {
    let (name, database) = (self.name, self.database)
    return try database.read { db in
      let cid = try database.collectionID(db, name)
      let held =
        try cid.map { try DocumentReader.heldRows(db, cid: $0, among: offered.keys) } ?? [:]
      var answer: [String: RevisionDifference] = [:]
      answer.reserveCapacity(offered.count)
      for (id, revisions) in offered {
        guard let rid = held[id] else {
          // Never held: every offered revision is missing, and none can be an ancestor.
          var seen: Set<RevisionID> = []
          let missing = revisions.filter { seen.insert($0).inserted }
          if !missing.isEmpty { answer[id] = RevisionDifference(missing: missing) }
          continue
        }
        let tree = try DocumentReader.revisionTree(db, rid: rid, id: id)
        let (missing, ancestors) = tree.missing(revisions.map(\.treeRev))
        guard !missing.isEmpty else { continue }
        // The missing revisions are offered ones: mapped back, not parsed again.
        var byTreeRev: [RevisionTree.Rev: RevisionID] = [:]
        for revision in revisions { byTreeRev[revision.treeRev] = revision }
        // CouchDB lists a held document's missing revisions by generation, then digest (a
        // document it never held keeps the order they were offered in), and its possible
        // ancestors in the winner's order.
        answer[id] = RevisionDifference(
          missing: try missing.map { try byTreeRev[$0] ?? RevisionID(parsing: $0.description) }
            .sorted(),
          possibleAncestors: try ancestors.map { try RevisionID(parsing: $0.description) })
      }
      return answer
    }
  }

  /// CouchDB's `_revs_diff`, without blocking the caller's thread.
  public func revsDiff(_ offered: [String: [RevisionID]]) async throws
    -> [String: RevisionDifference]
  {
    try await database.withConnection(.reading) { try self.revsDiff(offered) }
  }
}

extension RevisionID {
  /// The same revision in the reference tree's terms (every RevisionID is one).
  var treeRev: RevisionTree.Rev {
    RevisionTree.Rev(generation: generation, suffix: digest)
  }
}

extension DocumentReader {
  /// The row ids of those of `ids` the collection holds (live, deleted or in conflict),
  /// in one statement whatever their number (the ids travel as one JSON array, read by
  /// `json_each`).
  static func heldRows(_ db: SQLConnection, cid: Int64, among ids: some Collection<String>)
    throws -> [String: Int64]
  {
    guard !ids.isEmpty else { return [:] }
    let list = JSONWriter.string(.array(ids.map(JSON.string)))
    let rows = try Row.fetchCursor(
      db.cachedStatement(
        sql:
          "SELECT id, rid FROM documents WHERE cid = ? AND id IN (SELECT value FROM json_each(?))"),
      arguments: [cid, list])
    var held: [String: Int64] = [:]
    while let row = try rows.next() { held[row[0]] = row[1] }
    return held
  }

  /// The stored revision tree of the document whose row is `rid`.
  static func revisionTree(_ db: SQLConnection, rid: Int64, id: String) throws -> RevisionTree {
    var tree = RevisionTree()
    for revision in try revisions(db, rid: rid, id: id) {
      let path = [revision.rev.treeRev] + (revision.parent.map { [$0.treeRev] } ?? [])
      guard tree.insert(path: path, deleted: revision.isDeleted) != nil else {
        throw SetteeError(
          .corruption,
          "the database file is damaged: the revision history of \(quoted(id)) has \(revision.rev) after \(revision.parent.map { "\($0)" } ?? "nothing")",
          documentID: id)
      }
    }
    return tree
  }
}
