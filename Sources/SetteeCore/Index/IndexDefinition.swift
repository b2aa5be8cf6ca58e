/// A query index over fields of a collection's documents (SPEC section 3).
public struct IndexDefinition: Sendable, Hashable {
  /// The kind of index.
  public enum Kind: String, Sendable, Hashable {
    /// Ordered keys for `$eq`, `$in`, comparisons, `$beginsWith`, `$exists` and sorting.
    case json
    /// Full-text search for `$text` (SQLite FTS).
    case text
  }

  /// The most fields one index (JSON or TEXT) may have. A JSON index keeps two columns a
  /// field, and SQLite allows 2,000 columns a table (fewer in some builds); 64 is far more
  /// than a useful compound index holds (MongoDB allows 32).
  package static let maxFields = 64

  /// The index name, unique in its collection.
  public var name: String
  /// The indexed fields, as dotted paths.
  public var fields: [FieldPath]
  /// JSON or TEXT.
  public var kind: Kind
  /// `tokenize` (`simple` or `porter`) for TEXT indexes; nothing for JSON ones.
  public var settings: [String: String]
  /// The design document CouchDB would keep the index in (`_design/…`); `nil` for
  /// `_design/<name>`.
  public var designDocument: String?
  /// Only documents that match this selector are indexed (CouchDB's
  /// `partial_filter_selector`); the planner uses such an index only for queries whose
  /// selector includes every condition of it. `nil` indexes every document.
  package var partialFilter: Selector?

  /// ``designDocument``, or `_design/<name>`.
  public var designDocumentID: String { designDocument ?? "_design/\(name)" }

  /// Settings as a JSON object, keys sorted (as stored, listed and digested).
  package static func json(_ settings: [String: String]) -> JSON {
    .object(JSONObject(settings.sorted { $0.key < $1.key }.map { ($0, .string($1)) }))
  }

  /// A design document id as CouchDB reads one: `_design/` is added when missing.
  package static func designDocumentID(_ id: String) -> String {
    id.utf8.starts(with: "_design/".utf8) ? id : "_design/\(id)"
  }

  /// Checks a definition.
  ///
  /// - Throws: ``SetteeError`` with code `invalidIndex`: an empty name, no fields (for a
  ///   TEXT index), a field
  ///   twice, a setting other than `tokenize` (and that only for TEXT indexes), a tokenizer
  ///   other than `simple` or `porter`.
  public init(
    name: String, fields: [FieldPath], kind: Kind = .json, settings: [String: String] = [:]
  )
    throws
  {
    if name.isEmpty { throw SetteeError(.invalidIndex, "an index name must not be empty") }
    try Names.refuseNUL(name, kind: "index name", code: .invalidIndex)
    if name.utf8.first == UInt8(ascii: "_") {
      throw SetteeError(
        .invalidIndex,
        "index name \(quoted(name)) is reserved: names starting with '_' belong to the engine (\"_all_docs\" is the index of ids)"
      )
    }
    // A JSON index of no fields is CouchDB's (`"fields": []`): it holds every document,
    // in id order, and only CouchDB's dialect reads it; it has no entry table (see
    // StoredIndex).
    if fields.isEmpty && kind == .text {
      throw SetteeError(.invalidIndex, "index \(quoted(name)) needs at least one field")
    }
    if fields.count > IndexDefinition.maxFields {
      throw SetteeError(
        .limitExceeded,
        "index \(quoted(name)) has \(fields.count) fields, more than the limit of \(IndexDefinition.maxFields)"
      )
    }
    if let repeated = fields.first(where: { field in fields.filter { $0 == field }.count > 1 }) {
      throw SetteeError(
        .invalidIndex, "index \(quoted(name)) names field \(quoted(repeated.description)) twice")
    }
    if fields.contains(where: \.isRoot) {
      throw SetteeError(.invalidIndex, "index \(quoted(name)) has an empty field name")
    }
    var settings = settings
    switch kind {
    case .json:
      if let setting = settings.keys.sorted().first {
        throw SetteeError(
          .invalidIndex, "JSON index \(quoted(name)) takes no settings, not \(quoted(setting))")
      }
    case .text:
      if let setting = settings.keys.sorted().first(where: { $0 != "tokenize" }) {
        throw SetteeError(
          .invalidIndex,
          "TEXT index \(quoted(name)) takes only the setting \"tokenize\", not \(quoted(setting))")
      }
      let tokenizer = settings["tokenize"] ?? "simple"
      guard ["simple", "porter"].contains(tokenizer) else {
        throw SetteeError(
          .invalidIndex, "tokenizer must be \"simple\" or \"porter\", not \(quoted(tokenizer))")
      }
      settings["tokenize"] = tokenizer
    }
    self.name = name
    self.fields = fields
    self.kind = kind
    self.settings = settings
  }

  /// CouchDB's `ddoc`: `_design/` is added when missing.
  static func designDocument(_ value: JSON) throws -> String {
    guard case .string(let id) = value, !id.isEmpty, id != "_design/" else {
      throw SetteeError(
        .invalidIndex,
        "\"ddoc\" must be a design document id string, not \(JSONWriter.string(value))")
    }
    try Names.refuseNUL(id, kind: "design document id", code: .invalidIndex)
    return designDocumentID(id)
  }

  /// Parses field names and a type name as users give them.
  public init(
    name: String, fields: [String], type: String = "json", settings: [String: String] = [:]
  ) throws {
    guard let kind = Kind(rawValue: type) else {
      throw SetteeError(
        .invalidIndex, "index type must be \"json\" or \"text\", not \(quoted(type))")
    }
    let paths = try fields.map { field in
      do { return try FieldPath(parsing: field) } catch let error as SetteeError {
        throw SetteeError(
          error.code == .limitExceeded ? .limitExceeded : .invalidIndex,
          "index \(quoted(name)): \(error.message)")
      }
    }
    try self.init(name: name, fields: paths, kind: kind, settings: settings)
  }

  /// Parses CouchDB's `_index` body: `{"index": {"fields": ["name", {"age": "asc"}]},
  /// "name": "…", "type": "json"|"text", "settings": {"tokenize": "porter"}}`.
  public init(json: JSON) throws {
    guard case .object(let object) = json else {
      throw SetteeError(
        .invalidIndex, "an index definition must be a JSON object, not \(json.typeName)")
    }
    for key in object.keys where !["index", "name", "type", "settings", "ddoc"].contains(key) {
      throw SetteeError(.invalidIndex, "unknown index member \(quoted(key))")
    }
    guard case .object(let index)? = object["index"], case .array(let fieldList)? = index["fields"]
    else {
      throw SetteeError(.invalidIndex, #"an index definition needs "index": {"fields": [...]}"#)
    }
    for key in index.keys where key != "fields" && key != "partial_filter_selector" {
      throw SetteeError(
        .invalidIndex,
        "unknown member \(quoted(key)) of \"index\"; it takes \"fields\" and \"partial_filter_selector\""
      )
    }
    var partialFilter: Selector?
    if let filter = index["partial_filter_selector"] {
      guard case .object = filter else {
        throw SetteeError(
          .invalidIndex,
          "\"partial_filter_selector\" must be a selector object, not \(filter.typeName)")
      }
      do { partialFilter = try SelectorParser.parse(filter) } catch let error as SetteeError {
        throw SetteeError(.invalidIndex, "\"partial_filter_selector\": \(error.message)")
      }
      if partialFilter?.textClauseCount ?? 0 > 0 {
        throw SetteeError(.invalidIndex, "\"partial_filter_selector\" cannot hold $text")
      }
      if partialFilter == .all { partialFilter = nil }
    }
    let fields = try fieldList.map { field -> String in
      switch field {
      case .string(let name): return name
      case .object(let sorted) where sorted.count == 1:
        // CouchDB's {"field": "asc"}: the direction does not matter to Settee's indexes,
        // which serve both.
        guard case .string(let direction) = sorted[0].value, ["asc", "desc"].contains(direction)
        else {
          throw SetteeError(.invalidIndex, "index field direction must be \"asc\" or \"desc\"")
        }
        return sorted[0].key
      default:
        throw SetteeError(
          .invalidIndex, "index fields must be names, not \(JSONWriter.string(field))")
      }
    }
    var givenName: String?
    if let value = object["name"] {
      guard case .string(let name) = value else {
        throw SetteeError(
          .invalidIndex, "an index \"name\" must be a string, not \(value.typeName)")
      }
      givenName = name
    }
    let designDocument = try object["ddoc"].map(IndexDefinition.designDocument)
    var type = "json"
    if let value = object["type"] {
      guard case .string(let text) = value else {
        throw SetteeError(.invalidIndex, "index type must be a string, not \(value.typeName)")
      }
      type = text
    }
    var settings: [String: String] = [:]
    if let value = object["settings"] {
      guard case .object(let members) = value else {
        throw SetteeError(.invalidIndex, "index settings must be an object, not \(value.typeName)")
      }
      for member in members {
        guard case .string(let setting) = member.value else {
          throw SetteeError(.invalidIndex, "index setting \(quoted(member.key)) must be a string")
        }
        settings[member.key] = setting
      }
    }
    // Without a name, CouchDB names the index after a digest of its definition, so the
    // same definition gets the same name (and "exists") every time.
    let name =
      givenName
      ?? Hex.string(
        ofDigest: MD5.hash(
          JSONWriter.bytes([
            "fields": .array(fields.map(JSON.string)), "type": .string(type),
            "settings": IndexDefinition.json(settings),
            "partial_filter_selector": partialFilter?.json ?? .null,
          ])))
    try self.init(name: name, fields: fields, type: type, settings: settings)
    self.designDocument = designDocument
    self.partialFilter = partialFilter
  }

  /// CouchDB's shape in an index list: `{"ddoc": …, "name": …, "type": …, "def":
  /// {"fields": [{"name": "asc"}], "partial_filter_selector": …}}`.
  package var couchDBListing: JSON {
    var definition: JSONObject = [
      "fields": .array(fields.map { .object(JSONObject([($0.description, JSON.string("asc"))])) })
    ]
    if let partialFilter { definition["partial_filter_selector"] = partialFilter.json }
    var listing: JSONObject = [
      "ddoc": .string(designDocumentID), "name": .string(name), "type": .string(kind.rawValue),
      "def": .object(definition),
    ]
    if kind == .text {
      listing["settings"] = IndexDefinition.json(settings)
    }
    return .object(listing)
  }

  /// The special index CouchDB lists first: every document by `_id`.
  package static let allDocsListing: JSON = [
    "ddoc": nil, "name": "_all_docs", "type": "special",
    "def": ["fields": [["_id": "asc"]]],
  ]

  /// The seed's `listIndexes` shape: `{"fields": [...], "type": "json", "name": …}`, with
  /// `"settings": "{tokenize: simple}"` (a string, as the seed returns it) for TEXT indexes.
  package var listing: JSONObject {
    var object: JSONObject = [
      "fields": .array(fields.map { .string($0.description) }),
      "type": .string(kind.rawValue),
      "name": .string(name),
    ]
    if kind == .text {
      object["settings"] = .string("{tokenize: \(settings["tokenize"] ?? "simple")}")
    }
    return object
  }
}
