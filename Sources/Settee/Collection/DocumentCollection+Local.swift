import GRDB
import SetteeCore

/// A local document (CouchDB's `_local/<name>`): kept with a collection but outside its
/// documents, never in the changes feed, all-docs, queries, views or exports, and never
/// replicated. Replicators keep their checkpoints in them.
public struct LocalDocument: Sendable, Hashable {
  /// The id, `_local/<name>`.
  public var id: String
  /// The `N` of its revision `0-N`: the `N` its last write named, plus one.
  public var generation: Int64
  /// Every member but `_id` and `_rev`.
  public var body: JSONObject

  /// The revision, `0-N`.
  public var rev: String { "0-\(generation)" }

  /// CouchDB's shape: `_id`, `_rev`, then the body's members.
  public var json: JSONObject {
    JSONObject([("_id", .string(id)), ("_rev", .string(rev))] + body.map { ($0.key, $0.value) })
  }

  /// The prefix of every local document id.
  public static let idPrefix = "_local/"
}

extension DocumentCollection {
  /// The local document `id` (`_local/<name>`, or the name alone); `nil` when there is none.
  ///
  /// - Throws: ``SetteeError`` with code `invalidID` for an empty name or one holding U+0000.
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func localDocument(_ id: String) throws -> LocalDocument? {
    let name = try LocalDocuments.name(id)
    return try database.read(
      inCollection(nil) { db, cid in try LocalDocuments.read(db, cid: cid, name: name) })
  }

  /// Every local document of the collection, by id (CouchDB's `_local_docs`).
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func localDocuments() throws -> [LocalDocument] {
    try database.read(
      inCollection([]) { db, cid in
        let rows = try Row.fetchCursor(
          db.cachedStatement(
            sql: "SELECT name, rev, body FROM local_documents WHERE cid = ? ORDER BY name"),
          arguments: [cid])
        var documents: [LocalDocument] = []
        while let row = try rows.next() {
          documents.append(try LocalDocuments.document(row))
        }
        return documents
      })
  }

  /// Writes a local document given as JSON: `_id` is `_local/<name>` (or the name alone).
  /// As in CouchDB, local documents are outside revision control: the write replaces
  /// what is there and its revision is the given `_rev`'s `N` plus one (`0-1` without
  /// one); `"_deleted": true` removes the document. A `_revisions` member is ignored, as
  /// CouchDB ignores it: its replicator sends one with every checkpoint after the first.
  ///
  /// - Returns: the document as stored, with its new revision (`0-0` after a deletion,
  ///   CouchDB's answer).
  /// - Throws: ``SetteeError`` with code `invalidID`, `invalidRevision` (a `_rev` that is
  ///   not `0-N`), or a validation code for the body.
  @discardableResult
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func putLocal(_ json: JSONObject) throws -> LocalDocument {
    var body = json
    guard case .string(let id)? = body.removeValue(forKey: "_id") else {
      throw SetteeError(.invalidID, "a local document needs an _id, _local/<name>")
    }
    let name = try LocalDocuments.name(id)
    let rev = try body.removeValue(forKey: "_rev").map { try LocalDocuments.generation($0, id) }
    let deleted = body.removeValue(forKey: "_deleted") == .bool(true)
    body.removeValue(forKey: "_revisions")
    let document = try Document(validating: .object(body), limits: database.configuration.limits)
    let text = try document.encodedBody(limits: database.configuration.limits)
    let collection = self.name
    let stored = LocalDocument(
      id: LocalDocument.idPrefix + name, generation: deleted ? 0 : (rev ?? 0) + 1,
      body: deleted ? [:] : document.body)
    try database.write { db in
      let cid = try DocumentReader.ensureCollection(db, collection)
      if deleted {
        try db.execute(
          sql: "DELETE FROM local_documents WHERE cid = ? AND name = ?", arguments: [cid, name])
      } else {
        try db.execute(
          sql: "INSERT OR REPLACE INTO local_documents (cid, name, rev, body) VALUES (?, ?, ?, ?)",
          arguments: [cid, name, stored.generation, String(decoding: text, as: UTF8.self)])
      }
    }
    return stored
  }

  /// Removes a local document (nothing happens when there is none, as in CouchDB).
  ///
  /// - Throws: as ``putLocal(_:)-7wqfh``.
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func deleteLocal(_ id: String, rev: String? = nil) throws {
    var json: JSONObject = ["_id": .string(id), "_deleted": true]
    if let rev { json["_rev"] = .string(rev) }
    try putLocal(json)
  }
}

/// Reads and checks of local documents.
enum LocalDocuments {
  /// The name after `_local/` (the id may come with or without the prefix).
  static func name(_ id: String) throws -> String {
    let name = id.hasPrefix(LocalDocument.idPrefix) ? String(id.dropFirst(7)) : id
    guard !name.isEmpty else {
      throw SetteeError(.invalidID, "a local document id needs a name after _local/")
    }
    try Names.refuseNUL(name, kind: "local document id", code: .invalidID)
    return name
  }

  /// The `N` of a `0-N` revision (`0-0` is what a deletion answers), below `Int64.max`, so
  /// that the next write's `N + 1` cannot overflow.
  static func generation(_ json: JSON, _ id: String) throws -> Int64 {
    guard case .string(let text) = json, text.hasPrefix("0-"),
      let number = Int64(text.dropFirst(2)),
      number >= 0, number < Int64.max
    else {
      throw SetteeError(
        .invalidRevision,
        "a local document's _rev is 0-N with N below 2^63 - 1, not \(JSONWriter.string(json))",
        documentID: id)
    }
    return number
  }

  /// Stores a local document exactly as an export wrote it (its `0-N` kept), in the
  /// caller's write transaction.
  static func restore(_ db: SQLConnection, cid: Int64, _ json: JSONObject, limits: DocumentLimits)
    throws
  {
    var body = json
    guard case .string(let id)? = body.removeValue(forKey: "_id") else { return }
    let name = try name(id)
    let rev = try body.removeValue(forKey: "_rev").map { try generation($0, id) } ?? 1
    let document = try Document(validating: .object(body), limits: limits)
    try db.execute(
      sql: "INSERT OR REPLACE INTO local_documents (cid, name, rev, body) VALUES (?, ?, ?, ?)",
      arguments: [
        cid, name, rev, String(decoding: try document.encodedBody(limits: limits), as: UTF8.self),
      ])
  }

  static func read(_ db: SQLConnection, cid: Int64, name: String) throws -> LocalDocument? {
    guard
      let row = try Row.fetchOne(
        db.cachedStatement(
          sql: "SELECT name, rev, body FROM local_documents WHERE cid = ? AND name = ?"),
        arguments: [cid, name])
    else { return nil }
    return try document(row)
  }

  static func document(_ row: Row) throws -> LocalDocument {
    let name: String = try row.value(0)
    let id = LocalDocument.idPrefix + name
    let text: String = try row.value(2)
    let body = try DocumentReader.parseBody(text: Array(text.utf8), documentID: id)
    return LocalDocument(id: id, generation: try row.value(1), body: body)
  }
}

// The async twins.
extension DocumentCollection {
  /// A local document, without blocking the caller's thread.
  public func localDocument(_ id: String) async throws -> LocalDocument? {
    try await database.withConnection(.brief) { try self.localDocument(id) }
  }

  /// Every local document, without blocking the caller's thread.
  public func localDocuments() async throws -> [LocalDocument] {
    try await database.withConnection(.reading) { try self.localDocuments() }
  }

  /// Writes a local document, without blocking the caller's thread.
  @discardableResult
  public func putLocal(_ json: JSONObject) async throws -> LocalDocument {
    try await database.withConnection(.writing) { try self.putLocal(json) }
  }

  /// Removes a local document, without blocking the caller's thread.
  public func deleteLocal(_ id: String, rev: String? = nil) async throws {
    try await database.withConnection(.writing) { try self.deleteLocal(id, rev: rev) }
  }
}
