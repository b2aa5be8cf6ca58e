/// A whole query: selector, sort, projection, skip and limit (CouchDB's `_find` body).
///
/// ```swift
/// let query = try FindQuery(json: JSONParser.parse(#"""
///   {"selector": {"age": {"$gt": 12}}, "sort": [{"age": "desc"}], "limit": 10}
///   """#))
/// ```
public struct FindQuery: Sendable, Hashable {
  /// One sort key.
  public struct SortField: Sendable, Hashable {
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
  public var selector: Selector
  /// Sort keys, most significant first; ties are broken by `_id`, in the direction of the
  /// last sort key.
  public var sort: [SortField]
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

  /// A query from its parts (see `init(where:…)` for Swift predicates).
  public init(
    selector: Selector = .all, sort: [SortField] = [], fields: [FieldPath]? = nil, skip: Int = 0,
    limit: Int = 0, useIndex: String? = nil
  ) {
    self.selector = selector
    self.sort = sort
    self.fields = fields
    self.skip = skip
    self.limit = limit
    self.useIndex = useIndex
  }
}

extension FindQuery {
  /// Parses a `_find` body: `{"selector": …, "sort": […], "fields": […], "skip": n,
  /// "limit": n, "use_index": "name", "bookmark": "…", "execution_stats": true,
  /// "allow_fallback": false, "conflicts": false}`, and the members CouchDB's clients send
  /// that mean nothing here (`r`, `update`, `stable`), checked and ignored.
  ///
  /// - Throws: ``SetteeError`` with code `invalidQuery` naming the bad member.
  public init(json: JSON) throws {
    guard case .object(let object) = json else {
      throw SetteeError(.invalidQuery, "a query must be a JSON object, not \(json.typeName)")
    }
    self.init()
    for member in object {
      switch member.key {
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
    if let bookmark { _ = try FindBookmark.decode(bookmark, sort: sort) }
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
  public static func parseSort(_ json: JSON) throws -> [SortField] {
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
