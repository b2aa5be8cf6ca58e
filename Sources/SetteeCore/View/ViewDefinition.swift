import Crypto

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
/// - `reduce` (optional): `"_count"`, `"_sum"` or `"_stats"`.
/// - `collation` (optional): `"unicode"` (the default, CouchDB's) or `"raw"`.
public struct ViewDefinition: Sendable, Hashable {
  /// What a declarative view emits as each row's value.
  public enum Value: Sendable, Hashable {
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
  /// The key's field paths.
  public var keyFields: [FieldPath]
  /// Whether the key is an array of the fields' values (`key` given as an array).
  public var compoundKey: Bool
  /// The position in ``keyFields`` whose arrays and objects emit a row per element.
  public var each: Int?
  /// The emitted value.
  public var value: Value
  /// Which documents emit (`nil`: all of them).
  public var filter: Selector?
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
    switch object["key"] {
    case .string?:
      keyFields = [try path(object["key"]!, "key")]
      compoundKey = false
    case .array(let list)? where !list.isEmpty:
      keyFields = try list.map { try path($0, "key") }
      compoundKey = true
    default:
      throw refuse("\"key\" must be a field path or a non-empty array of field paths")
    }
    switch object["each"] {
    case nil, .null?, .bool(false)?:
      each = nil
    case .bool(true)?:
      guard keyFields.count == 1, !compoundKey else {
        throw refuse("\"each\": true needs a key of one field; name the field of a compound key")
      }
      each = 0
    case let value?:
      let field = try path(value, "each")
      guard let position = keyFields.firstIndex(of: field) else {
        throw refuse("\"each\" must be one of the key's fields, not \(value)")
      }
      each = position
    }
    switch object["value"] {
    case nil, .null?: value = .none
    case .string("_doc")?: value = .document
    case .string?: value = .field(try path(object["value"]!, "value"))
    case .array(let list)?: value = .fields(try list.map { try path($0, "value") })
    case let other?:
      throw refuse(
        "\"value\" must be null, a field path, an array of paths or \"_doc\", not \(other)")
    }
    if let selector = object["filter"] {
      do { filter = try SelectorParser.parse(selector) } catch let error as SetteeError {
        throw refuse("\"filter\": \(error.message)")
      }
      if case .all? = filter { filter = nil }
    }
    switch object["reduce"] {
    case nil, .null?: reduce = nil
    case .string(let name)?:
      guard let builtin = ViewReduce(builtin: name) else {
        throw refuse(
          "\"reduce\" must be \"_count\", \"_sum\" or \"_stats\", not \(JSON.string(name))")
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
    "name", "key", "each", "value", "filter", "reduce", "collation",
  ]

  /// The version stored with the view: an MD5 digest of the definition's JSON, so that any
  /// change to it rebuilds the view.
  public var version: String {
    "json-md5:" + Hex.string(ofDigest: Insecure.MD5.hash(data: JSONWriter.bytes(json)))
  }

  public static func == (lhs: ViewDefinition, rhs: ViewDefinition) -> Bool { lhs.json == rhs.json }
  public func hash(into hasher: inout Hasher) { hasher.combine(json) }

  /// The rows a document emits: `(key, value)` pairs.
  ///
  /// - Throws: ``SetteeError`` from the filter (a `$regex` over its time limit).
  public func map(_ document: Document) throws -> [(key: JSON, value: JSON)] {
    let whole = JSON.object(document.json)
    if let filter, !(try Matcher.matches(filter, whole)) { return [] }
    var parts: [JSON] = []
    for field in keyFields {
      guard let part = whole.value(at: field) else { return [] }
      parts.append(part)
    }
    let emitted: JSON
    switch value {
    case .none: emitted = .null
    case .field(let path): emitted = whole.value(at: path) ?? .null
    case .fields(let paths): emitted = .array(paths.map { whole.value(at: $0) ?? .null })
    case .document: emitted = whole
    }
    func key(_ parts: [JSON]) -> JSON { compoundKey ? .array(parts) : parts[0] }
    guard let each else { return [(key(parts), emitted)] }
    let expanded: [JSON]
    switch parts[each] {
    case .array(let elements): expanded = elements
    case .object(let members): expanded = members.map(\.value)
    case let single: expanded = [single]
    }
    return expanded.map { element in
      var copy = parts
      copy[each] = element
      return (key(copy), emitted)
    }
  }
}
