/// The options of a view query or an all-documents query (seed 002's `CBLQuery`, CouchDB's
/// view query parameters). Every option is optional; the default returns every row in
/// ascending key order (reduced, when the view has a reduce).
///
/// ```swift
/// let safeway = ViewQuery().startingAt(["Safeway"]).endingAt(["Safeway", [:]])
/// let totals = ViewQuery().grouped(level: 1)
/// let nulls = ViewQuery().key(nil)                       // the JSON null key
/// ```
///
/// The initializer takes every option too; a key there is a ``Key``: any JSON literal or
/// `.null`, never the `nil` literal (which would read as "no key" where the null key was
/// meant): `ViewQuery(key: nil)` does not compile.
public struct ViewQuery: Sendable, Hashable {
  /// How a query treats a view that is behind the documents.
  public enum Staleness: String, Sendable, Hashable {
    /// Bring the view up to date, then answer (the default).
    case update
    /// Answer from the rows stored now, without updating (CouchDB's `stale=ok`).
    case ok
    /// Answer from the rows stored now, then update (CouchDB's `stale=update_after`).
    case updateAfter
  }

  /// Only rows with this key (CouchDB's `key`).
  public var key: JSON?
  /// Only rows with these keys, in the order of this list (CouchDB and Couchbase Lite 1.x
  /// do so, whatever seed 002's text says); a key listed twice gives its rows twice. On a
  /// reduce view, one key reduces its rows (a row with key `null` without grouping) and
  /// several need ``group`` (CouchDB's rule).
  public var keys: [JSON]?
  /// The first key of the range (in a descending query, the highest).
  public var startKey: JSON?
  /// The last key of the range (in a descending query, the lowest).
  public var endKey: JSON?
  /// Among rows whose key equals ``startKey``, the first document id.
  public var startKeyDocID: String?
  /// Among rows whose key equals ``endKey``, the last document id.
  public var endKeyDocID: String?
  /// Whether rows whose key equals ``endKey`` are included (default `true`).
  public var inclusiveEnd: Bool
  /// Highest keys first; start and end keys are then the maximum and minimum.
  public var descending: Bool
  /// Rows (or groups) to leave out first.
  public var skip: Int
  /// The most rows (or groups) to return; `nil` for all; `0` returns none, as in CouchDB.
  public var limit: Int?
  /// Couchbase Lite's prefix matching: 1 extends the range's high end to every string or
  /// array that starts with it (`"foo"` reaches `"foolish"`, `[1]` reaches `[1, "x"]`), 2
  /// applies that to the last element of an array key, and so on.
  public var prefixMatchLevel: Int
  /// Whether to reduce; `nil` means "when the view has a reduce" (CouchDB's default).
  public var reduce: Bool?
  /// Group reduced rows by their whole key.
  public var group: Bool
  /// Group reduced rows by the first N elements of array keys (other keys whole).
  public var groupLevel: Int?
  /// Attach each row's document (the emitting document, or for all-documents the
  /// document itself).
  public var includeDocs: Bool
  /// With ``includeDocs``: what the documents carry of their attachments (stubs unless
  /// asked for their data; CouchDB's `attachments` and `att_encoding_info`).
  public var attachments: AttachmentListing = .stubs
  /// Whether the view is brought up to date first.
  public var stale: Staleness
  /// Count the rows before the first one returned (CouchDB's `offset`), at a cost
  /// proportional to their number; ``ViewResult/offset`` is `nil` otherwise.
  public var includeOffset: Bool

  /// A query; every option defaults to "everything, ascending".
  public init(
    key: Key = .absent, keys: [JSON]? = nil, startKey: Key = .absent, endKey: Key = .absent,
    startKeyDocID: String? = nil, endKeyDocID: String? = nil, inclusiveEnd: Bool = true,
    descending: Bool = false, skip: Int = 0, limit: Int? = nil, prefixMatchLevel: Int = 0,
    reduce: Bool? = nil, group: Bool = false, groupLevel: Int? = nil,
    includeDocs: Bool = false, stale: Staleness = .update, includeOffset: Bool = false
  ) {
    self.key = key.json
    self.keys = keys
    self.startKey = startKey.json
    self.endKey = endKey.json
    self.startKeyDocID = startKeyDocID
    self.endKeyDocID = endKeyDocID
    self.inclusiveEnd = inclusiveEnd
    self.descending = descending
    self.skip = skip
    self.limit = limit
    self.prefixMatchLevel = prefixMatchLevel
    self.reduce = reduce
    self.group = group
    self.groupLevel = groupLevel
    self.includeDocs = includeDocs
    self.stale = stale
    self.includeOffset = includeOffset
  }

  /// ``keys`` in the order rows come: the list's order, or reversed when ``descending``
  /// (CouchDB 3.x walks the list backwards; all-documents queries do the same).
  package var keysInOrder: [JSON]? { descending ? keys.map { Array($0.reversed()) } : keys }

  /// The group level in effect: `nil` for no grouping, `Int.max` for whole keys.
  package var effectiveGroupLevel: Int? {
    if let groupLevel { return groupLevel == 0 && !group ? nil : groupLevel }
    return group ? Int.max : nil
  }
}

extension ViewQuery {
  /// Members CouchDB clients send that mean nothing here (conflicts, which the server
  /// adds, update sequences, cluster options): accepted and ignored.
  static let ignoredMembers: Set<String> = [
    "conflicts", "update_seq", "sorted", "stable",
  ]

  /// Parses CouchDB's view query parameters as a JSON object: `key`, `keys`,
  /// `startkey`/`start_key`, `endkey`/`end_key`, `startkey_docid`/`start_key_doc_id`,
  /// `endkey_docid`/`end_key_doc_id`, `inclusive_end`, `descending`, `skip`, `limit`,
  /// `group`, `group_level`, `reduce`, `include_docs`, `attachments`,
  /// `att_encoding_info`, `stale` (`"ok"`,
  /// `"update_after"`), `update` (`true`, `false`, `"lazy"`), and Settee's
  /// `prefix_match_level` and `include_offset`.
  ///
  /// - Throws: ``SetteeError`` with code `invalidQuery` naming an unknown member or a
  ///   value of the wrong type.
  public init(json: JSON) throws {
    guard case .object(let object) = json else {
      throw SetteeError(.invalidQuery, "a view query must be a JSON object, not \(json)")
    }
    self.init()
    var seen: Set<String> = []
    for member in object {
      let name = member.key
      let value = member.value
      let canonical = Self.aliases[name] ?? name
      guard seen.insert(canonical).inserted else {
        throw SetteeError(.invalidQuery, "view query option \(JSON.string(name)) is given twice")
      }
      switch canonical {
      case "key": key = value
      case "keys":
        guard case .array(let list) = value else { throw Self.wrongType(name, value, "an array") }
        keys = list
      case "startkey": startKey = value
      case "endkey": endKey = value
      case "startkey_docid": startKeyDocID = try Self.string(name, value)
      case "endkey_docid": endKeyDocID = try Self.string(name, value)
      case "inclusive_end": inclusiveEnd = try Self.bool(name, value)
      case "descending": descending = try Self.bool(name, value)
      case "skip": skip = try Self.count(name, value)
      case "limit": limit = try Self.count(name, value)
      case "prefix_match_level": prefixMatchLevel = try Self.count(name, value)
      case "group": group = try Self.bool(name, value)
      case "group_level": groupLevel = try Self.count(name, value)
      case "reduce": reduce = try Self.bool(name, value)
      case "include_docs": includeDocs = try Self.bool(name, value)
      case "include_offset": includeOffset = try Self.bool(name, value)
      case "attachments": attachments.data = try Self.bool(name, value)
      case "att_encoding_info": attachments.encodingInfo = try Self.bool(name, value)
      case "stale":
        switch value.stringValue {
        case "ok": stale = .ok
        case "update_after": stale = .updateAfter
        default: throw Self.wrongType(name, value, #""ok" or "update_after""#)
        }
      case "update":
        switch value {
        case .bool(true), .string("true"): stale = .update
        case .bool(false), .string("false"): stale = .ok
        case .string("lazy"): stale = .updateAfter
        default: throw Self.wrongType(name, value, #"true, false or "lazy""#)
        }
      default:
        guard Self.ignoredMembers.contains(name) else {
          throw SetteeError(
            .invalidQuery,
            "unknown view query option \(JSON.string(name)) (known: key, keys, startkey, endkey, startkey_docid, endkey_docid, inclusive_end, descending, skip, limit, group, group_level, reduce, include_docs, stale, update, prefix_match_level, include_offset)"
          )
        }
      }
    }
  }

  static let aliases: [String: String] = [
    "start_key": "startkey", "end_key": "endkey", "start_key_doc_id": "startkey_docid",
    "end_key_doc_id": "endkey_docid",
  ]

  static func wrongType(_ name: String, _ value: JSON, _ expected: String) -> SetteeError {
    SetteeError(
      .invalidQuery, "view query option \(JSON.string(name)) must be \(expected), not \(value)")
  }

  static func string(_ name: String, _ value: JSON) throws -> String {
    guard case .string(let text) = value else { throw wrongType(name, value, "a string") }
    return text
  }

  static func bool(_ name: String, _ value: JSON) throws -> Bool {
    switch value {
    case .bool(let flag): return flag
    case .string("true"): return true
    case .string("false"): return false
    default: throw wrongType(name, value, "true or false")
    }
  }

  static func count(_ name: String, _ value: JSON) throws -> Int {
    guard let number = value.int64Value, number >= 0, number <= Int64(Int.max) else {
      throw wrongType(name, value, "an integer of 0 or more")
    }
    return Int(number)
  }

  /// How the refusal of a reversed key range begins (the server answers it with CouchDB's
  /// members for it).
  package static let reversedRange = "no rows can match the key range"

  /// Checks the options against each other and against a view (CouchDB's
  /// `query_parse_error`s).
  ///
  /// - Parameters:
  ///   - hasReduce: whether the view has a reduce function.
  ///   - collation: the view's key order, to check that the range is not reversed.
  /// - Throws: ``SetteeError`` with code `invalidQuery` naming the options in conflict.
  package func validate(hasReduce: Bool, collation: ViewCollation) throws {
    func refuse(_ message: String) -> SetteeError { SetteeError(.invalidQuery, message) }
    guard skip >= 0 else { throw refuse("skip must be 0 or more, not \(skip)") }
    if let limit, limit < 0 { throw refuse("limit must be 0 or more, not \(limit)") }
    if let groupLevel, groupLevel < 0 {
      throw refuse("group_level must be 0 or more, not \(groupLevel)")
    }
    guard prefixMatchLevel >= 0 else {
      throw refuse("prefix_match_level must be 0 or more, not \(prefixMatchLevel)")
    }
    let reducing = reduce ?? hasReduce
    if reduce == true && !hasReduce {
      throw refuse("reduce is true but the view has no reduce function")
    }
    if !reducing && (group || groupLevel != nil) {
      throw refuse("group and group_level need a reduce (the view has none, or reduce is false)")
    }
    if reducing && includeDocs {
      throw refuse("include_docs is invalid for a reduce query: set reduce to false")
    }
    if keys != nil && (key != nil || startKey != nil || endKey != nil) {
      throw refuse("keys cannot be combined with key, startkey or endkey")
    }
    if key != nil && (startKey != nil || endKey != nil) {
      throw refuse("key cannot be combined with startkey or endkey")
    }
    if let keys, keys.count > 1, reducing, effectiveGroupLevel != Int.max {
      // One key reduces to one row (its key `null` without grouping); several would be
      // reduced together, or share groups (CouchDB's rule).
      throw refuse(
        "a query by more than one key on a reduce view needs group: true (or reduce: false)")
    }
    if let startKey, let endKey {
      let order = try collation.compare(startKey, endKey)
      if descending ? order < 0 : order > 0 {
        throw refuse(
          "\(Self.reversedRange) \(startKey) to \(endKey): reverse startkey and endkey, or set descending to \(!descending)"
        )
      }
    }
  }
}
