/// A whole query: selector, sort, projection, skip and limit (CouchDB's `_find` body).
///
/// ```swift
/// let query = try FindQuery(json: JSONParser.parse(#"""
///   {"selector": {"age": {"$gt": 12}}, "sort": [{"age": "desc"}], "limit": 10}
///   """#))
/// ```
public struct FindQuery: Sendable, Hashable {
  /// One sort key.
  package struct SortField: Sendable, Hashable {
    /// The field to sort by.
    public var path: FieldPath
    /// Largest first when `true`.
    public var descending: Bool

    /// A sort on one field.
    public init(_ path: FieldPath, descending: Bool = false) {
      self.path = path
      self.descending = descending
    }

    /// Sort by full-text relevance (`{"$relevance": "desc"}`), most relevant first when
    /// descending; the query must hold a `$text` clause.
    public static func relevance(descending: Bool = true) -> SortField {
      SortField(FieldPath(components: ["$relevance"]), descending: descending)
    }

    /// Whether this sorts by full-text relevance.
    public var isRelevance: Bool { path.components == ["$relevance"] }
  }

  /// Which documents match.
  package var selector: Selector
  /// Sort keys, most significant first; ties are broken by `_id`, in the direction of the
  /// last sort key.
  package var sort: [SortField]
  /// The fields to return (besides `_id` and `_rev`, which always come back); `nil` for
  /// whole documents.
  public var fields: [FieldPath]?
  /// How many results to skip; 0 for none.
  public var skip: Int
  /// The most results to return; 0 for no limit.
  public var limit: Int
  /// The index the query should use, if any (`use_index`): an index name, or a design
  /// document id (`_design/…`) whose index to use.
  public var useIndex: String?
  /// Where to start: the `bookmark` of the previous page's response (CouchDB's paging);
  /// `nil` (or `"nil"`) for the beginning.
  public var bookmark: String?
  /// With `false`, a `useIndex` that cannot answer the query is an error
  /// (`noUsableIndex`); by default the query runs without it, with a warning (CouchDB's
  /// `allow_fallback`).
  public var allowFallback = true
  /// Whether the response reports what the query read (`execution_stats`).
  public var executionStats = false
  /// Whether results carry `_conflicts` (CouchDB's `conflicts`): the other live leaves of
  /// each conflicted document, in ``Document/conflicts``.
  public var conflicts = false
  /// The decoded ``bookmark``, set by the engine when it runs the query.
  package var position: FindBookmark?
  /// Whose semantics the query follows: Cloudant Sync's (the default) or CouchDB 3.5's
  /// (``QueryDialect``).
  public var dialect: QueryDialect = .cloudantSync
  /// The selector in CouchDB's normal form, for ``QueryDialect/couchDB`` (parsed from the
  /// JSON the query came from; made from ``selector`` when the query was built in Swift).
  package var mango: MangoSelector?
  /// A CouchDB-dialect query that said `"limit": 0`: no results (``limit`` 0 means none
  /// in Swift).
  package var returnsNothing = false

  /// A query from its parts (see `init(where:…)` for Swift predicates).
  ///
  /// - Parameter limit: the most results; by default none for Cloudant Sync's dialect and
  ///   25 for CouchDB's, as CouchDB's `_find` has it.
  package init(
    selector: Selector = .all, sort: [SortField] = [], fields: [FieldPath]? = nil, skip: Int = 0,
    limit: Int? = nil, useIndex: String? = nil, dialect: QueryDialect = .cloudantSync
  ) {
    self.selector = selector
    self.sort = sort
    self.fields = fields
    self.skip = skip
    self.limit = limit ?? (dialect == .couchDB ? FindQuery.couchDBDefaultLimit : 0)
    self.useIndex = useIndex
    self.dialect = dialect
  }

  /// CouchDB's `limit` when a `_find` gives none.
  package static let couchDBDefaultLimit = 25

  /// The selector in CouchDB's normal form (``mango``, else made from ``selector``).
  package func mangoSelector() throws -> MangoSelector {
    if let mango { return mango }
    return selector == .all ? .everything : try MangoSelector.parse(selector.json)
  }

  /// `use_index` given as `[design document, index name]` in CouchDB's dialect.
  package var useIndexPair: [String]?

  /// `use_index` as CouchDB splits it: `[]`, `[design document]` or `[design document,
  /// index name]` (`"d"`, `"_design/d"`, `"d/name"`).
  package var useIndexParts: [String] {
    guard let useIndex, !useIndex.isEmpty else { return [] }
    if let useIndexPair, useIndexPair.joined(separator: "/") == useIndex { return useIndexPair }
    guard let slash = useIndex.firstIndex(of: "/") else { return [useIndex] }
    let (first, rest) = (
      String(useIndex[..<slash]), String(useIndex[useIndex.index(after: slash)...])
    )
    return first == "_design" ? [useIndex] : [first, rest]
  }
}

/// Whose query semantics a ``FindQuery`` follows.
///
/// Settee's Swift API and CLI follow Cloudant Sync's, the seed's (implicit matching of
/// array elements, ranges within one type, strings by code point, no default limit);
/// `settee serve` answers `_find` with CouchDB 3.5's, so that a CouchDB client (PouchDB,
/// couchdb-python) gets CouchDB's answers. `docs/query-language.md` sets them side by side.
public enum QueryDialect: String, Sendable, Hashable, CaseIterable {
  /// Cloudant Sync's semantics (the default).
  case cloudantSync = "cloudant-sync"
  /// CouchDB 3.5's Mango semantics: a path reads one value (array elements by number
  /// only), comparisons cross types in CouchDB's collation (strings by ICU's root
  /// collation), `limit` 25 unless given, the order of the index CouchDB would choose, and
  /// CouchDB's refusals (`no_usable_index` for a sort no index gives).
  case couchDB = "couchdb"
}

extension FindQuery {
  /// Parses a `_find` body: `{"selector": …, "sort": […], "fields": […], "skip": n,
  /// "limit": n, "use_index": "name", "bookmark": "…", "execution_stats": true,
  /// "allow_fallback": false, "conflicts": false}`, and the members CouchDB's clients send
  /// that mean nothing here (`r`, `update`, `stable`), checked and ignored.
  ///
  /// In CouchDB's dialect the selector is read as CouchDB reads it (errors carry CouchDB's
  /// names, ``SetteeError/couchDBError``), `limit` is 25 unless given, `use_index` is
  /// CouchDB's `"design doc"`, `"design doc/name"` or `["design doc", "name"]`, and
  /// `fields` name paths as CouchDB splits them.
  ///
  /// - Throws: ``SetteeError`` with code `invalidQuery` naming the bad member.
  public init(json: JSON, dialect: QueryDialect = .cloudantSync) throws {
    guard case .object(let object) = json else {
      throw SetteeError(.invalidQuery, "a query must be a JSON object, not \(json.typeName)")
    }
    // A full-text search is Settee's TEXT index's (Cloudant's `$text`; CouchDB has one only
    // with its search plugin): such a query runs in the default dialect, with CouchDB's
    // default limit.
    let searchesText = dialect == .couchDB && FindQuery.holdsText(object["selector"])
    self.init(dialect: searchesText ? .cloudantSync : dialect)
    if searchesText, object["limit"] == nil { limit = FindQuery.couchDBDefaultLimit }
    let couchDB = self.dialect == .couchDB
    for member in object {
      switch member.key {
      case "selector" where couchDB:
        let mango = try MangoSelector.parse(member.value)
        self.mango = mango
        selector = mango.candidates
      case "fields" where couchDB:
        guard case .array(let names) = member.value else {
          throw SetteeError.couchDB(
            "invalid_fields",
            "Fields must be an array of strings, not: \(JSONWriter.string(member.value))")
        }
        let paths = try names.map { name -> FieldPath in
          guard case .string(let text) = name else {
            throw SetteeError.couchDB(
              "invalid_field", "Invalid JSON for field spec: \(JSONWriter.string(name))")
          }
          return FieldPath(components: MangoSelector.components(text))
        }
        fields = paths.isEmpty ? nil : paths
      case "limit" where couchDB:
        limit = try FindQuery.parseCount(member.value, "limit")
        returnsNothing = limit == 0
      case "use_index" where couchDB:
        switch member.value {
        // `null` too: CouchDB's own test client sends it for "no index named".
        case .array([]), .null: useIndex = nil
        case .string(let name): useIndex = name
        case .array(let parts) where parts.count == 1 && parts[0].stringValue != nil:
          useIndex = parts[0].stringValue
        case .array(let parts)
        where parts.count == 2 && parts[0].stringValue != nil && parts[1].stringValue != nil:
          // Kept as two parts: `["_design/d", "name"]` is not the string "_design/d/name",
          // which CouchDB reads as one design document.
          useIndexPair = [parts[0].stringValue!, parts[1].stringValue!]
          useIndex = useIndexPair!.joined(separator: "/")
        default:
          throw SetteeError.couchDB(
            "invalid_index_name", "Invalid index name: \(JSONWriter.string(member.value))")
        }
      case "selector": selector = try SelectorParser.parse(member.value)
      case "sort":
        sort = try FindQuery.parseSort(member.value)
        if sort.contains(where: \.isRelevance), !sort[0].isRelevance {
          throw SetteeError(.invalidQuery, "\"$relevance\" must be the first sort key")
        }
      case "fields":
        // An empty list asks for whole documents, as in CouchDB and Cloudant Sync.
        let parsed = try FindQuery.parseFields(member.value)
        fields = parsed.isEmpty ? nil : parsed
      case "skip": skip = try FindQuery.parseCount(member.value, "skip")
      case "limit": limit = try FindQuery.parseCount(member.value, "limit")
      case "use_index":
        switch member.value {
        case .null, .array([]): useIndex = nil
        case .string(let name):
          // CouchDB's forms: "name" or "_design/ddoc", "ddoc/name", "_design/ddoc/name";
          // anything else is its `invalid_index_name`, not a silent fallback.
          let parts = name.split(separator: "/", omittingEmptySubsequences: false)
          if parts.count > 3 || (parts.count == 3 && parts[0] != "_design") {
            throw SetteeError(
              .invalidQuery,
              "\"use_index\" \(quoted(name)) is not a valid index name: give \"name\", \"_design/ddoc\", \"ddoc/name\" or \"_design/ddoc/name\""
            )
          }
          useIndex = parts.count == 3 ? String(parts[2]) : name
        case .array(let parts) where parts.count == 1 && parts[0].stringValue != nil:
          useIndex = parts[0].stringValue
        // CouchDB's ["design doc", "name"]: the name is what identifies Settee's indexes.
        case .array(let parts) where parts.count == 2 && parts[1].stringValue != nil:
          useIndex = parts[1].stringValue
        default:
          throw SetteeError(
            .invalidQuery,
            "\"use_index\" needs an index name, a design document id or [design document, name], not \(JSONWriter.string(member.value))"
          )
        }
      case "bookmark":
        switch member.value {
        case .null: bookmark = nil
        case .string(let token): bookmark = token
        default:
          throw SetteeError(
            .invalidQuery, "\"bookmark\" needs a string, not \(member.value.typeName)")
        }
      case "allow_fallback": allowFallback = try FindQuery.flag(member)
      case "execution_stats": executionStats = try FindQuery.flag(member)
      case "conflicts": conflicts = try FindQuery.flag(member)
      // What CouchDB's clients send that has no meaning for one local file: a read quorum,
      // whether to update the index first (Settee's always are), stable shard choice.
      case "update", "stable": _ = try FindQuery.flag(member)
      case "r":
        guard let quorum = SelectorParser.integer(member.value), quorum >= 1 else {
          throw SetteeError(
            .invalidQuery, "\"r\" needs a positive integer, not \(JSONWriter.string(member.value))")
        }
      default:
        throw SetteeError(
          .invalidQuery,
          "unknown query member \(quoted(member.key)); expected selector, sort, fields, skip, limit, use_index, bookmark, execution_stats, allow_fallback, conflicts, r, update or stable"
        )
      }
    }
    if object["selector"] == nil {
      throw SetteeError(.invalidQuery, "a query needs a \"selector\" (use {} for every document)")
    }
    if let bookmark {
      if couchDB {
        _ = try CouchDBBookmark(token: bookmark)
      } else {
        _ = try FindBookmark.decode(bookmark, sort: sort)
      }
    }
  }

  /// Whether a selector holds `$text` anywhere.
  static func holdsText(_ json: JSON?) -> Bool {
    switch json {
    case .object(let object)?:
      object.contains { $0.key == "$text" || holdsText($0.value) }
    case .array(let elements)?: elements.contains { holdsText($0) }
    default: false
    }
  }

  static func flag(_ member: JSONObject.Member) throws -> Bool {
    guard case .bool(let flag) = member.value else {
      throw SetteeError(
        .invalidQuery,
        "\(quoted(member.key)) needs true or false, not \(JSONWriter.string(member.value))")
    }
    return flag
  }

  /// Parses a `sort` array: `["name", {"age": "desc"}]`.
  package static func parseSort(_ json: JSON) throws -> [SortField] {
    guard case .array(let elements) = json else {
      throw SetteeError(.invalidQuery, "\"sort\" needs an array, not \(json.typeName)")
    }
    return try elements.map { element in
      switch element {
      case .string("$relevance"): return .relevance(descending: true)
      case .string(let field): return SortField(try FieldPath(parsing: field, allowingDollar: true))
      case .object(let object) where object.count == 1:
        let member = object[0]
        guard case .string(let direction) = member.value, direction == "asc" || direction == "desc"
        else {
          throw SetteeError(
            .invalidQuery,
            "sort direction for \(quoted(member.key)) must be \"asc\" or \"desc\", not \(JSONWriter.string(member.value))"
          )
        }
        if member.key == "$relevance" { return .relevance(descending: direction == "desc") }
        return SortField(
          try FieldPath(parsing: member.key, allowingDollar: true), descending: direction == "desc")
      default:
        throw SetteeError(
          .invalidQuery,
          "a sort entry must be \"field\" or {\"field\": \"asc\"|\"desc\"}, not \(JSONWriter.string(element))"
        )
      }
    }
  }

  static func parseFields(_ json: JSON) throws -> [FieldPath] {
    guard case .array(let elements) = json else {
      throw SetteeError(
        .invalidQuery, "\"fields\" needs an array of field names, not \(json.typeName)")
    }
    return try elements.map { element in
      guard case .string(let field) = element else {
        throw SetteeError(
          .invalidQuery, "\"fields\" needs field names, not \(JSONWriter.string(element))")
      }
      return try FieldPath(parsing: field, allowingDollar: true)
    }
  }

  /// `skip` or `limit`: any integer from 0 to 2^63 − 1 (a whole number written as a double,
  /// such as `10.0`, counts).
  static func parseCount(_ json: JSON, _ name: String) throws -> Int {
    guard let count = SelectorParser.integer(json), count >= 0 else {
      throw SetteeError(
        .invalidQuery,
        "\(quoted(name)) needs an integer from 0 to 9223372036854775807, not \(JSONWriter.string(json))"
      )
    }
    return Int(count)
  }
}
