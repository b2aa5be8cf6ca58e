import Foundation
import GRDB
import SetteeCore

/// A map function: called with each document, it calls `emit(key, value)` for each row
/// the document puts into the view (any number, keys and values any JSON).
///
/// ```swift
/// let byDate = try db.collection().view("byDate", version: "1.0") { doc, emit in
///   if let date = doc["created_at"] { emit(date, .object(doc.json)) }
/// }
/// ```
///
/// A function that throws on a document makes that document emit nothing; the error is
/// reported with the view's query results (``ViewResult/errors``), naming the document.
public typealias ViewMapFunction =
  @Sendable (_ document: Document, _ emit: (_ key: JSON, _ value: JSON) -> Void) throws -> Void

/// Maps documents given as JSON text (`{"_id": …, "_rev": …, body members…}`), many at a
/// time, to each one's rows or the error that skips it: for map functions that run in
/// another engine, where one call per document would cost more than the mapping.
package typealias ViewTextMapper =
  @Sendable (_ documents: [[UInt8]]) throws -> [Result<[(key: JSON, value: JSON)], any Error>]

/// Which registered mapper belongs to which view.
struct ViewRegistryKey: Hashable, Sendable {
  let collection: [UInt8]
  let kind: ViewKind
  let name: [UInt8]
}

/// A view of a collection (seed 002): rows emitted by a map function, sorted by key in
/// CouchDB's collation, queried by key or key range, optionally reduced.
///
/// A view catches up when it is queried: only documents changed since its last update are
/// mapped, in one transaction, so no query sees a half-updated view. Its rows persist;
/// a view whose map function is Swift code must be registered again at each launch
/// (``DocumentCollection/view(_:version:collation:reduce:map:)-65yqv``) before it is queried.
public struct View: Sendable {
  /// The collection the view indexes.
  public let collection: DocumentCollection
  /// The view's name.
  public let name: String
  let kind: ViewKind

  var registryKey: ViewRegistryKey {
    ViewRegistryKey(collection: Array(collection.name.utf8), kind: kind, name: Array(name.utf8))
  }

  /// Runs a query: every row by default (reduced, when the view has a reduce).
  ///
  /// - Throws: ``SetteeError`` with code `notFound` for a view that does not exist,
  ///   `invalidQuery` for options in conflict, `viewNotRegistered` when the view needs
  ///   updating (or a custom reduce) and its Swift code is not registered in this process,
  ///   `readOnly` when it needs updating in a database opened read-only (`stale: .ok`
  ///   answers from the stored rows).
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func query(_ query: ViewQuery = ViewQuery()) throws -> ViewResult {
    if let result = try answerFromStoredRows(query) { return result }
    // The last slice answers the query in the same transaction.
    return try catchingUp { mapped in try catchUpSlice(answering: query, mapped: mapped) }
  }

  /// Brings the view up to date now (a query does so by itself).
  ///
  /// - Throws: ``SetteeError`` as ``query(_:)-5r4bo``.
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func update() throws {
    try refuseReadOnly()
    try catchingUp { mapped in try updateSlice(mapped: mapped) ? nil : () }
  }

  /// Runs a query without blocking the caller's thread: the rows are read on a reader
  /// connection, and a view that must catch up first does so on the writer, a slice at a
  /// time, the task sleeping between slices.
  public func query(_ query: ViewQuery = ViewQuery()) async throws -> ViewResult {
    let database = collection.database
    if let result = try await database.withConnection(.reading, { try answerFromStoredRows(query) })
    {
      return result
    }
    return try await catchingUp { mapped in try catchUpSlice(answering: query, mapped: mapped) }
  }

  /// Brings the view up to date without blocking the caller's thread.
  public func update() async throws {
    try refuseReadOnly()
    try await catchingUp { mapped in try updateSlice(mapped: mapped) ? nil : () }
  }

  /// Catches the view up in slices, each committed by `step` (other writers go in
  /// between), until `step` answers.
  ///
  /// A view mapped outside SQL maps each slice on a reader, holding no lock (the write
  /// only stores its rows), and maps the slice after it on another thread while this one
  /// writes: the map function and the row writes run side by side. Other views map in
  /// the write, and pause between slices so that another process's writer finds the lock
  /// free.
  private func catchingUp<T>(_ step: (ViewStore.MappedSlice?) throws -> T?) throws -> T {
    let database = collection.database
    var mapped = try database.read { db in try mapAhead(db, after: nil) }
    while true {
      // Not from inside another access: its connection is this thread's alone.
      let following = mapped.flatMap { slice in
        ThreadAccess.current == .none
          ? database.readerLanes.start {
            try database.read { db in try self.mapAhead(db, after: slice) }
          }
          : nil
      }
      let answer = Result { try step(mapped) }
      let next = following?.wait()
      if let result = try answer.get() { return result }
      if let next = try next?.get() {
        mapped = next
        continue
      }
      if mapped == nil { ViewStore.pauseBetweenSlices() }  // mapped in the write
      mapped = try database.read { db in try mapAhead(db, after: nil) }
    }
  }

  /// The async form of ``catchingUp(_:)``: the following slice is mapped in a child task.
  private func catchingUp<T: Sendable>(
    _ step: @escaping @Sendable (ViewStore.MappedSlice?) throws -> T?
  ) async throws -> T {
    let database = collection.database
    var mapped = try await database.read { db in try mapAhead(db, after: nil) }
    while true {
      guard let slice = mapped else {
        // Mapped in the write.
        if let result = try await database.withConnection(.writing, { try step(nil) }) {
          return result
        }
        try await Task.sleep(nanoseconds: ViewStore.slicePause)
        mapped = try await database.read { db in try mapAhead(db, after: nil) }
        continue
      }
      async let following = database.read { db in try mapAhead(db, after: slice) }
      let answer: Result<T?, any Error>
      do {
        answer = .success(try await database.withConnection(.writing) { try step(slice) })
      } catch { answer = .failure(error) }
      let next: Result<ViewStore.MappedSlice?, any Error>
      do { next = .success(try await following) } catch { next = .failure(error) }
      if let result = try answer.get() { return result }
      mapped = try next.get()
      if mapped == nil { mapped = try await database.read { db in try mapAhead(db, after: nil) } }
    }
  }

  /// The query's answer from the stored rows when the view is current or the query
  /// accepts stale rows (starting a background update for `stale: .updateAfter`); `nil`
  /// when the view must catch up first.
  private func answerFromStoredRows(_ query: ViewQuery) throws -> ViewResult? {
    let database = collection.database
    let answered: (result: ViewResult?, updateAfter: Bool) = try database.query { db in
      let stored = try self.stored(db)
      try query.validate(hasReduce: stored.reduceName != nil, collation: stored.collation)
      let behind = try ViewStore.isBehind(db, stored)
      guard !behind || query.stale != .update else { return (nil, false) }
      let result = try ViewStore.query(
        db, stored, query, reduce: reduce(for: stored), ranks: database.rowRanks)
      return (result, behind && query.stale == .updateAfter)
    }
    guard var result = answered.result else {
      try refuseReadOnly()
      return nil
    }
    result.updateError = takeUpdateError()
    if answered.updateAfter {
      // Its failure is reported with the view's next result.
      Task(priority: .utility) {
        do { try await self.update() } catch {
          let failure = SetteeError.from(error, "the background update failed")
          database.backgroundErrors.withLock { $0[self.registryKey] = failure }
        }
      }
    }
    return result
  }

  /// The next slice of a catch-up mapped on a reader, holding no lock, for a view mapped
  /// outside SQL that is behind (see ``ViewStore/mapAhead(_:_:mapper:)``): the one after
  /// `previous` (not stored yet) when given, the first the stored view lacks otherwise.
  /// `nil` for any other view, or when there is nothing to map.
  private func mapAhead(_ db: SQLConnection, after previous: ViewStore.MappedSlice?) throws
    -> ViewStore.MappedSlice?
  {
    var stored = try self.stored(db)
    if let previous {
      // The view as it will be once `previous` is stored.
      guard stored.vid == previous.vid, stored.generation == previous.generation,
        stored.lastSeq <= previous.upTo
      else { return nil }
      stored.lastSeq = previous.upTo
    }
    guard try ViewStore.isBehind(db, stored) else { return nil }
    return try ViewStore.mapAhead(db, stored, mapper: mapper(db, for: stored))
  }

  /// Stores a slice mapped ahead, or maps one slice of the documents changed since the
  /// view's last update, in a write; when that brings the view up to date, answers the
  /// query in the same transaction.
  private func catchUpSlice(answering query: ViewQuery, mapped: ViewStore.MappedSlice?) throws
    -> ViewResult?
  {
    let result: ViewResult? = try collection.database.write { db in
      let current = try self.stored(db)
      let stored = try ViewStore.catchUp(
        db, current, mapper: mapper(db, for: current), sliced: true, mapped: mapped)
      if try ViewStore.isBehind(db, stored) { return nil }
      return try ViewStore.query(
        db, stored, query, reduce: reduce(for: stored), ranks: collection.database.rowRanks)
    }
    guard var result else { return nil }
    result.updateError = takeUpdateError()
    return result
  }

  /// Stores a slice mapped ahead, or maps one slice of the changed documents; whether the
  /// view is still behind after it.
  private func updateSlice(mapped: ViewStore.MappedSlice?) throws -> Bool {
    try collection.database.write { db in
      let stored = try self.stored(db)
      guard try ViewStore.isBehind(db, stored) else { return false }
      let after = try ViewStore.catchUp(
        db, stored, mapper: mapper(db, for: stored), sliced: true, mapped: mapped)
      return try ViewStore.isBehind(db, after)
    }
  }

  /// The error of this view's last background update, if one failed: reported once.
  private func takeUpdateError() -> SetteeError? {
    collection.database.backgroundErrors.withLock { $0.removeValue(forKey: registryKey) }
  }

  // MARK: - Internals

  func stored(_ db: SQLConnection) throws -> StoredView {
    // What changes with writes is read every time, as integers; the definition columns
    // come from memory while the view's generation says they have not changed.
    let database = collection.database
    if let cid = try database.collectionID(db, collection.name) {
      let sql =
        SQLFragment(
          "SELECT vid, generation, last_seq, total_rows, other_values, (SELECT last_seq FROM collections c WHERE c.cid = views.cid), EXISTS (SELECT 1 FROM view_errors e WHERE e.vid = views.vid) FROM views WHERE cid = "
        ) + .value(cid) + SQLFragment(" AND kind = ") + .value(kind.rawValue)
        + SQLFragment(" AND name = ") + .value(name)
      var current: StoredView? = nil
      try RawStatement(db, sql).forEach { row in
        let vid = row.int64(0)
        if var cached = database.viewCache.withLock({ $0[vid] }), cached.generation == row.int64(1)
        {
          cached.lastSeq = row.int64(2)
          cached.totalRows = Int(row.int64(3))
          cached.otherValues = Int(row.int64(4))
          cached.collectionSeq = row.int64(5)
          cached.hasErrors = row.int64(6) != 0
          current = cached
        }
        return false
      }
      if let current { return current }
    }
    guard let cid = try collection.database.collectionID(db, collection.name),
      let view = try ViewStore.load(db, cid: cid, kind: kind, name: name)
    else {
      throw SetteeError(
        .notFound,
        "no \(kind == .view ? "view" : "value index") named \(JSON.string(name)) in collection \(JSON.string(collection.name))"
      )
    }
    if db.readsCommittedState { database.viewCache.withLock { $0[view.vid] = view } }
    return view
  }

  private func refuseReadOnly() throws {
    guard collection.database.configuration.readOnly else { return }
    throw SetteeError(
      .readOnly,
      "\(kind == .view ? "view" : "value index") \(JSON.string(name)) is behind its documents and the database was opened read-only: query it with stale: ok to read the rows it holds"
    )
  }

  /// The mapper of this process for a stored view: its registered Swift code (if the
  /// versions agree) or its stored definition.
  func mapper(_ db: SQLConnection, for stored: StoredView) throws -> ViewMapper {
    if let registered = collection.database.viewRegistry.withLock({ $0[registryKey] }),
      registered.version == stored.version
    {
      return registered
    }
    if stored.hasDefinition, let definition = try ViewStore.definition(db, stored) {
      return try ViewMapper.declared(kind: kind, definition: definition)
    }
    throw SetteeError(
      .viewNotRegistered,
      kind == .view
        ? "view \(JSON.string(name)) (version \(JSON.string(stored.version))) is behind its documents, and its map function is Swift code not registered in this process: register it before querying, or query with stale: ok"
        : "value index \(JSON.string(name)) (version \(JSON.string(stored.version))) is behind its documents, and its indexing function is Swift code not registered in this process: define it again with valueIndexes.define(_:type:version:_:) before querying"
    )
  }

  /// The reduce function for a stored view, if this process has it.
  func reduce(for stored: StoredView) throws -> ViewReduce? {
    guard let name = stored.reduceName else { return nil }
    if let builtin = ViewReduce(builtin: name) { return builtin }
    guard let registered = collection.database.viewRegistry.withLock({ $0[registryKey] }),
      registered.version == stored.version
    else { return nil }
    return registered.reduce
  }
}

extension ViewMapper {
  /// The mapper of a stored declarative definition.
  static func declared(kind: ViewKind, definition text: String) throws -> ViewMapper {
    let what = "a stored view definition (\(text.prefix(200)))"
    let json = try StoredData.json(text, what)
    switch kind {
    case .view:
      let definition = try StoredData.reading(what) { try ViewDefinition(json: json) }
      return ViewMapper(definition)
    case .value:
      let definition = try StoredData.reading(what) { try ValueIndexDefinition(json: json) }
      return definition.mapper
    }
  }

  /// The mapper of a declarative definition (which may map in SQL).
  init(_ definition: ViewDefinition) {
    self.init(
      version: definition.version, collation: definition.collation, reduce: definition.reduce,
      map: definition.map, declared: definition)
  }

  /// The mapper of a map function fed JSON text in batches; mapping one document (as
  /// `settee check` does) is a batch of one.
  static func texts(
    version: String, collation: ViewCollation, reduce: ViewReduce?,
    mapTexts: @escaping ViewTextMapper
  ) -> ViewMapper {
    var mapper = ViewMapper(version: version, collation: collation, reduce: reduce) { document in
      try mapTexts([document.jsonBytes()])[0].get()
    }
    mapper.mapTexts = mapTexts
    return mapper
  }

  /// The mapper of a Swift map function.
  static func swift(
    version: String, collation: ViewCollation, reduce: ViewReduce?, map: @escaping ViewMapFunction
  ) -> ViewMapper {
    ViewMapper(version: version, collation: collation, reduce: reduce) { document in
      var rows: [(key: JSON, value: JSON)] = []
      try map(document) { key, value in rows.append((key, value)) }
      return rows
    }
  }
}
