import GRDB
import SetteeCore

/// One answer of ``DocumentCollection/openRevisionTexts(_:latest:)``: a revision as the JSON
/// text of ``OpenRevision/found(_:)``'s document, or one that is not a stored leaf.
package enum OpenRevisionText: Sendable, Hashable {
  case found([UInt8])
  case missing(RevisionID)
}

extension DocumentCollection {
  /// ``openRevisions(_:latest:)-4ddg1`` as JSON text, what the server's `_bulk_get` and the
  /// replicator send: the same bytes `JSONWriter` prints of those answers. The revision a
  /// replication asks for is usually a document's only leaf, without attachments: its
  /// stored body is then checked (``JSONValidator``, no JSON values made) and copied into
  /// the answer; any other is read and printed as ``openRevisions(_:latest:)-4ddg1`` reads
  /// it, and a stored body that does not check is left to that path too, which reports it
  /// as damage.
  package func openRevisionTexts(_ requests: [RevisionsRequest], latest: Bool = false)
    async throws -> [[OpenRevisionText]]
  {
    let missing = requests.map { $0.revs.map { $0.map(OpenRevisionText.missing) } ?? [] }
    let operation = inCollection(missing) { db, cid in
      try requests.map { request in
        if let text = try Self.plainRevisionText(db, cid: cid, request) { return [.found(text)] }
        return try Self.openRevisions(db, cid: cid, request, latest: latest).map { answer in
          switch answer {
          case .found(let document): .found(JSONWriter.bytes(.object(document)))
          case .missing(let rev): .missing(rev)
          }
        }
      }
    }
    return try await database.withConnection(.reading) { try self.database.read(operation) }
  }

  /// The text of the one revision `request` asks for when it is the document's only leaf
  /// and holds no attachments, and the request asks for nothing but `_revisions`; `nil`
  /// otherwise (the general path answers).
  static func plainRevisionText(_ db: SQLConnection, cid: Int64, _ request: RevisionsRequest)
    throws -> [UInt8]?
  {
    let options = request.options
    guard let revs = request.revs, revs.count == 1, !options.revsInfo, !options.conflicts,
      !options.deletedConflicts, !Names.containsNUL(request.id)
    else { return nil }
    let rev = revs[0]
    let found = try DocumentReader.winnerRow(db, cid: cid, id: request.id).first {
      row -> (deleted: Bool, rid: Int64, body: [UInt8])? in
      guard row.int64(4) == 0 && row.int64(5) == 0, row.string(0) == rev.description else {
        return nil
      }
      let body = row.bytes(2)
      guard JSONValidator.isObject(body, maxDepth: Database.Configuration.maxNestingDepth) else {
        return nil
      }
      return (deleted: row.int64(1) != 0, rid: row.int64(3), body: Array(body))
    }
    guard let row = found ?? nil else { return nil }
    var text = row.body.withUnsafeBufferPointer { body in
      DocumentReader.documentText(
        id: request.id, rev: rev.description, deleted: row.deleted, body: body,
        reserving: request.id.utf8.count + 300)
    }
    // What follows closes the object.
    text.removeLast()
    if options.revs {
      let ancestry =
        rev.generation == 1
        ? [rev]
        : try StoredTree.load(
          db, rid: row.rid, id: request.id, winner: rev, deleted: row.deleted, seq: 0
        ).ancestry(of: rev)
      // `{"start":N,"ids":[…]}`, printed as JSONWriter prints it, without making it.
      text += #","_revisions":{"start":"#.utf8
      text += String(rev.generation).utf8
      text += #","ids":["#.utf8
      for (index, ancestor) in ancestry.enumerated() {
        if index > 0 { text.append(UInt8(ascii: ",")) }
        JSONWriter.writeString(ancestor.digest, into: &text)
      }
      text += "]}".utf8
    }
    text.append(UInt8(ascii: "}"))
    return text
  }

  /// The winning revision as the JSON text ``document(_:_:)-2o8gj`` answers with no options
  /// (`{"_id":…,"_rev":…` and the body's members), and that revision, made from the stored
  /// body without parsing it: what the server's `GET /{db}/{docid}` sends. `nil` when that
  /// answer is not this text (the general path then answers): the document is missing or
  /// deleted, it holds attachments, or its stored body or revision does not check, which
  /// the general path reports as damage.
  package func winnerText(_ id: String) async throws -> (text: [UInt8], rev: String)? {
    let operation = inCollection(nil) { db, cid in try Self.winnerText(db, cid: cid, id: id) }
    return try await database.briefRead(operation)
  }

  /// ``winnerText(_:)`` read from `db`.
  static func winnerText(_ db: SQLConnection, cid: Int64, id: String) throws
    -> (text: [UInt8], rev: String)?
  {
    if Names.containsNUL(id) { return nil }
    let found = try DocumentReader.winnerRow(db, cid: cid, id: id).first {
      row -> (text: [UInt8], rev: String)? in
      let rev = row.string(0)
      guard row.int64(1) == 0, row.int64(5) == 0, RevisionID(rev) != nil else { return nil }
      let body = row.bytes(2)
      guard JSONValidator.isObject(body, maxDepth: Database.Configuration.maxNestingDepth) else {
        return nil
      }
      return (DocumentReader.documentText(id: id, rev: rev, body: body), rev)
    }
    return found ?? nil
  }
}
