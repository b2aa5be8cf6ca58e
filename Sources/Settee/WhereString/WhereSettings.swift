import GRDB
import SetteeCore

/// One index of a collection's `where` face (seed 003): fields in order, each ascending or
/// descending, unique or not.
public struct WhereIndex: Sendable, Hashable, CustomStringConvertible {
  /// One field of the index.
  public struct Key: Sendable, Hashable {
    /// The field.
    public var field: FieldPath
    /// `DESC` in the definition.
    public var descending: Bool
  }

  /// The fields, in order.
  public var keys: [Key]
  /// Whether two live documents may not hold the same values (documents missing a field,
  /// or holding null there, do not count, as in SQLite's unique indexes).
  public var isUnique: Bool

  /// The definition in its written form: `[last_name], [first_name] DESC`.
  public var description: String {
    keys.map { $0.field.bracketed + ($0.descending ? " DESC" : "") }.joined(separator: ", ")
  }
}

/// A collection's `where` configuration as stored (table `where_settings`): aliases,
/// default values, queryable fields and indexes. Fields that are queryable or indexed are
/// materialized: kept, default applied, in a table of their own (`wf_<cid>`, one column per
/// field) that triggers on `documents` maintain, and that the indexes are made on.
struct WhereSettings: Sendable, Equatable {
  /// Alias name → the expression it stands for, as written.
  var aliases: [String: String] = [:]
  /// Values used for fields a document does not have (nested as the documents are).
  var defaults: JSONObject = [:]
  var queryableFields: [FieldPath] = []
  var indexes: [WhereIndex] = []

  var isEmpty: Bool { self == WhereSettings() }

  /// The materialized fields in column order: queryable fields, then index fields.
  var columns: [FieldPath] {
    var columns: [FieldPath] = []
    for field in queryableFields + indexes.flatMap({ $0.keys.map(\.field) })
    where !columns.contains(field) {
      columns.append(field)
    }
    return columns
  }

  /// The default value of a field: the member of ``defaults`` at its path, if any.
  func defaultValue(of field: FieldPath) -> JSON? {
    var current = JSON.object(defaults)
    for component in field.components {
      guard case .object(let object) = current, let next = object[component] else { return nil }
      current = next
    }
    return current
  }

  /// The aliases parsed, for the parser to expand.
  func parsedAliases() throws -> [String: WhereExpression] {
    try aliases.mapValues { try WhereParser.parse($0).expression }
  }

  // MARK: - Stored form

  var json: JSON {
    .object([
      "aliases": .object(JSONObject(aliases.sorted { $0.key < $1.key }.map { ($0, .string($1)) })),
      "defaults": .object(defaults),
      "queryable": .array(queryableFields.map { .array($0.components.map(JSON.string)) }),
      "indexes": .array(
        indexes.map { index in
          .object([
            "unique": .bool(index.isUnique),
            "keys": .array(
              index.keys.map {
                .object([
                  "field": .array($0.field.components.map(JSON.string)),
                  "descending": .bool($0.descending),
                ])
              }),
          ])
        }),
    ])
  }

  init() {}

  init(json: JSON) throws {
    func damaged() -> SetteeError {
      SetteeError(.corruption, "a collection's where settings (table where_settings) are damaged")
    }
    func path(_ value: JSON?) throws -> FieldPath {
      guard case .array(let items)? = value, !items.isEmpty else { throw damaged() }
      return FieldPath(
        components: try items.map {
          guard case .string(let text) = $0 else { throw damaged() }
          return text
        })
    }
    guard case .object(let object) = json,
      case .object(let aliases)? = object["aliases"],
      case .object(let defaults)? = object["defaults"],
      case .array(let queryable)? = object["queryable"],
      case .array(let indexes)? = object["indexes"]
    else { throw damaged() }
    for member in aliases {
      guard case .string(let text) = member.value else { throw damaged() }
      self.aliases[member.key] = text
    }
    self.defaults = defaults
    queryableFields = try queryable.map { try path($0) }
    self.indexes = try indexes.map { index in
      guard case .object(let members) = index, case .bool(let unique)? = members["unique"],
        case .array(let keys)? = members["keys"]
      else { throw damaged() }
      return WhereIndex(
        keys: try keys.map { key in
          guard case .object(let key) = key, case .bool(let descending)? = key["descending"]
          else { throw damaged() }
          return WhereIndex.Key(field: try path(key["field"]), descending: descending)
        }, isUnique: unique)
    }
  }
}

/// How a compiled `where` query reads fields: materialized ones from the field table's
/// columns, the others from the body, with their defaults.
struct WhereFields: Sendable {
  let settings: WhereSettings
  let aliases: [String: WhereExpression]
  /// The collection's field table, when it has one.
  let table: String?
  let columns: [FieldPath]
  /// The stored settings' version (0: none), which parsed strings are cached under.
  let version: Int64

  static let none = WhereFields(
    settings: WhereSettings(), aliases: [:], columns: [], table: nil, version: 0)

  private init(
    settings: WhereSettings, aliases: [String: WhereExpression], columns: [FieldPath],
    table: String?, version: Int64
  ) {
    (self.settings, self.aliases, self.columns, self.table, self.version) =
      (settings, aliases, columns, table, version)
  }

  /// - Throws: ``SetteeError`` with code `corruption` for a stored alias that does not
  ///   parse (damaged in the file, or beyond this version's limits).
  init(settings: WhereSettings, cid: Int64?, version: Int64) throws {
    self.settings = settings
    self.version = version
    // Stored aliases were checked when set: one that no longer parses was damaged.
    var aliases: [String: WhereExpression] = [:]
    for (name, text) in settings.aliases {
      aliases[name] = try StoredData.reading(
        "the alias \(JSON.string(name)) stored for collection \(cid.map(String.init) ?? "?")"
      ) { try WhereParser.parse(text).expression }
    }
    self.aliases = aliases
    columns = settings.columns
    table = columns.isEmpty || cid == nil ? nil : WhereFieldTable.tableName(cid!)
  }

  /// The column holding `field`, if it is materialized.
  func column(of field: FieldPath) -> Int? { table == nil ? nil : columns.firstIndex(of: field) }
}
