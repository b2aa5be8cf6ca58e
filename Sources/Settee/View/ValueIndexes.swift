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

  /// Deletes an index.
  ///
  /// - Throws: ``SetteeError`` with code `notFound` when there is none of that name.
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func delete(_ name: String) throws {
    let view = View(collection: collection, name: name, kind: .value)
    try collection.database.write { db in try ViewStore.drop(db, view.stored(db)) }
    collection.database.viewRegistry.withLock { $0[view.registryKey] = nil }
  }

  /// The names of the collection's value indexes.
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func names() throws -> [String] {
    try collection.database.query { db in
      guard let cid = try collection.database.collectionID(db, collection.name) else { return [] }
      return try ViewStore.all(db, cid: cid, kind: .value).map(\.name)
    }
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

  /// The ids of the documents ``documents(matching:sortedBy:descending:offset:limit:)-7lc2c``
  /// returns, without reading the documents.
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func documentIDs(
    matching conditions: [String: Condition], sortedBy sortIndex: String? = nil,
    descending: Bool = false, offset: Int = 0, limit: Int? = nil
  ) throws -> [String] {
    try run(conditions, sortIndex, descending, offset, limit, documents: false).ids
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

  /// Brings every index of the collection up to date now.
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func updateAll() throws {
    for name in try names() {
      try View(collection: collection, name: name, kind: .value).update()
    }
  }

  // MARK: - Internals

  private func run(
    _ conditions: [String: Condition], _ sortIndex: String?, _ descending: Bool, _ offset: Int,
    _ limit: Int?, documents wanted: Bool
  ) throws -> (ids: [String], documents: [Document]) {
    guard offset >= 0, (limit ?? 0) >= 0 else {
      throw SetteeError(.invalidQuery, "offset and limit must be 0 or more")
    }
    let conditionNames = conditions.keys.sorted()
    let names = conditionNames + (sortIndex.map { [$0] } ?? [])
    let views = names.map { View(collection: collection, name: $0, kind: .value) }
    return try catchingUp(views) { db, stored in
      var filters: [SQLFragment] = []
      for (index, name) in conditionNames.enumerated() {
        let view = stored[index]
        let type = try ValueIndexDefinition.type(of: view)
        let key = { (value: JSON) -> SQLFragment in
          guard let converted = ValueIndexDefinition.convert(value, to: type) else {
            return SQLFragment("NULL")
          }
          return .value(Data(try ViewCollation.raw.key(converted)))
        }
        let condition: SQLFragment
        switch conditions[name]! {
        case .equals(let value): condition = SQLFragment("key = ") + (try key(value))
        case .atLeast(let value): condition = SQLFragment("key >= ") + (try key(value))
        case .atMost(let value): condition = SQLFragment("key <= ") + (try key(value))
        case .between(let low, let high):
          condition =
            SQLFragment("key BETWEEN ") + (try key(low)) + SQLFragment(" AND ")
            + (try key(high))
        case .oneOf(let values):
          condition =
            SQLFragment("key IN (")
            + .joined(try values.map(key), separator: ", ") + SQLFragment(")")
        }
        filters.append(
          SQLFragment("d.id IN (SELECT doc_id FROM ") + view.table + SQLFragment(" WHERE ")
            + condition + SQLFragment(")"))
      }
      var sql =
        SQLFragment("SELECT d.id, d.rev, d.body FROM ")
        + .liveDocuments(cid: try collectionID(db))
        + SQLFragment(" AND ") + .notDesignID(SQLFragment("d.id"))
      for filter in filters { sql += SQLFragment(" AND ") + filter }
      if sortIndex != nil, let sortView = stored.last {
        sql +=
          SQLFragment(" ORDER BY (SELECT ") + (descending ? SQLFragment("max") : SQLFragment("min"))
          + SQLFragment("(key) FROM ") + sortView.table + SQLFragment(" WHERE doc_id = d.id)")
          + (descending ? SQLFragment(" DESC") : SQLFragment(" ASC"))
          + SQLFragment(" NULLS LAST, d.id")
      } else {
        sql += SQLFragment(" ORDER BY d.id")
      }
      if limit != nil || offset > 0 {
        sql +=
          SQLFragment(" LIMIT ") + .value(Int64(limit ?? -1)) + SQLFragment(" OFFSET ")
          + .value(Int64(offset))
      }
      var ids: [String] = []
      var documents: [Document] = []
      let rows = try Row.fetchCursor(
        db.makeStatement(sql: sql.text), arguments: sql.statementArguments)
      while let row = try rows.next() {
        let id: String = try row.value(0)
        ids.append(id)
        if wanted {
          documents.append(
            try Document(
              id: id, rev: DocumentReader.storedRevision(try row.value(1), documentID: id),
              body: DocumentReader.parseBody(row, at: 2, documentID: id)))
        }
      }
      return (ids, documents)
    }
  }

  private func collectionID(_ db: SQLConnection) throws -> Int64 {
    try collection.database.collectionID(db, collection.name) ?? -1
  }

  /// Runs `body` over the views' stored rows once every one of them is up to date:
  /// in a read when none is behind, else in one write that catches them all up first.
  private func catchingUp<T>(_ views: [View], _ body: (SQLConnection, [StoredView]) throws -> T)
    throws -> T
  {
    let database = collection.database
    let answer: T? = try database.query { db in
      let stored = try views.map { try $0.stored(db) }
      for view in stored where try ViewStore.isBehind(db, view) { return nil }
      return try body(db, stored)
    }
    if let answer { return answer }
    if database.configuration.readOnly {
      throw SetteeError(
        .readOnly,
        "value indexes of collection \(JSON.string(collection.name)) are behind its documents and the database was opened read-only"
      )
    }
    // In slices, as a view query catches up (see View.query).
    while true {
      let answer: T? = try database.write { db in
        var stored: [StoredView] = []
        for view in views {
          let current = try view.stored(db)
          let after = try ViewStore.catchUp(
            db, current, mapper: view.mapper(db, for: current), sliced: true)
          if try ViewStore.isBehind(db, after) { return nil }
          stored.append(after)
        }
        return try body(db, stored)
      }
      if let answer { return answer }
      ViewStore.pauseBetweenSlices()
    }
  }
}

extension DocumentCollection {
  /// The collection's value indexes (seed 001's indexing functions).
  public var valueIndexes: ValueIndexes { ValueIndexes(collection: self) }
}

/// A stored field index: `{"field": "firstname", "type": "string"}`.
struct ValueIndexDefinition {
  let field: FieldPath
  let type: ValueIndexes.ValueType

  init(field: FieldPath, type: ValueIndexes.ValueType) {
    self.field = field
    self.type = type
  }

  init(json: JSON) throws {
    guard case .string(let path)? = json["field"],
      let type = json["type"]?.stringValue.flatMap(ValueIndexes.ValueType.init(rawValue:))
    else { throw SetteeError(.corruption, "a stored value index definition is damaged: \(json)") }
    self.init(field: try FieldPath(parsing: path, allowingDollar: true), type: type)
  }

  var json: JSON { ["field": .string(field.description), "type": .string(type.rawValue)] }

  var mapper: ViewMapper {
    let field = field
    let type = type
    return ViewMapper(
      version: "field:" + JSONWriter.string(json), collation: .raw, reduce: nil
    ) { document in
      guard let value = JSON.object(document.json).value(at: field) else { return [] }
      let values = value.arrayValue ?? [value]
      return values.compactMap { Self.convert($0, to: type) }.map { (key: $0, value: JSON.null) }
    }
  }

  /// A value as an index of `type` holds it; `nil` when it cannot be (left out).
  static func convert(_ value: JSON, to type: ValueIndexes.ValueType) -> JSON? {
    switch (type, value) {
    case (.string, .string): value
    case (.string, .int), (.string, .double), (.string, .bool): .string(JSONWriter.string(value))
    case (.integer, .int): value
    case (.integer, .double(let number)):
      number.rounded() == number && abs(number) < 9.2e18 ? .int(Int64(number)) : nil
    case (.integer, .string(let text)): Int64(text).map(JSON.int)
    default: nil
    }
  }

  /// The type of a stored index, from its version (`field:{…"type":…}` or
  /// `swift:<type>:<version>`).
  static func type(of view: StoredView) throws -> ValueIndexes.ValueType {
    if view.version.hasPrefix("field:") {
      return try StoredData.reading("the definition of value index \(JSON.string(view.name))") {
        try ValueIndexDefinition(json: JSONParser.parse(String(view.version.dropFirst(6)))).type
      }
    }
    return view.version.hasPrefix("swift:integer:") ? .integer : .string
  }
}
