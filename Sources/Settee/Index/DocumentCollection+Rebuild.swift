import SetteeCore

extension DocumentCollection {
  /// Rebuilds every secondary index of the collection from its documents, in one
  /// transaction: JSON and TEXT indexes are made again from their definitions, the
  /// `where` face's field tables and indexes from its settings, and views and value
  /// indexes are emptied to catch up when next queried. What repairs the index damage
  /// ``Database/check()-854zx`` reports; the documents themselves are not touched.
  ///
  /// - Throws: ``SetteeError``: `readOnly` for a database opened read-only,
  ///   `uniqueViolation` when a `where` unique index no longer holds (the documents break
  ///   it: the error names them), and storage errors.
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func rebuildIndexes() throws {
    try database.write { db in
      guard let cid = try DocumentReader.collectionID(db, name) else { return }
      try SecondaryIndexes.rebuild(db, cid: cid)
    }
  }

  /// Rebuilds every secondary index of the collection, without blocking the caller's thread.
  public func rebuildIndexes() async throws {
    try await database.withConnection(.writing) { try self.rebuildIndexes() }
  }
}

extension Database {
  /// Rebuilds every secondary index of every collection (``DocumentCollection/rebuildIndexes()-8ql1f``),
  /// one collection per transaction.
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func rebuildIndexes() throws {
    for name in try collectionNames() { try collection(name).rebuildIndexes() }
  }

  /// Rebuilds every secondary index of every collection, without blocking the caller's
  /// thread.
  public func rebuildIndexes() async throws {
    try await withConnection(.writing) { try self.rebuildIndexes() }
  }
}
