import GRDB
import SetteeCore

extension DocumentCollection {
  /// Clears the bodies and attachments that replaced revisions keep (CouchDB's
  /// `_compact`). Until then an older revision reads back whole (``get(_:rev:)-9n4xe``,
  /// `_revs_info` says `available`); afterwards only leaves do. The revisions themselves
  /// stay in each document's history, so replication and conflicts are unchanged.
  ///
  /// Between compactions a collection keeps at most about as many replaced bodies as it
  /// holds documents (at least 1,000); past that each write keeps only the body it
  /// replaces (see <doc:Documents>). Compaction runs in transactions of a thousand
  /// revisions, so writers wait for one of them at most, never for the whole.
  ///
  /// ```swift
  /// let cleared = try notes.compact()  // the number of replaced revisions cleared
  /// ```
  ///
  /// - Returns: how many replaced revisions it cleared.
  @discardableResult
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func compact() throws -> Int {
    var cleared = 0
    while true {
      let batch = try database.write { db in
        guard let cid = try database.collectionID(db, name) else { return 0 }
        return try KeptBodies.compactBatch(db, cid: cid)
      }
      cleared += batch
      if batch < KeptBodies.batchSize { return cleared }
    }
  }

  /// Clears what replaced revisions keep (``compact()-6a4y8``), without blocking the
  /// caller's thread.
  @discardableResult
  public func compact() async throws -> Int {
    try await database.withConnection(.writing) { try self.compact() }
  }
}
