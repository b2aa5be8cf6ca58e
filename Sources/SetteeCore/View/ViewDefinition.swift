/// A view defined as JSON and stored in the database, so that the command line and any
/// process can define, update and query it without Swift code (docs/views.md):
///
/// ```json
/// {"name": "by_store_item", "key": ["store", "item"], "value": "price",
///  "filter": {"type": "purchase"}, "reduce": "_sum"}
/// {"name": "phones", "key": "phone", "each": "phone", "value": ["first", "last"]}
/// ```
///
/// - `key`: a field path, or an array of paths for a compound (array) key. A document
///   missing any key field emits nothing (a `null` field is a `null` key).
/// - `each` (optional): one of the key's paths, or `true` when the key is one path: an
///   array there emits one row per element, an object one row per member value (the
///   seed's phone numbers); any other value emits one row.
/// - `value` (optional): absent or `null` for a `null` value, a path for that field (`null`
///   when missing), an array of paths for an array of their values, or `"_doc"` for the
///   whole document.
/// - `filter` (optional): a Mango selector; only documents it matches emit.
/// - `emit` (instead of `key`, `each` and `value`): a list of rules, each with its own
///   `key`, `each`, `value` and `filter`, for a map function that emits several rows. A
///   top-level `filter` then applies to every rule.
/// - Keys and values may also be constants (`{"const": 1}`), objects of parts
///   (`{"object": {"title": "title", "n": {"const": 1}}}`), and arrays mixing parts.
/// - `reduce` (optional): `"_count"`, `"_sum"` or `"_stats"`.
/// - `collation` (optional): `"unicode"` (the default, CouchDB's) or `"raw"`.
public struct ViewDefinition: Sendable, Hashable {
  /// What a declarative view emits as each row's value.
  package enum Value: Sendable, Hashable {
    /// `null`.
    case none
    /// One field's value (`null` when missing).
    case field(FieldPath)
    /// An array of several fields' values.
    case fields([FieldPath])
    /// The whole document, `_id` and `_rev` included.
    case document
  }

  /// The view's name.
  public var name: String
  /// What the view emits: one rule per `emit` of a map function (the top-level `key`,
  /// `each`, `value` and `filter` state one).
  package var rules: [Rule]
  /// The built-in reduce, if any.
  public var reduce: ViewReduce?
  /// The key order.
  public var collation: ViewCollation
  /// The definition as given (canonical JSON), which is also what the view's version is
  /// derived from: a changed definition rebuilds the view.
  public let json: JSON

  /// Parses and checks a definition.
  ///
  /// - Throws: ``SetteeError`` with code `invalidArgument` naming the member at fault.
  public init(json: JSON) throws {
    func refuse(_ message: String) -> SetteeError {
      SetteeError(.invalidArgument, "view definition: \(message)")
    }
    guard case .object(let object) = json else {
      throw refuse("must be a JSON object, not \(json)")
    }
    for member in object where !Self.members.contains(member.key) {
      throw refuse(
        "unknown member \(JSON.string(member.key)) (known: \(Self.members.sorted().joined(separator: ", ")))"
      )
    }
    guard case .string(let name)? = object["name"] else {
      throw refuse("\"name\" must be a string")
    }
    self.name = name
    func path(_ value: JSON, _ member: String) throws -> FieldPath {
      guard case .string(let text) = value else {
        throw refuse("\(JSON.string(member)) must hold field paths (strings), not \(value)")
      }
      do { return try FieldPath(parsing: text, allowingDollar: true) } catch let error
        as SetteeError where error.code == .limitExceeded
      {
        throw SetteeError(.limitExceeded, "view \(JSON.string(name)): \(error.message)")
      } catch {
        throw refuse("\(JSON.string(member)) holds a bad field path \(JSON.string(text))")
      }
    }
    // The rules: `emit`'s list, or the one the top-level members state.
    func rule(_ object: JSONObject, _ where: String) throws -> Rule {
      guard let keyJSON = object["key"] else { throw refuse("\(`where`)\"key\" is missing") }
      if case .array(let list) = keyJSON, list.isEmpty {
        throw refuse("\(`where`)\"key\" must not be an empty array")
      }
      let key = try Self.term(keyJSON, "key", allowsDocument: false, path: path, refuse: refuse)
      var each: Int? = nil
      switch object["each"] {
      case nil, .null?, .bool(false)?: break
      case .bool(true)?:
        guard case .field = key else {
          throw refuse(
            "\(`where`)\"each\": true needs a key of one field; name the field of a compound key")
        }
        each = 0
      case let value?:
        let field = try path(value, "each")
        guard case .array(let parts) = key, let position = parts.firstIndex(of: .field(field))
        else {
          if case .field(field) = key {
            each = 0
            break
          }
          throw refuse("\(`where`)\"each\" must be one of the key's fields, not \(value)")
        }
        each = position
      }
      let value: Term
      switch object["value"] {
      case nil, .null?: value = .constant(.null)
      case let json?:
        value = try Self.term(json, "value", allowsDocument: true, path: path, refuse: refuse)
      }
      var filter: Selector? = nil
      if let selector = object["filter"] {
        do { filter = try SelectorParser.parse(selector) } catch let error as SetteeError {
          throw refuse("\(`where`)\"filter\": \(error.message)")
        }
        if case .all? = filter { filter = nil }
      }
      return Rule(key: key, each: each, value: value, filter: filter)
    }
    if let emit = object["emit"] {
      for member in ["key", "each", "value"] where object[member] != nil {
        throw refuse("\"\(member)\" belongs in each rule of \"emit\", not beside it")
      }
      guard case .array(let list) = emit, !list.isEmpty else {
        throw refuse("\"emit\" must be a non-empty array of rules ({\"key\", \"value\", …})")
      }
      rules = try list.enumerated().map { position, element in
        guard case .object(let members) = element else {
          throw refuse("\"emit\" rule \(position) must be an object, not \(element)")
        }
        for member in members where !["key", "each", "value", "filter"].contains(member.key) {
          throw refuse(
            "\"emit\" rule \(position): unknown member \(JSON.string(member.key)) (known: each, filter, key, value)"
          )
        }
        return try rule(members, "\"emit\" rule \(position): ")
      }
    } else {
      rules = [try rule(object, "")]
    }
    // Beside `emit`, a top-level filter applies to every rule.
    if object["emit"] != nil, let selector = object["filter"] {
      let common: Selector
      do { common = try SelectorParser.parse(selector) } catch let error as SetteeError {
        throw refuse("\"filter\": \(error.message)")
      }
      if common != .all {
        for position in rules.indices {
          rules[position].filter = rules[position].filter.map { .and([common, $0]) } ?? common
        }
      }
    }
    switch object["reduce"] {
    case nil, .null?: reduce = nil
    case .string(let name)?:
      guard let builtin = ViewReduce(builtin: name) else {
        throw refuse(
          "\"reduce\" must be \"_count\", \"_sum\", \"_stats\" or \"_approx_count_distinct\", not \(JSON.string(name))"
        )
      }
      reduce = builtin
    case let other?: throw refuse("\"reduce\" must be a string, not \(other)")
    }
    switch object["collation"] {
    case nil, .null?: collation = .unicode
    case .string(let name)?:
      guard let parsed = ViewCollation(rawValue: name) else {
        throw refuse("\"collation\" must be \"unicode\" or \"raw\", not \(JSON.string(name))")
      }
      collation = parsed
    case let other?: throw refuse("\"collation\" must be a string, not \(other)")
    }
    self.json = json
  }

  static let members: Set<String> = [
    "name", "key", "each", "value", "filter", "reduce", "collation", "emit",
  ]

  /// The version stored with the view: an MD5 digest of the definition's JSON, so that any
  /// change to it rebuilds the view.
  public var version: String {
    "json-md5:" + Hex.string(ofDigest: MD5.hash(JSONWriter.bytes(json)))
  }

  public static func == (lhs: ViewDefinition, rhs: ViewDefinition) -> Bool { lhs.json == rhs.json }
  public func hash(into hasher: inout Hasher) { hasher.combine(json) }

  /// The rows a document emits: `(key, value)` pairs.
  ///
  /// - Throws: ``SetteeError`` from the filter (a `$regex` over its time limit).
  package func map(_ document: Document) throws -> [(key: JSON, value: JSON)] {
    let whole = JSON.object(document.json)
    var rows: [(key: JSON, value: JSON)] = []
    for rule in rules { rows += try Self.rows(rule, whole) }
    return rows
  }
}
