import SetteeCore

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
    try await database.read(getOperation([id]))[0]
  }

  /// Several documents read from one consistent snapshot, in the order of `ids`.
  public func get(_ ids: [String]) async throws -> [Document?] {
    try await database.read(getOperation(ids))
  }

  /// The changes feed from `since` on.
  public func changes(since: Int64 = 0, limit: Int? = nil) async throws -> [Change] {
    try await database.read(changesOperation(since: since, limit: limit))
  }
}

extension DocumentCollection {
  /// The documents that match a query, without blocking the caller's thread.
  public func find(_ query: FindQuery) async throws -> [Document] {
    let (name, database) = (self.name, self.database)
    return try await database.query { db in
      var results: [Document] = []
      try DocumentCollection.find(query, collection: name, in: database, db: db) {
        results.append($0)
      }
      return results
    }
  }

  /// A page of results with its bookmark, without blocking the caller's thread.
  public func findPage(_ query: FindQuery) async throws -> FindResult {
    let (name, database) = (self.name, self.database)
    return try await database.query { db in
      var documents: [Document] = []
      let summary = try DocumentCollection.find(
        query, collection: name, in: database, db: db, summary: true
      ) {
        documents.append($0)
      }
      return FindResult(documents: documents, summary: summary)
    }
  }

  /// The matching documents decoded as `type`, without blocking the caller's thread.
  public func find<T: Decodable & Sendable>(_ type: T.Type, _ query: FindQuery) async throws -> [T]
  {
    try await find(query).map { try $0.decode(type) }
  }

  /// How many documents match, without blocking the caller's thread.
  public func count(_ query: FindQuery) async throws -> Int {
    let (name, database) = (self.name, self.database)
    return try await database.query { db in
      try DocumentCollection.count(query, collection: name, in: database, db: db)
    }
  }
}
