import GRDB
import SetteeCore

extension Database {
  /// How `where` queries of the collection `cid` read fields: its settings, kept in memory
  /// and checked against their stored version.
  func whereFields(_ db: SQLConnection, cid: Int64) throws -> WhereFields {
    try whereState(db, cid: cid).fields
  }

  /// The collection's `where` settings (``whereFields(_:cid:)``) and whether its documents
  /// may hold U+0000 in a string, read with one statement.
  func whereState(_ db: SQLConnection, cid: Int64) throws -> (fields: WhereFields, holdsNUL: Bool) {
    let (version, holdsNUL) = try WhereFieldTable.state(db, cid: cid)
    return (try whereFields(db, cid: cid, version: version), holdsNUL)
  }

  private func whereFields(_ db: SQLConnection, cid: Int64, version: Int64) throws -> WhereFields {
    if let cached = whereFieldsCache.withLock({ $0[cid] }), cached.version == version {
      return cached.fields
    }
    let (settings, stored) = try WhereFieldTable.load(db, cid: cid)
    let fields = try WhereFields(settings: settings, cid: cid, version: stored)
    if db.readsCommittedState { whereFieldsCache.withLock { $0[cid] = (stored, fields) } }
    return fields
  }
}

/// Parsed `where` strings and `orderBy` clauses, so that a query asked again skips the
/// parser: keyed by the text's bytes (two spellings of "é" are different literals to
/// SQLite), what it is, and the collection's settings (whose aliases it expanded).
struct WhereParseCache {
  struct Key: Hashable {
    var text: [UInt8]
    var isOrder: Bool
    var cid: Int64
    var version: Int64
  }

  enum Parsed {
    case condition(WhereExpression, arguments: Int)
    case order([WhereParser.OrderTerm], arguments: Int)
  }

  /// Past this many entries the cache starts again (queries are usually a few shapes).
  static let capacity = 512
  private var entries: [Key: Parsed] = [:]

  subscript(key: Key) -> Parsed? {
    get { entries[key] }
    set {
      if entries.count >= Self.capacity { entries.removeAll(keepingCapacity: true) }
      entries[key] = newValue
    }
  }
}

extension Database {
  /// A `where` string parsed, from the cache when it was parsed before.
  func parsedCondition(_ text: String, cid: Int64?, fields: WhereFields) throws -> (
    WhereExpression, arguments: Int
  ) {
    let parsed = try cachedParse(text, isOrder: false, cid: cid, fields: fields) {
      let parsed = try WhereParser.parse(text, aliases: fields.aliases)
      return .condition(parsed.expression, arguments: parsed.arguments)
    }
    guard case .condition(let expression, let arguments) = parsed else { preconditionFailure() }
    return (expression, arguments)
  }

  /// An `orderBy` clause parsed, from the cache when it was parsed before.
  func parsedOrder(_ text: String, cid: Int64?, fields: WhereFields) throws -> (
    [WhereParser.OrderTerm], arguments: Int
  ) {
    let parsed = try cachedParse(text, isOrder: true, cid: cid, fields: fields) {
      let parsed = try WhereParser.parseOrder(text, aliases: fields.aliases)
      return .order(parsed.terms, arguments: parsed.arguments)
    }
    guard case .order(let terms, let arguments) = parsed else { preconditionFailure() }
    return (terms, arguments)
  }

  /// The cached parse of `text`, or `parse`'s, kept for next time.
  private func cachedParse(
    _ text: String, isOrder: Bool, cid: Int64?, fields: WhereFields,
    _ parse: () throws -> WhereParseCache.Parsed
  ) throws -> WhereParseCache.Parsed {
    let key = WhereParseCache.Key(
      text: Array(text.utf8), isOrder: isOrder, cid: cid ?? -1, version: fields.version)
    if let known = whereParseCache.withLock({ $0[key] }) { return known }
    let parsed = try parse()
    whereParseCache.withLock { $0[key] = parsed }
    return parsed
  }
}

/// Seed 003's configuration of a collection: indexes, queryable fields, default values
/// and aliases, kept in the database. Setting what is already in effect changes nothing,
/// so an app can set them at every launch.
extension DocumentCollection {
  /// Adds an index for `where` queries and `orderBy`: fields in square brackets, each
  /// optionally `ASC` or `DESC`, separated by commas.
  ///
  /// ```swift
  /// try users.addIndex("[last_name], [first_name] DESC")
  /// ```
  ///
  /// An index over the same fields in the same order is replaced (so `addIndex` over a
  /// unique index makes it non-unique, and `DESC` can be changed); the same index again
  /// changes nothing.
  ///
  /// - Throws: ``SetteeError`` with code `invalidQuery` (quoting the definition and the
  ///   position) or `invalidIndex` for a malformed definition.
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func addIndex(_ keys: String) throws {
    try changeWhereSettings { settings in
      try Self.add(WhereIndex(keys: Self.indexKeys(keys, settings), isUnique: false), to: &settings)
    }
  }

  /// Adds a unique index: a write that would give two live documents the same values
  /// fails with `uniqueViolation`, writing nothing. Documents without the fields (or with
  /// null there) do not count, as in SQLite.
  ///
  /// - Throws: ``SetteeError`` with code `uniqueViolation` naming a value that documents
  ///   already share (nothing is changed), or as ``addIndex(_:)-53vqf``.
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func addUniqueIndex(_ keys: String) throws {
    try changeWhereSettings { settings in
      try Self.add(WhereIndex(keys: Self.indexKeys(keys, settings), isUnique: true), to: &settings)
    }
  }

  /// Removes the index over these fields, in this order (`ASC` and `DESC` do not matter);
  /// nothing happens when there is none.
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func removeIndex(_ keys: String) throws {
    try changeWhereSettings { settings in
      let fields = try Self.indexKeys(keys, settings).map(\.field)
      settings.indexes.removeAll { $0.keys.map(\.field) == fields }
    }
  }

  /// The indexes of the `where` face, in the order they were added.
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func whereIndexes() throws -> [WhereIndex] { try whereSettings().indexes }

  /// Makes fields cheap to query: their values are kept beside the documents (in a table
  /// the writes maintain), so a `where` query reads a column instead of parsing the body.
  /// `fields` is a comma-separated list in square brackets: `"[address.country], [age]"`.
  ///
  /// - Throws: ``SetteeError`` with code `invalidQuery` for a malformed list.
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func addQueryableFields(_ fields: String) throws {
    try changeWhereSettings { settings in
      for field in try Self.fieldList(fields, settings)
      where !settings.queryableFields.contains(field) {
        settings.queryableFields.append(field)
      }
    }
  }

  /// Stops keeping these fields (an index over one keeps it still).
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func removeQueryableFields(_ fields: String) throws {
    try changeWhereSettings { settings in
      let removed = try Self.fieldList(fields, settings)
      settings.queryableFields.removeAll { removed.contains($0) }
    }
  }

  /// The queryable fields, in the order they were added.
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func queryableFields() throws -> [FieldPath] { try whereSettings().queryableFields }

  /// Sets the values `where` queries use for fields a document does not have, nested as
  /// the documents are: with `["flag": false]`, `[flag] = 0` finds documents without
  /// `flag`. A field that is present and null stays null. Replaces the previous defaults.
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func setDefaults(_ defaults: JSONObject) throws {
    try changeWhereSettings { settings in settings.defaults = defaults }
  }

  /// The default values.
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func defaults() throws -> JSONObject { try whereSettings().defaults }

  /// Sets the collection's aliases, replacing the previous ones: names that `where`
  /// strings, `orderBy` clauses and index definitions may use bare, each standing for an
  /// expression (usually a field).
  ///
  /// ```swift
  /// try users.setAliases(["firstName": "[user.first_name]"])
  /// let anns = try users.find(where: "firstName = ?", args: ["Ann"])
  /// ```
  ///
  /// - Throws: ``SetteeError`` with code `invalidQuery` for a name that is not a plain
  ///   identifier or is a keyword, or an expression that does not parse, holds `?`, or
  ///   uses another alias.
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func setAliases(_ aliases: [String: String]) throws {
    for (name, expression) in aliases {
      try Self.checkAlias(name, expression)
    }
    try changeWhereSettings { settings in settings.aliases = aliases }
  }

  /// The aliases.
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func aliases() throws -> [String: String] { try whereSettings().aliases }

  // MARK: - Implementation

  /// The stored settings as they are (a damaged alias among them still lists, so that it
  /// can be removed; queries refuse it).
  func whereSettings() throws -> WhereSettings {
    try database.read { db in
      guard let cid = try database.collectionID(db, name) else { return WhereSettings() }
      return try WhereFieldTable.load(db, cid: cid).0
    }
  }

  private func changeWhereSettings(_ change: @escaping (inout WhereSettings) throws -> Void)
    throws
  {
    let name = self.name
    try database.write { db in
      let cid = try DocumentReader.ensureCollection(db, name)
      let (old, version) = try WhereFieldTable.load(db, cid: cid)
      var settings = old
      try change(&settings)
      try WhereFieldTable.apply(db, cid: cid, settings, replacing: old, version: version)
    }
  }

  private static func add(_ index: WhereIndex, to settings: inout WhereSettings) {
    if let position = settings.indexes.firstIndex(where: {
      $0.keys.map(\.field) == index.keys.map(\.field)
    }) {
      settings.indexes[position] = index
    } else {
      settings.indexes.append(index)
    }
  }

  /// Reads an index definition: fields (or aliases of fields), each ASC or DESC.
  static func indexKeys(_ text: String, _ settings: WhereSettings) throws -> [WhereIndex.Key] {
    let parsed = try parseFields(text, what: "index definition", settings)
    var keys: [WhereIndex.Key] = []
    for (field, term) in parsed {
      guard term.nullsFirst == nil else {
        throw SetteeError(
          .invalidIndex,
          "index definition \(JSON.string(text)): NULLS FIRST or LAST cannot be indexed (SQLite's indexes put NULL first)"
        )
      }
      if keys.contains(where: { $0.field == field }) {
        throw SetteeError(
          .invalidIndex, "index definition \(JSON.string(text)) names [\(field)] twice")
      }
      keys.append(WhereIndex.Key(field: field, descending: term.descending))
    }
    guard keys.count <= IndexDefinition.maxFields else {
      throw SetteeError(
        .limitExceeded,
        "index definition \(JSON.string(text)) has \(keys.count) fields; an index holds at most \(IndexDefinition.maxFields)"
      )
    }
    return keys
  }

  /// Reads a list of fields for queryable fields.
  static func fieldList(_ text: String, _ settings: WhereSettings) throws -> [FieldPath] {
    try parseFields(text, what: "queryable fields", settings).map { field, term in
      guard !term.descending, term.nullsFirst == nil else {
        throw SetteeError(
          .invalidQuery, "queryable fields \(JSON.string(text)): list fields without ASC or DESC")
      }
      return field
    }
  }

  private static func parseFields(_ text: String, what: String, _ settings: WhereSettings)
    throws -> [(FieldPath, WhereParser.OrderTerm)]
  {
    let parsed = try WhereParser.parseOrder(
      text, what: what, aliases: settings.parsedAliases())
    return try parsed.terms.map { term in
      guard case .field(let field) = term.expression, parsed.arguments == 0 else {
        throw SetteeError(
          .invalidQuery,
          "\(what) \(JSON.string(text)): list fields in square brackets, such as [last_name], not expressions"
        )
      }
      if field.components == ["_id"] || field.components == ["_rev"] {
        throw SetteeError(
          .invalidQuery,
          "\(what) \(JSON.string(text)): [\(field)] is a column of every document, indexed already"
        )
      }
      _ = try WhereFieldTable.jsonPath(field)
      return (field, term)
    }
  }

  static func checkAlias(_ name: String, _ expression: String) throws {
    let scalars = Array(name.unicodeScalars)
    func identifierStart(_ c: Unicode.Scalar) -> Bool {
      c == "_" || ("a"..."z").contains(c) || ("A"..."Z").contains(c)
    }
    guard let first = scalars.first, identifierStart(first),
      scalars.allSatisfy({ identifierStart($0) || ("0"..."9").contains($0) }),
      !WhereParser.isKeyword(name)
    else {
      throw SetteeError(
        .invalidQuery,
        "alias \(JSON.string(name)): an alias is a plain name (letters, digits and _, not starting with a digit) that is not a keyword"
      )
    }
    let parsed = try WhereParser.parse(expression)
    guard parsed.arguments == 0 else {
      throw SetteeError(
        .invalidQuery,
        "alias \(JSON.string(name)) = \(JSON.string(expression)): an alias cannot hold ? arguments"
      )
    }
  }
}

// The async twins, on the collection's queue like the rest of the `where` face.
extension DocumentCollection {
  /// Adds an index without blocking the caller's thread.
  public func addIndex(_ keys: String) async throws { try await inOrder { try $0.addIndex(keys) } }

  /// Adds a unique index without blocking the caller's thread.
  public func addUniqueIndex(_ keys: String) async throws {
    try await inOrder { try $0.addUniqueIndex(keys) }
  }

  /// Removes an index without blocking the caller's thread.
  public func removeIndex(_ keys: String) async throws {
    try await inOrder { try $0.removeIndex(keys) }
  }

  /// The indexes of the `where` face, without blocking the caller's thread.
  public func whereIndexes() async throws -> [WhereIndex] {
    try await inOrder(.reading) { try $0.whereIndexes() }
  }

  /// Adds queryable fields without blocking the caller's thread.
  public func addQueryableFields(_ fields: String) async throws {
    try await inOrder { try $0.addQueryableFields(fields) }
  }

  /// Removes queryable fields without blocking the caller's thread.
  public func removeQueryableFields(_ fields: String) async throws {
    try await inOrder { try $0.removeQueryableFields(fields) }
  }

  /// The queryable fields, without blocking the caller's thread.
  public func queryableFields() async throws -> [FieldPath] {
    try await inOrder(.reading) { try $0.queryableFields() }
  }

  /// Sets the default values without blocking the caller's thread.
  public func setDefaults(_ defaults: JSONObject) async throws {
    try await inOrder { try $0.setDefaults(defaults) }
  }

  /// The default values, without blocking the caller's thread.
  public func defaults() async throws -> JSONObject {
    try await inOrder(.reading) { try $0.defaults() }
  }

  /// Sets the aliases without blocking the caller's thread.
  public func setAliases(_ aliases: [String: String]) async throws {
    try await inOrder { try $0.setAliases(aliases) }
  }

  /// The aliases, without blocking the caller's thread.
  public func aliases() async throws -> [String: String] {
    try await inOrder(.reading) { try $0.aliases() }
  }

  /// How SQLite would run a `where` query, without blocking the caller's thread.
  public func explain(
    where whereString: String = "", args: [JSON] = [], orderBy: String = "", limit: Int? = nil
  ) async throws -> WherePlan {
    try await inOrder(.reading) {
      try $0.explain(where: whereString, args: args, orderBy: orderBy, limit: limit)
    }
  }
}
