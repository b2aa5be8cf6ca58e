import Foundation

// The async twins of the synchronous operations: each runs its blocking twin on a
// connection it awaits without holding a thread (Database.withConnection).
extension DocumentCollection {
  /// Creates or updates a document, without blocking the caller's thread.
  @discardableResult
  public func put(_ document: Document) async throws -> WriteResult {
    try await database.withConnection(.writing) { try self.put(document) }
  }

  /// Stores an `Encodable` value as a document, without blocking the caller's thread.
  @discardableResult
  public func put<T: Encodable & Sendable>(_ value: T, id: String? = nil, rev: RevisionID? = nil)
    async throws -> WriteResult
  {
    try await database.withConnection(.writing) { try self.put(value, id: id, rev: rev) }
  }

  /// Creates or replaces a document from an `Encodable` value, without blocking.
  @discardableResult
  public func upsert<T: Encodable & Sendable>(_ value: T, id: String? = nil) async throws
    -> WriteResult
  {
    try await database.withConnection(.writing) { try self.upsert(value, id: id) }
  }

  /// Deletes the document an `Encodable` value stands for, without blocking.
  @discardableResult
  public func delete<T: Encodable & Sendable>(_ value: T) async throws -> WriteResult {
    try await database.withConnection(.writing) { try self.delete(value) }
  }

  /// Reads a live document decoded as `type`, without blocking the caller's thread.
  public func get<T: Decodable & Sendable>(_ type: T.Type, id: String) async throws -> T? {
    try await database.withConnection(.reading) { try self.get(type, id: id) }
  }

  /// The winning revision of a document, tombstones included, without blocking.
  public func getRevision(_ id: String) async throws -> Document? {
    try await database.withConnection(.reading) { try self.getRevision(id) }
  }

  /// A document's history, without blocking the caller's thread.
  public func revisions(of id: String) async throws -> [RevisionInfo] {
    try await database.withConnection(.reading) { try self.revisions(of: id) }
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
    try await database.withConnection(.reading) { try self.lastSequence() }
  }

  /// The first matching document, without blocking the caller's thread.
  public func findOne(_ query: FindQuery) async throws -> Document? {
    try await database.withConnection(.reading) { try self.findOne(query) }
  }

  /// The seed's `find(_:skip:limit:fields:sort:)`, without blocking the caller's thread.
  public func find(
    _ selector: JSONObject, skip: Int = 0, limit: Int = 0, fields: [String]? = nil,
    sort: [JSON]? = nil
  ) async throws -> [Document] {
    try await database.withConnection(.reading) {
      try self.find(selector, skip: skip, limit: limit, fields: fields, sort: sort)
    }
  }

  /// The plan a query would run with, without blocking the caller's thread.
  public func explain(_ query: FindQuery) async throws -> QueryPlan {
    try await database.withConnection(.reading) { try self.explain(query) }
  }

  /// Creates an index if it does not exist, without blocking the caller's thread.
  @discardableResult
  public func ensureIndexed(
    _ fields: [String], name: String, type: IndexDefinition.Kind = .json,
    settings: [String: String] = [:], partialFilter: Where? = nil
  ) async throws -> String {
    try await database.withConnection(.writing) {
      try self.ensureIndexed(
        fields, name: name, type: type, settings: settings, partialFilter: partialFilter)
    }
  }

  /// Creates an index from a definition, without blocking the caller's thread.
  @discardableResult
  public func ensureIndexed(_ definition: IndexDefinition) async throws -> String {
    try await database.withConnection(.writing) { try self.ensureIndexed(definition) }
  }

  /// The collection's index definitions, without blocking the caller's thread.
  public func indexes() async throws -> [IndexDefinition] {
    try await database.withConnection(.reading) { try self.indexes() }
  }

  /// The indexes in the seed's dictionary shape, without blocking the caller's thread.
  public func listIndexes() async throws -> [String: JSONObject] {
    try await database.withConnection(.reading) { try self.listIndexes() }
  }

  /// Deletes an index, without blocking the caller's thread.
  public func deleteIndex(named name: String) async throws {
    try await database.withConnection(.writing) { try self.deleteIndex(named: name) }
  }

  /// Streams the matching documents to `body`, from one snapshot, without blocking the
  /// caller's thread (`body` runs on the reader connection's queue), and returns what CouchDB's `_find`
  /// response carries besides them, as the blocking form does.
  @discardableResult
  public func find(_ query: FindQuery, _ body: @escaping @Sendable (Document) throws -> Void)
    async throws -> FindSummary
  {
    try await database.withConnection(.reading) { try self.find(query, body) }
  }

  /// Deletes a stored document without blocking the caller's thread.
  @discardableResult
  public func delete(_ document: Document) async throws -> WriteResult {
    try await database.withConnection(.writing) { try self.delete(document) }
  }

  /// Every live document as NDJSON chunks, without blocking the caller's thread.
  @discardableResult
  public func exportDocuments(_ output: @escaping @Sendable ([UInt8]) throws -> Void)
    async throws -> Int
  {
    try await database.withConnection(.reading) { try self.exportDocuments(output) }
  }
}

extension Database {
  /// The names of the collections, without blocking the caller's thread.
  public func collectionNames() async throws -> [String] {
    try await withConnection(.reading) { try self.collectionNames() }
  }

  /// SQLite's integrity check alone, without blocking the caller's thread.
  public func checkIntegrity() async throws -> [String] {
    try await withConnection(.reading) { try self.checkIntegrity() }
  }

  /// Checks the whole file (``check()-854zx``), without blocking the caller's thread.
  public func check() async throws -> CheckReport {
    try await withConnection(.reading) { try self.check() }
  }
}
