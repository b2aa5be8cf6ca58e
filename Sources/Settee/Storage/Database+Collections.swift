import GRDB
import SetteeCore

// Collections made and deleted on purpose, as CouchDB's `PUT /{db}` and `DELETE /{db}` do
// (a collection is otherwise made by its first write and never goes away).
extension Database {
  /// Whether the collection exists: it was written to, or made by
  /// ``createCollection(_:)-1mxck``, and not deleted since.
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func collectionExists(_ name: String) throws -> Bool {
    try read { db in try Self.exists(db, name) }
  }

  /// Whether the collection exists, without blocking the caller's thread.
  public func collectionExists(_ name: String) async throws -> Bool {
    try await withConnection(.brief) { try self.collectionExists(name) }
  }

  /// Makes an empty collection named `name` (CouchDB's `PUT /{db}`).
  ///
  /// - Returns: `true` when it is made now, `false` when it exists already.
  /// - Throws: ``SetteeError`` with code `invalidArgument` for an empty name.
  @discardableResult
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func createCollection(_ name: String) throws -> Bool {
    try write { db in
      guard !(try Self.exists(db, name)) else { return false }
      _ = try DocumentReader.ensureCollection(db, name)
      return true
    }
  }

  /// Makes an empty collection, without blocking the caller's thread.
  @discardableResult
  public func createCollection(_ name: String) async throws -> Bool {
    try checkWritable()
    return try await withConnection(.writing) { try self.createCollection(name) }
  }

  /// Deletes a collection and everything it holds: documents with their revisions and
  /// attachments, local documents, indexes of every kind, views, `where` settings and
  /// purge records (CouchDB's `DELETE /{db}`). Its sequence numbers go on from where they
  /// were when it is made again, so a sequence given out before never names a later change.
  ///
  /// - Throws: ``SetteeError`` with code `notFound` when the collection does not exist.
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func deleteCollection(_ name: String) throws {
    try write { db in
      guard try Self.exists(db, name), let cid = try DocumentReader.collectionID(db, name) else {
        throw SetteeError(
          .notFound, "no collection \(JSONWriter.string(.string(name))) to delete")
      }
      for kind in SecondaryIndexes.kinds { try kind.dropAll(db, cid: cid) }
      try AttachmentStore.removeAll(db, cid: cid)
      for sql in [
        "DELETE FROM revisions WHERE rid IN (SELECT rid FROM documents WHERE cid = ?)",
        "DELETE FROM documents WHERE cid = ?", "DELETE FROM local_documents WHERE cid = ?",
        "DELETE FROM purges WHERE cid = ?",
      ] {
        try db.execute(sql: sql, arguments: [cid])
      }
      // The deletion takes a sequence number of its own, as a write does: what was read
      // of the collection before (a change count) is then known to be out of date.
      try db.execute(
        sql: """
          UPDATE collections SET dropped = 1, holds_nul = 0, revs_limit = ?,
            last_seq = last_seq + 1, doc_count = 0, deleted_count = 0 WHERE cid = ?
          """,
        arguments: [DocumentCollection.defaultRevsLimit, cid])
    }
  }

  /// Deletes a collection, without blocking the caller's thread.
  public func deleteCollection(_ name: String) async throws {
    try checkWritable()
    try await withConnection(.writing) { try self.deleteCollection(name) }
  }

  private static func exists(_ db: SQLConnection, _ name: String) throws -> Bool {
    try DocumentReader.validateCollectionName(name)
    return try Bool.fetchOne(
      db.cachedStatement(sql: "SELECT NOT dropped FROM collections WHERE name = ?"),
      arguments: [name]) ?? false
  }
}
