import GRDB
import SetteeCore

/// A named set of documents in a ``Database``, with CouchDB's revision rules.
///
/// Collection handles are cheap values; a collection comes into being with its first write.
///
/// ```swift
/// let people = db.collection("people")
/// let created = try people.put(["_id": "mike", "age": 12])
/// try people.put(["_id": "mike", "_rev": .string(created.rev.description), "age": 13])
/// ```
public struct DocumentCollection: Sendable {
  /// The database the collection lives in.
  public let database: Database
  /// The collection name.
  public let name: String

  // MARK: - Writing

  /// Creates or updates a document given as JSON.
  ///
  /// Without `_id` the document gets a new random id. Updating an existing document needs
  /// its current `_rev`; `"_deleted": true` deletes it.
  ///
  /// - Throws: ``SetteeError`` with code `conflict` when `_rev` is not the current
  ///   revision (nothing is written), or a validation code for bad input.
  @discardableResult
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func put(_ json: JSONObject) throws -> WriteResult {
    try putAll([json])[0]
  }

  /// Creates or updates a document.
  @discardableResult
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func put(_ document: Document) throws -> WriteResult {
    try write([document], mode: .edit)[0]
  }

  /// Writes several documents in one transaction: all of them or, on any error, none.
  ///
  /// - Throws: ``SetteeError`` whose location names the offending record (0-based).
  /// - Complexity: O(n) statements in one transaction.
  @discardableResult
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func putAll(_ documents: [JSONObject]) throws -> [WriteResult] {
    try write(validate(documents), mode: .edit)
  }

  /// Creates a document or replaces whatever revision of it is current, without naming a
  /// revision (MongoDB's upsert; Couchbase Lite's last-write-wins save). The new revision
  /// descends from the replaced one, so history and replication hold; an edit another
  /// writer made in between is overwritten, which is the point of an upsert and the
  /// reason `put` asks for `_rev`.
  ///
  /// ```swift
  /// try people.upsert(["_id": "mike", "age": 12])   // creates
  /// try people.upsert(["_id": "mike", "age": 13])   // replaces, no _rev needed
  /// ```
  ///
  /// - Throws: a validation code for bad input (a `_rev` member is ignored).
  @discardableResult
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func upsert(_ json: JSONObject) throws -> WriteResult {
    try write(validate([json]), mode: .overwrite)[0]
  }

  /// Deletes a document, leaving a tombstone revision.
  ///
  /// - Throws: ``SetteeError`` with code `conflict` when `rev` is not current, `notFound`
  ///   when the document does not exist or is already deleted.
  @discardableResult
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func delete(_ id: String, rev: RevisionID) throws -> WriteResult {
    try write([Document(id: id, rev: rev, isDeleted: true)], mode: .edit)[0]
  }

  /// Deletes a document given its revision as text (as a `Codable` type holds `_rev`).
  ///
  /// - Throws: ``SetteeError`` with code `invalidRevision` when `rev` is not a revision,
  ///   and as ``delete(_:rev:)-4mi6e``.
  @discardableResult
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func delete(_ id: String, rev: String) throws -> WriteResult {
    try delete(id, rev: RevisionID(parsing: rev))
  }

  /// Deletes a stored document by its id and revision.
  ///
  /// - Throws: ``SetteeError`` with code `invalidRevision` for a document without one (not
  ///   read from the database), and as ``delete(_:rev:)-4mi6e``.
  @discardableResult
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func delete(_ document: Document) throws -> WriteResult {
    guard let rev = document.rev else {
      throw SetteeError(
        .invalidRevision,
        "document \(quoted(document.id)) has no revision: delete a document read from the collection",
        documentID: document.id)
    }
    return try delete(document.id, rev: rev)
  }

  func write(_ documents: [Document], mode: WriteMode) throws -> [WriteResult] {
    try database.write(writeOperation(documents, mode: mode))
  }

  func validate(_ documents: [JSONObject]) throws -> [Document] {
    let limits = database.configuration.limits
    var validated: [Document] = []
    validated.reserveCapacity(documents.count)
    for (index, json) in documents.enumerated() {
      do {
        validated.append(try Document(validating: .object(json), limits: limits))
      } catch let error as SetteeError where documents.count > 1 {
        throw error.at(record: index)
      }
    }
    return validated
  }

  func writeOperation(_ documents: [Document], mode: WriteMode)
    -> @Sendable (SQLConnection) throws -> [WriteResult]
  {
    writeOperation(documents) { writer, document in try writer.write(document, mode: mode) }
  }

  /// A write transaction running `write` for each item in order with one writer: all of
  /// them or, on any error (naming the item's place when there are several), none.
  func writeOperation<Item: Sendable>(
    _ items: [Item],
    _ write: @escaping @Sendable (inout DocumentWriter, Item) throws -> WriteResult
  ) -> @Sendable (SQLConnection) throws -> [WriteResult] {
    let name = self.name
    return { db in
      var writer = try DocumentWriter(db: db, collection: name, in: database)
      var results: [WriteResult] = []
      results.reserveCapacity(items.count)
      for (index, item) in items.enumerated() {
        do {
          results.append(try write(&writer, item))
        } catch let error as SetteeError where items.count > 1 {
          throw error.at(record: index)
        }
      }
      try writer.finish()
      return results
    }
  }

  // MARK: - Reading

  /// The current revision of a live document; `nil` when missing or deleted.
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func get(_ id: String) throws -> Document? {
    try get([id])[0]
  }

  /// Several documents read from one consistent snapshot, in the order of `ids`.
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func get(_ ids: [String]) throws -> [Document?] {
    try database.read(getOperation(ids))
  }

  /// Several documents read from one consistent snapshot, in the order of `ids`, each
  /// with its revision's attachments as `attachments` lists them (what a changes feed
  /// with its documents shows; plain `get` leaves ``Document/attachments`` `nil`).
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func get(_ ids: [String], attachments: AttachmentListing) throws -> [Document?] {
    try database.read(getOperation(ids, attachments: attachments))
  }

  /// The winning revision of a document, tombstones included (`isDeleted` tells).
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func getRevision(_ id: String) throws -> Document? {
    try database.read(
      inCollection(nil) { db, cid in try DocumentReader.document(db, cid: cid, id: id) })
  }

  /// Every revision of a document, oldest first (its history); empty when unknown.
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func revisions(of id: String) throws -> [RevisionInfo] {
    try database.read(
      inCollection([]) { db, cid in try DocumentReader.revisions(db, cid: cid, id: id) })
  }

  /// The changes feed: the latest change of each document whose sequence number is above
  /// `since`, in sequence order (CouchDB's `_changes`).
  ///
  /// - Parameters:
  ///   - since: a sequence number from an earlier change; `0` for all changes.
  ///   - limit: the most entries to return; `nil` for all.
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func changes(since: Int64 = 0, limit: Int? = nil) throws -> [Change] {
    try database.read(changesOperation(since: since, limit: limit))
  }

  /// The number of live (not deleted) documents.
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func count() throws -> Int {
    try database.read(
      inCollection(0) { db, cid in try DocumentReader.liveCount(db, cid: cid) })
  }

  /// How many documents changed after `since`: the length of the changes feed from there
  /// (CouchDB's `pending`), counted without reading the changes. Exact; a reader paging
  /// through the feed pays for the changes it moved past, not for the rest of the feed
  /// each time.
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func changeCount(since: Int64 = 0) throws -> Int {
    let counts = database.changeCounts
    return try database.read(
      inCollection(0) { db, cid in try counts.count(db, cid: cid, since: since) })
  }

  /// The number of deleted documents: the tombstones kept so that replication carries
  /// deletions (CouchDB's `doc_del_count`).
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func deletedCount() throws -> Int {
    try database.read(
      inCollection(0) { db, cid in try DocumentReader.counts(db, cid: cid).deleted })
  }

  /// The highest sequence number written so far (0 for a new collection).
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func lastSequence() throws -> Int64 {
    try database.read(inCollection(0) { db, cid in try DocumentReader.lastSequence(db, cid: cid) })
  }

  func getOperation(_ ids: [String], attachments: AttachmentListing? = nil)
    -> @Sendable (SQLConnection) throws -> [Document?]
  {
    inCollection(Array(repeating: nil, count: ids.count)) { db, cid in
      let listed = try attachments.map { try ListedAttachments(db, cid: cid, $0) }
      return try ids.map { id in
        guard var document = try DocumentReader.document(db, cid: cid, id: id),
          !document.isDeleted
        else { return nil }
        try listed?.fill(db, &document)
        return document
      }
    }
  }

  func changesOperation(since: Int64, limit: Int?) -> @Sendable (SQLConnection) throws -> [Change] {
    inCollection([]) { db, cid in
      try DocumentReader.changes(db, cid: cid, since: since, limit: limit)
    }
  }

  /// A read of this collection that gives `empty` when the collection does not exist yet.
  func inCollection<T: Sendable>(
    _ empty: T, _ body: @escaping @Sendable (SQLConnection, Int64) throws -> T
  ) -> @Sendable (SQLConnection) throws -> T {
    let (name, database) = (self.name, self.database)
    return { db in
      guard let cid = try database.collectionID(db, name) else { return empty }
      return try body(db, cid)
    }
  }
}

// The async twins: the same calls without blocking the caller's thread.
extension DocumentCollection {
  /// Creates or updates a document, without blocking the caller's thread.
  @discardableResult
  public func put(_ json: JSONObject) async throws -> WriteResult {
    try await putAll([json])[0]
  }

  /// Writes several documents in one transaction: all of them or none.
  @discardableResult
  public func putAll(_ documents: [JSONObject]) async throws -> [WriteResult] {
    try await database.write(writeOperation(validate(documents), mode: .edit))
  }

  /// Creates a document or replaces its current revision, without naming one.
  @discardableResult
  public func upsert(_ json: JSONObject) async throws -> WriteResult {
    try await database.write(writeOperation(validate([json]), mode: .overwrite))[0]
  }

  /// Deletes a document given its revision as text.
  @discardableResult
  public func delete(_ id: String, rev: String) async throws -> WriteResult {
    try await delete(id, rev: RevisionID(parsing: rev))
  }

  /// Deletes a document, leaving a tombstone revision.
  @discardableResult
  public func delete(_ id: String, rev: RevisionID) async throws -> WriteResult {
    try await database.write(
      writeOperation([Document(id: id, rev: rev, isDeleted: true)], mode: .edit))[0]
  }

  /// The current revision of a live document; `nil` when missing or deleted.
  public func get(_ id: String) async throws -> Document? {
    try await database.briefRead(getOperation([id]))[0]
  }

  /// Several documents read from one consistent snapshot, in the order of `ids`.
  public func get(_ ids: [String]) async throws -> [Document?] {
    try await database.read(getOperation(ids))
  }

  /// Several documents with their attachments as `attachments` lists them, without
  /// blocking the caller's thread.
  public func get(_ ids: [String], attachments: AttachmentListing) async throws -> [Document?] {
    try await database.read(getOperation(ids, attachments: attachments))
  }

  /// The changes feed from `since` on.
  public func changes(since: Int64 = 0, limit: Int? = nil) async throws -> [Change] {
    try await database.read(changesOperation(since: since, limit: limit))
  }

  /// Creates or updates a document, without blocking the caller's thread.
  @discardableResult
  public func put(_ document: Document) async throws -> WriteResult {
    try await database.withConnection(.writing) { try self.put(document) }
  }

  /// Deletes the document an `Encodable` value stands for, without blocking.
  @discardableResult
  public func delete<T: Encodable & Sendable>(_ value: T) async throws -> WriteResult {
    try await database.withConnection(.writing) { try self.delete(value) }
  }

  /// The winning revision of a document, tombstones included, without blocking.
  public func getRevision(_ id: String) async throws -> Document? {
    try await database.withConnection(.brief) { try self.getRevision(id) }
  }

  /// A document's history, without blocking the caller's thread.
  public func revisions(of id: String) async throws -> [RevisionInfo] {
    try await database.withConnection(.brief) { try self.revisions(of: id) }
  }

  /// The number of live documents, without blocking the caller's thread.
  public func count() async throws -> Int {
    try await database.withConnection(.reading) { try self.count() }
  }

  /// How many documents changed after `since`, without blocking the caller's thread.
  public func changeCount(since: Int64 = 0) async throws -> Int {
    try await database.withConnection(.reading) { try self.changeCount(since: since) }
  }

  /// The number of deleted documents (tombstones), without blocking the caller's thread.
  public func deletedCount() async throws -> Int {
    try await database.withConnection(.reading) { try self.deletedCount() }
  }

  /// The highest sequence number written so far, without blocking.
  public func lastSequence() async throws -> Int64 {
    try await database.withConnection(.brief) { try self.lastSequence() }
  }

  /// Deletes a stored document without blocking the caller's thread.
  @discardableResult
  public func delete(_ document: Document) async throws -> WriteResult {
    try await database.withConnection(.writing) { try self.delete(document) }
  }
}
