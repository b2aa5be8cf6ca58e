import GRDB
import SetteeCore

/// What ``DocumentCollection/views()-2uaai`` lists about a view.
public struct ViewInfo: Sendable, Hashable {
  /// The view's name.
  public var name: String
  /// The declarative definition (see ``ViewDefinition``); `nil` for a Swift map function.
  public var definition: JSON?
  /// The version its rows were made with (a declarative view's is its definition).
  public var version: String
  /// The key order.
  public var collation: ViewCollation
  /// The reduce: a built-in's name, `"custom"`, or `nil`.
  public var reduce: String?
  /// How many rows it holds.
  public var totalRows: Int
  /// The collection sequence number it has caught up with.
  public var updateSeq: Int64

  /// CouchDB-like JSON: `{"name", "definition" or "version", "collation", "reduce",
  /// "total_rows", "update_seq"}`.
  public var json: JSON {
    var members: [(String, JSON)] = [("name", .string(name))]
    if let definition {
      members.append(("definition", definition))
    } else {
      members.append(("version", .string(version)))
    }
    members.append(("collation", .string(collation.rawValue)))
    members.append(("reduce", reduce.map(JSON.string) ?? .null))
    members.append(("total_rows", .int(Int64(totalRows))))
    members.append(("update_seq", .int(updateSeq)))
    return .object(JSONObject(members))
  }
}

extension DocumentCollection {
  /// Registers a view whose map function is Swift code, creating it on first use.
  ///
  /// Call it at every launch before querying the view: the rows persist, the function
  /// does not (as in both seeds). A new `version` (or collation or reduce) rebuilds the
  /// rows at the next query.
  ///
  /// ```swift
  /// let items = try db.collection("groceries").view("byStoreItem", version: "1", reduce: .sum) {
  ///   doc, emit in emit([doc["store"], doc["item"]], doc["price"] ?? nil)
  /// }
  /// let perStore = try items.query(ViewQuery(groupLevel: 1))
  /// ```
  ///
  /// - Throws: ``SetteeError`` with code `invalidArgument` for a bad name.
  @discardableResult
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func view(
    _ name: String, version: String, collation: ViewCollation = .unicode,
    reduce: ViewReduce? = nil, map: @escaping ViewMapFunction
  ) throws -> View {
    try register(
      name, ViewMapper.swift(version: version, collation: collation, reduce: reduce, map: map))
  }

  /// Registers a view whose map function runs in another engine (a design document's
  /// JavaScript), fed documents as JSON text in batches (``ViewTextMapper``); otherwise as
  /// ``view(_:version:collation:reduce:map:)-65yqv``.
  @discardableResult
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  package func view(
    _ name: String, version: String, collation: ViewCollation = .unicode,
    reduce: ViewReduce? = nil, mapTexts: @escaping ViewTextMapper
  ) throws -> View {
    try register(
      name,
      ViewMapper.texts(version: version, collation: collation, reduce: reduce, mapTexts: mapTexts))
  }

  /// Registers `mapper` (code of this process) as the view `name` and stores its state.
  private func register(_ name: String, _ mapper: ViewMapper) throws -> View {
    try Self.checkViewName(name)
    let view = View(collection: self, name: name, kind: .view)
    database.viewRegistry.withLock { $0[view.registryKey] = mapper }
    try store(view, mapper: mapper, definition: nil)
    return view
  }

  /// Defines (or redefines) a declarative view, stored in the database so that any
  /// process and the command line can query it; a changed definition rebuilds it.
  ///
  /// - Throws: ``SetteeError`` with code `invalidArgument` for a bad definition.
  @discardableResult
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func defineView(_ definition: ViewDefinition) throws -> View {
    try Self.checkViewName(definition.name)
    let view = View(collection: self, name: definition.name, kind: .view)
    database.viewRegistry.withLock { $0[view.registryKey] = nil }
    try store(
      view,
      mapper: ViewMapper(definition),
      definition: JSONWriter.string(definition.json))
    return view
  }

  /// Defines a declarative view from its JSON (see ``ViewDefinition``).
  @discardableResult
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func defineView(json: JSON) throws -> View {
    try defineView(ViewDefinition(json: json))
  }

  /// A view by name, to query one that exists (its Swift code registered, or declarative).
  public func view(named name: String) -> View {
    View(collection: self, name: name, kind: .view)
  }

  /// The views of this collection, by name.
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func views() throws -> [ViewInfo] {
    try database.read { db in
      guard let cid = try database.collectionID(db, name) else { return [] }
      return try ViewStore.all(db, cid: cid, kind: .view).map { view in
        ViewInfo(
          name: view.name,
          definition: try ViewStore.definition(db, view).map {
            try StoredData.json($0, "the definition of view \(JSON.string(view.name))")
          },
          version: view.version, collation: view.collation, reduce: view.reduceName,
          totalRows: view.totalRows, updateSeq: view.lastSeq)
      }
    }
  }

  /// Deletes a view and its rows.
  ///
  /// - Throws: ``SetteeError`` with code `notFound` when there is no view of that name.
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func deleteView(named name: String) throws {
    let view = self.view(named: name)
    try database.write { db in try ViewStore.drop(db, view.stored(db)) }
    database.viewRegistry.withLock { $0[view.registryKey] = nil }
  }

  /// Stores a view's definition (when it differs from the stored one).
  func store(_ view: View, mapper: ViewMapper, definition: String?) throws {
    let kind = view.kind
    let name = view.name
    let current: Bool = try database.read { db in
      guard let cid = try database.collectionID(db, self.name),
        let stored = try ViewStore.load(db, cid: cid, kind: kind, name: name)
      else { return false }
      return try stored.matches(mapper, declared: definition != nil)
    }
    // A read-only database keeps what it has: queries then say what is missing.
    if current || database.configuration.readOnly { return }
    try database.write { db in
      _ = try ViewStore.ensure(
        db, collection: self.name, kind: kind, name: name, mapper: mapper, definition: definition)
    }
  }

  static func checkViewName(_ name: String) throws {
    guard !name.isEmpty else {
      throw SetteeError(.invalidArgument, "a view name must not be empty")
    }
    try Names.refuseNUL(name, kind: "view name", code: .invalidArgument)
    if name.hasPrefix("_") {
      throw SetteeError(
        .invalidArgument, "view name \(JSON.string(name)) starts with \"_\", which is reserved")
    }
  }
}

/// What ``Database/updateAllViews()-5b5az`` did.
public struct ViewUpdateReport: Sendable, Hashable {
  /// `collection/name` of every view and value index now up to date.
  public var updated: [String]
  /// Those left behind because their Swift code is not registered in this process.
  public var notRegistered: [String]
}

extension Database {
  /// Brings every view and value index of every collection up to date (seed 001's
  /// `updateAllIndexes`), for example after a large import, so that the next queries
  /// need not.
  @discardableResult
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func updateAllViews() throws -> ViewUpdateReport {
    var report = ViewUpdateReport(updated: [], notRegistered: [])
    let all = try read { db in try ViewStore.everything(db) }
    for (collectionName, stored) in all {
      let view = View(collection: collection(collectionName), name: stored.name, kind: stored.kind)
      let label = "\(collectionName)/\(stored.name)"
      do {
        try view.update()
        report.updated.append(label)
      } catch let error as SetteeError where error.code == .viewNotRegistered {
        report.notRegistered.append(label)
      }
    }
    return report
  }

  /// Brings every view up to date without blocking the caller's thread.
  @discardableResult
  public func updateAllViews() async throws -> ViewUpdateReport {
    try await withConnection(.writing) { try self.updateAllViews() }
  }
}

// The async twins.
extension DocumentCollection {
  /// Registers a Swift view without blocking the caller's thread.
  @discardableResult
  public func view(
    _ name: String, version: String, collation: ViewCollation = .unicode,
    reduce: ViewReduce? = nil, map: @escaping ViewMapFunction
  ) async throws -> View {
    try await database.withConnection(.writing) {
      try self.view(name, version: version, collation: collation, reduce: reduce, map: map)
    }
  }

  /// Registers a view whose map function runs in another engine, without blocking the
  /// caller's thread.
  @discardableResult
  package func view(
    _ name: String, version: String, collation: ViewCollation = .unicode,
    reduce: ViewReduce? = nil, mapTexts: @escaping ViewTextMapper
  ) async throws -> View {
    try await database.withConnection(.writing) {
      try self.view(
        name, version: version, collation: collation, reduce: reduce, mapTexts: mapTexts)
    }
  }

  /// Defines a declarative view without blocking the caller's thread.
  @discardableResult
  public func defineView(_ definition: ViewDefinition) async throws -> View {
    try await database.withConnection(.writing) { try self.defineView(definition) }
  }

  /// Defines a declarative view from its JSON, without blocking a thread.
  @discardableResult
  public func defineView(json: JSON) async throws -> View {
    try await defineView(ViewDefinition(json: json))
  }

  /// The views of this collection, without blocking the caller's thread.
  public func views() async throws -> [ViewInfo] {
    try await database.withConnection(.reading) { try self.views() }
  }

  /// Deletes a view without blocking the caller's thread.
  public func deleteView(named name: String) async throws {
    try await database.withConnection(.writing) { try self.deleteView(named: name) }
  }
}
