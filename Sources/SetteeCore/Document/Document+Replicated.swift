extension Document {
  /// Members a document read from CouchDB may carry that describe its revision rather
  /// than hold data; a write ignores them, as CouchDB does (a document read with
  /// `conflicts=true` and written back keeps working).
  package static let readOnlyMembers: Set<String> = [
    "_conflicts", "_deleted_conflicts", "_revs_info", "_local_seq",
  ]

  /// Makes a document as a peer sends it for a `new_edits: false` write: its `_rev` and
  /// `_revisions` (`{"start": N, "ids": [newest suffix, …]}`) give the revision and its
  /// ancestry, newest first. Without `_revisions` the history is the revision alone.
  ///
  /// - Throws: ``SetteeError`` with code `invalidRevision` when there is no revision, when
  ///   `_revisions` is malformed (a start below 1 or below the number of ids, an id that is
  ///   not a revision suffix), or when `_rev` is not its newest revision; and as
  ///   ``init(validating:limits:)``.
  package static func replicated(validating json: JSON, limits: DocumentLimits = .default) throws
    -> (document: Document, history: [RevisionID])
  {
    guard case .object(var object) = json else {
      return (try Document(validating: json, limits: limits), [])
    }
    let revisions = object.removeValue(forKey: "_revisions")
    let document = try Document(validating: .object(object), limits: limits)
    var history: [RevisionID]
    if let revisions {
      history = try parseRevisions(revisions, documentID: document.id)
      if let rev = document.rev, rev != history[0] {
        throw SetteeError(
          .invalidRevision,
          "_rev \(rev) is not the newest revision of _revisions, \(history[0])",
          documentID: document.id)
      }
    } else if let rev = document.rev {
      history = [rev]
    } else {
      throw SetteeError(
        .invalidRevision,
        "a new_edits=false write needs the revision it stores: _rev or _revisions",
        documentID: document.id)
    }
    var stored = document
    stored.rev = history[0]
    return (stored, history)
  }

  /// `_revisions` as revisions, newest first.
  ///
  /// - Throws: ``SetteeError`` with code `invalidRevision` naming what is wrong.
  package static func parseRevisions(_ json: JSON, documentID: String) throws -> [RevisionID] {
    func refuse(_ problem: String) -> SetteeError {
      SetteeError(
        .invalidRevision, "_revisions \(problem); expected {\"start\": N, \"ids\": [suffix, …]}",
        documentID: documentID)
    }
    guard case .object(let object) = json else { throw refuse("is \(json.typeName)") }
    guard case .int(let startNumber)? = object["start"], let start = Int(exactly: startNumber)
    else { throw refuse("has no integer start") }
    guard case .array(let ids)? = object["ids"], !ids.isEmpty else {
      throw refuse("has no ids")
    }
    guard start >= ids.count else {
      throw refuse("starts at \(start) with \(ids.count) ids, which would reach below generation 1")
    }
    return try ids.enumerated().map { offset, id in
      guard case .string(let suffix) = id, let rev = RevisionID("\(start - offset)-\(suffix)")
      else { throw refuse("id \(offset) is not a revision suffix") }
      return rev
    }
  }
}
