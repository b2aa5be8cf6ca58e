import Foundation
import GRDB
import SetteeCore

/// Value indexes (seed 001, Cloudant Sync's indexing functions): each index holds the
/// values that a function, or one field, gives for each document, typed as strings or
/// integers, and queries find documents by those values, several indexes at once.
///
/// They are a face over views (each index is a view keyed by its values), kept apart from
/// the Mango indexes of ``DocumentCollection/ensureIndexed(_:name:type:settings:partialFilter:)-7rd7b``,
/// which serve `find`. Like views, they catch up with the documents when queried.
///
/// ```swift
/// let songs = db.collection("songs").valueIndexes
/// try songs.define("album", field: "album")
/// try songs.define("artist", field: "artist")
/// let vivaLaVida = try songs.documents(matching: ["artist": "Coldplay", "album": "Viva la Vida"])
/// ```
public struct ValueIndexes: Sendable {
  /// The collection indexed.
  public let collection: DocumentCollection

  /// What an index holds.
  public enum ValueType: String, Sendable, Hashable {
    /// Strings (numbers and booleans are indexed as their JSON text); queries match whole
    /// values exactly and order by code point.
    case string
    /// 64-bit integers (integral numbers, and strings holding one); queries match values
    /// and ranges, and order numerically.
    case integer
  }

  /// One index's condition in a query (the seed's `value`, `{"min": …}`, `{"max": …}`,
  /// `{"min": …, "max": …}` and `[v0, …, vn]`).
  public enum Condition: Sendable, Hashable, ExpressibleByStringLiteral,
    ExpressibleByIntegerLiteral
  {
    /// index == value
    case equals(JSON)
    /// index >= value (the seed's `min`)
    case atLeast(JSON)
    /// index <= value (the seed's `max`)
    case atMost(JSON)
    /// low <= index <= high
    case between(JSON, JSON)
    /// index == one of the values
    case oneOf([JSON])

    /// `"Coldplay"` means `.equals("Coldplay")`.
    public init(stringLiteral value: String) { self = .equals(.string(value)) }
    /// `29` means `.equals(29)`.
    public init(integerLiteral value: Int64) { self = .equals(.int(value)) }

    /// The seed's JSON shape: a value, `{"min": v}`, `{"max": v}`, both, or an array.
    ///
    /// - Throws: ``SetteeError`` with code `invalidQuery` for another object.
    public init(json: JSON) throws {
      switch json {
      case .array(let values): self = .oneOf(values)
      case .object(let object):
        let minimum = object["min"]
        let maximum = object["max"]
        guard object.count == [minimum, maximum].compactMap({ $0 }).count, object.count > 0
        else {
          throw SetteeError(
            .invalidQuery,
            "a value index condition object takes \"min\" and/or \"max\", not \(json)")
        }
        switch (minimum, maximum) {
        case (let low?, let high?): self = .between(low, high)
        case (let low?, nil): self = .atLeast(low)
        case (nil, let high?): self = .atMost(high)
        default: self = .oneOf([])
        }
      default: self = .equals(json)
      }
    }
  }

  /// Defines an index over one field (the seed's `CDTFieldIndexer`): its value, or each
  /// element when it is an array. Stored in the database, so any process can query it.
  /// Redefining a name with another field or type rebuilds it (the seed's delete and
  /// re-create).
  ///
  /// - Throws: ``SetteeError`` with code `invalidArgument` for a bad name or path.
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func define(_ name: String, field: String, type: ValueType = .string) throws {
    let definition = try ValueIndexDefinition(
      field: FieldPath(parsing: field, allowingDollar: true), type: type)
    let view = View(collection: collection, name: name, kind: .value)
    try DocumentCollection.checkViewName(name)
    collection.database.viewRegistry.withLock { $0[view.registryKey] = nil }
    try collection.store(
      view, mapper: definition.mapper, definition: JSONWriter.string(definition.json))
  }

  /// Defines an index over one field without blocking the caller's thread.
  public func define(_ name: String, field: String, type: ValueType = .string) async throws {
    try await collection.database.withConnection(.writing) {
      try self.define(name, field: field, type: type)
    }
  }

  /// Defines an index whose values a Swift function computes (the seed's `CDTIndexer`):
  /// it returns the values to index for a document (none to leave it out). Call it at
  /// every launch before querying; a new `version` rebuilds the index.
  ///
  /// - Throws: ``SetteeError`` with code `invalidArgument` for a bad name.
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func define(
    _ name: String, type: ValueType, version: String,
    indexer: @escaping @Sendable (Document) throws -> [JSON]
  ) throws {
    try DocumentCollection.checkViewName(name)
    let mapper = ViewMapper(
      version: "swift:\(type.rawValue):\(version)", collation: .raw, reduce: nil
    ) { document in
      try indexer(document).compactMap { ValueIndexDefinition.convert($0, to: type) }.map {
        (key: $0, value: JSON.null)
      }
    }
    let view = View(collection: collection, name: name, kind: .value)
    collection.database.viewRegistry.withLock { $0[view.registryKey] = mapper }
    try collection.store(view, mapper: mapper, definition: nil)
  }

  /// Defines an index computed by a Swift function without blocking the caller's thread.
  public func define(
    _ name: String, type: ValueType, version: String,
    indexer: @escaping @Sendable (Document) throws -> [JSON]
  ) async throws {
    try await collection.database.withConnection(.writing) {
      try self.define(name, type: type, version: version, indexer: indexer)
    }
  }

  /// Deletes an index.
  ///
  /// - Throws: ``SetteeError`` with code `notFound` when there is none of that name.
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func delete(_ name: String) throws {
    let view = View(collection: collection, name: name, kind: .value)
    try collection.database.write { db in try ViewStore.drop(db, view.stored(db)) }
    collection.database.viewRegistry.withLock { $0[view.registryKey] = nil }
  }

  /// Deletes an index without blocking the caller's thread.
  public func delete(_ name: String) async throws {
    try await collection.database.withConnection(.writing) { try self.delete(name) }
  }

  /// The names of the collection's value indexes.
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func names() throws -> [String] {
    try collection.database.query { db in
      guard let cid = try collection.database.collectionID(db, collection.name) else { return [] }
      return try ViewStore.all(db, cid: cid, kind: .value).map(\.name)
    }
  }

  /// The names of the collection's value indexes, without blocking the caller's thread.
  public func names() async throws -> [String] {
    try await collection.database.withConnection(.reading) { try self.names() }
  }

  /// The documents that satisfy every condition (each naming an index), sorted by an
  /// index's values (a document's lowest value ascending, highest descending; documents
  /// without a value last, then by id), from `offset`, at most `limit` of them.
  ///
  /// - Throws: ``SetteeError`` with code `notFound` naming an index that does not exist,
  ///   `invalidQuery` for a negative offset or limit.
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func documents(
    matching conditions: [String: Condition], sortedBy sortIndex: String? = nil,
    descending: Bool = false, offset: Int = 0, limit: Int? = nil
  ) throws -> [Document] {
    try run(conditions, sortIndex, descending, offset, limit, documents: true).documents
  }

  /// The documents that satisfy every condition, without blocking the caller's thread.
  public func documents(
    matching conditions: [String: Condition], sortedBy sortIndex: String? = nil,
    descending: Bool = false, offset: Int = 0, limit: Int? = nil
  ) async throws -> [Document] {
    try await collection.database.withConnection(.reading) {
      try self.documents(
        matching: conditions, sortedBy: sortIndex, descending: descending, offset: offset,
        limit: limit)
    }
  }

  /// The ids of the documents ``documents(matching:sortedBy:descending:offset:limit:)-7lc2c``
  /// returns, without reading the documents.
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func documentIDs(
    matching conditions: [String: Condition], sortedBy sortIndex: String? = nil,
    descending: Bool = false, offset: Int = 0, limit: Int? = nil
  ) throws -> [String] {
    try run(conditions, sortIndex, descending, offset, limit, documents: false).ids
  }

  /// The ids of the matching documents, without blocking the caller's thread.
  public func documentIDs(
    matching conditions: [String: Condition], sortedBy sortIndex: String? = nil,
    descending: Bool = false, offset: Int = 0, limit: Int? = nil
  ) async throws -> [String] {
    try await collection.database.withConnection(.reading) {
      try self.documentIDs(
        matching: conditions, sortedBy: sortIndex, descending: descending, offset: offset,
        limit: limit)
    }
  }

  /// Every distinct value an index holds, in order (the seed's `uniqueValuesForIndex`).
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func uniqueValues(of name: String) throws -> [JSON] {
    let view = View(collection: collection, name: name, kind: .value)
    let result = try catchingUp([view]) { db, stored in
      let sql =
        SQLFragment("SELECT min(key_json) FROM ") + stored[0].table
        + SQLFragment(" GROUP BY key ORDER BY key")
      return try String.fetchAll(db, sql: sql.text).map {
        try StoredData.json($0, "a row of value index \(JSON.string(name))")
      }
    }
    return result
  }

  /// Every distinct value an index holds, without blocking the caller's thread.
  public func uniqueValues(of name: String) async throws -> [JSON] {
    try await collection.database.withConnection(.reading) { try self.uniqueValues(of: name) }
  }

  /// Brings every index of the collection up to date now.
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func updateAll() throws {
    for name in try names() {
      try View(collection: collection, name: name, kind: .value).update()
    }
  }

  /// Brings every index of the collection up to date without blocking the caller's thread.
  public func updateAll() async throws {
    try await collection.database.withConnection(.writing) { try self.updateAll() }
  }
}

extension DocumentCollection {
  /// The collection's value indexes (seed 001's indexing functions).
  public var valueIndexes: ValueIndexes { ValueIndexes(collection: self) }
}
