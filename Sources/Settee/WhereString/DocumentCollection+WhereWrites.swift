import GRDB
import SetteeCore

/// Seed 003's writes: no revisions to carry (a new revision is still recorded for each
/// change, so history and replication hold), documents named by `_id`.
extension DocumentCollection {
  /// Inserts a new document and returns its id (generated when it has none).
  ///
  /// - Throws: ``SetteeError`` with code `conflict` when a live document has that id.
  @discardableResult
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func insert(_ json: JSONObject) throws -> String {
    try Self.explainingTakenIDs([json]) { try put(json).id }
  }

  /// Inserts documents in one transaction, all or none, and returns their ids.
  ///
  /// - Throws: ``SetteeError`` naming the first document at fault (`record`); nothing is
  ///   written.
  @discardableResult
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func insertBatch(_ documents: [JSONObject]) throws -> [String] {
    try Self.explainingTakenIDs(documents) { try putAll(documents).map(\.id) }
  }

  /// Runs an insert, saying what a `conflict` means in this face: `insert` adds new
  /// documents, so an id that is taken is not a stale revision (the `where` face has
  /// none) but a document that exists already.
  static func explainingTakenIDs<T>(_ documents: [JSONObject], _ body: () throws -> T) throws
    -> T
  {
    do { return try body() } catch let error as SetteeError where error.code == .conflict {
      guard let id = error.documentID,
        let document = documents.first(where: { $0["_id"] == .string(id) }),
        document["_rev"] == nil
      else { throw error }
      throw SetteeError(
        .conflict,
        "document \(JSON.string(id)) exists already: insert and insertBatch add new documents (update replaces one by id, upsert does either); nothing was written",
        documentID: id)
    }
  }

  /// Replaces an existing document (named by its `_id`) without naming a revision.
  ///
  /// - Throws: ``SetteeError`` with code `notFound` when no live document has that id,
  ///   `invalidDocument` when the JSON has no `_id`.
  @discardableResult
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func update(_ json: JSONObject) throws -> WriteResult {
    guard case .string(let id)? = json["_id"] else {
      throw SetteeError(.invalidDocument, "update needs the document's \"_id\"")
    }
    let document = try validate([json])[0]
    let write = writeOperation([document], mode: .overwrite)
    let name = self.name
    return try database.write { db in
      try Self.requireLive(db, name, id)
      return try write(db)[0]
    }
  }

  /// Removes a document by id (a tombstone revision, as a delete leaves).
  ///
  /// - Throws: ``SetteeError`` with code `notFound` when no live document has that id.
  @discardableResult
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func remove(_ id: String) throws -> WriteResult {
    let write = writeOperation([Document(id: id, isDeleted: true)], mode: .overwrite)
    let name = self.name
    return try database.write { db in
      try Self.requireLive(db, name, id)
      return try write(db)[0]
    }
  }

  /// Removes every document that satisfies a `where` string, in one transaction, and
  /// returns how many.
  @discardableResult
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func remove(where whereString: String, args: [JSON] = []) throws -> Int {
    let name = self.name
    let queryTimeLimit = database.configuration.queryTimeLimit
    return try database.write { db in
      guard
        let sql = try whereStatement(
          db, cid: DocumentReader.collectionID(db, name), select: SQLFragment("SELECT d.id"),
          whereString, args: args, orderBy: "", limit: nil)
      else { return 0 }
      // Finding them is a query: under its time budget, so a hostile string cannot hold
      // the write lock for long.
      let ids = try QueryBudget.within(queryTimeLimit) {
        try String.fetchAll(db, sql: sql.text, arguments: sql.statementArguments)
      }
      var writer = try DocumentWriter(db: db, collection: name, in: database)
      for id in ids { _ = try writer.write(Document(id: id, isDeleted: true), mode: .overwrite) }
      try writer.finish()
      return ids.count
    }
  }

  static func requireLive(_ db: SQLConnection, _ name: String, _ id: String) throws {
    guard let cid = try DocumentReader.collectionID(db, name),
      let current = try DocumentReader.document(db, cid: cid, id: id), !current.isDeleted
    else {
      throw SetteeError(
        .notFound, "no document \(JSON.string(id)) in collection \(JSON.string(name))")
    }
  }
}

// The async twins: each runs on the collection's queue, after every operation issued on
// the collection before it (see ``DocumentCollection/enqueue(_:)``).
extension DocumentCollection {
  /// Inserts a new document without blocking the caller's thread.
  @discardableResult
  public func insert(_ json: JSONObject) async throws -> String {
    try await inOrder { try $0.insert(json) }
  }

  /// Inserts documents, all or none, without blocking the caller's thread.
  @discardableResult
  public func insertBatch(_ documents: [JSONObject]) async throws -> [String] {
    try await inOrder { try $0.insertBatch(documents) }
  }

  /// Replaces an existing document without blocking the caller's thread.
  @discardableResult
  public func update(_ json: JSONObject) async throws -> WriteResult {
    try await inOrder { try $0.update(json) }
  }

  /// Removes a document by id without blocking the caller's thread.
  @discardableResult
  public func remove(_ id: String) async throws -> WriteResult {
    try await inOrder { try $0.remove(id) }
  }

  /// Removes the documents a `where` string selects without blocking the caller's thread.
  @discardableResult
  public func remove(where whereString: String, args: [JSON] = []) async throws -> Int {
    try await inOrder { try $0.remove(where: whereString, args: args) }
  }

  /// Documents that satisfy a `where` string, without blocking the caller's thread.
  public func find(
    where whereString: String = "", args: [JSON] = [], orderBy: String = "", limit: Int? = nil
  ) async throws -> [Document] {
    try await inOrder(.reading) {
      try $0.find(where: whereString, args: args, orderBy: orderBy, limit: limit)
    }
  }

  /// The first document a `where` string selects, without blocking the caller's thread.
  public func findOne(where whereString: String, args: [JSON] = [], orderBy: String = "")
    async throws -> Document?
  {
    try await inOrder(.reading) {
      try $0.findOne(where: whereString, args: args, orderBy: orderBy)
    }
  }

  /// How many documents a `where` string selects, without blocking the caller's thread.
  public func count(where whereString: String, args: [JSON] = []) async throws -> Int {
    try await inOrder(.reading) { try $0.count(where: whereString, args: args) }
  }
}
