import GRDB
import SetteeCore

extension DocumentCollection {
  /// Creates an index unless the same one exists, and returns its name (the seed's
  /// `ensureIndexed`). Documents already stored are indexed before it returns.
  ///
  /// ```swift
  /// try people.ensureIndexed(["name", "age", "pet.species"], name: "basic")
  /// ```
  ///
  /// - Throws: ``SetteeError`` with code `invalidIndex` for a bad definition or when an
  ///   index of that name exists with another definition.
  ///
  /// With `partialFilter`, only the documents it matches are indexed, and the index serves
  /// only queries whose selector includes its conditions:
  ///
  /// ```swift
  /// try people.ensureIndexed(["age"], name: "users", partialFilter: Field("type") == "user")
  /// ```
  @discardableResult
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func ensureIndexed(
    _ fields: [String], name: String, type: IndexDefinition.Kind = .json,
    settings: [String: String] = [:], partialFilter: Where? = nil
  ) throws -> String {
    var definition = try IndexDefinition(
      name: name, fields: fields, type: type.rawValue, settings: settings)
    if let partialFilter {
      let selector = try partialFilter.selector()
      definition.partialFilter = selector == .all ? nil : selector
    }
    return try ensureIndexed(definition)
  }

  /// Creates an index from a definition unless the same one exists.
  @discardableResult
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func ensureIndexed(_ definition: IndexDefinition) throws -> String {
    let name = self.name
    return try database.write { db in
      let writer = try DocumentWriter(db: db, collection: name, in: database)
      let cid = writer.collectionID
      if let existing = try StoredIndex.all(db, cid: cid).first(where: {
        $0.definition.name.utf8.elementsEqual(definition.name.utf8)
      }) {
        guard existing.definition == definition else {
          throw SetteeError(
            .invalidIndex,
            "an index named \(JSONWriter.string(.string(definition.name))) exists with another definition; delete it first"
          )
        }
        return definition.name
      }
      if definition.kind == .text {
        if let other = try StoredIndex.all(db, cid: cid).first(where: {
          $0.definition.kind == .text
        }) {
          throw SetteeError(
            .invalidIndex,
            "a collection has one TEXT index, and \(JSONWriter.string(.string(name))) has \(JSONWriter.string(.string(other.definition.name))) already"
          )
        }
        guard Database.hasFTS4(db) else {
          throw SetteeError(
            .invalidIndex, "this SQLite has no full-text search (FTS4); see isTextSearchEnabled")
        }
      }
      _ = try StoredIndex.create(definition, db: db, cid: cid)
      return definition.name
    }
  }

  /// The collection's indexes in the seed's dictionary shape: name → `{"fields": […],
  /// "type": "json", "name": …}` (TEXT indexes add `"settings": "{tokenize: …}"`).
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func listIndexes() throws -> [String: JSONObject] {
    var listing: [String: JSONObject] = [:]
    for definition in try indexes() { listing[definition.name] = definition.listing }
    return listing
  }

  /// The collection's index definitions, by name.
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func indexes() throws -> [IndexDefinition] {
    try database.read(
      inCollection([]) { db, cid in try StoredIndex.all(db, cid: cid).map(\.definition) })
  }

  /// Deletes an index.
  ///
  /// - Throws: ``SetteeError`` with code `notFound` when there is no index of that name.
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func deleteIndex(named indexName: String) throws {
    let name = self.name
    try database.write { db in
      guard let cid = try DocumentReader.collectionID(db, name),
        let index = try StoredIndex.all(db, cid: cid).first(where: {
          $0.definition.name.utf8.elementsEqual(indexName.utf8)
        })
      else {
        throw SetteeError(
          .notFound,
          "no index named \(JSONWriter.string(.string(indexName))) in \(JSONWriter.string(.string(name)))"
        )
      }
      try index.drop(db)
    }
  }
}

extension Database {
  /// Whether the SQLite in use has full-text search (FTS4), which TEXT indexes need: it
  /// creates and drops a temporary FTS4 table to find out.
  public var isTextSearchEnabled: Bool {
    // Reentrant: it may be asked from inside another access's closure.
    writer.unsafeReentrantWrite { db in Database.hasFTS4(db) }
  }

  static func hasFTS4(_ db: SQLConnection) -> Bool {
    do {
      try db.execute(sql: "CREATE VIRTUAL TABLE temp.settee_fts_probe USING fts4(x)")
      try db.execute(sql: "DROP TABLE temp.settee_fts_probe")
      return true
    } catch {
      return false
    }
  }
}

// The async twins: the same calls without blocking the caller's thread.
extension DocumentCollection {
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
}
