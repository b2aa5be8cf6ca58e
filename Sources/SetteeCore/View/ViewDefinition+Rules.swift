extension ViewDefinition {
  // The one-rule form's parts, derived from ``rules`` (what the definition held before
  // views had several rules): for the first rule, as far as fields can say it.

  /// The first rule's key fields: its key when that is a field or an array of fields
  /// (empty otherwise).
  package var keyFields: [FieldPath] {
    switch rules[0].key {
    case .field(let field): [field]
    case .array(let parts): Self.fields(parts) ?? []
    default: []
    }
  }
  /// Whether the first rule's key is an array (`key` given as an array).
  package var compoundKey: Bool { if case .array = rules[0].key { true } else { false } }
  /// The position in the first rule's key whose arrays and objects emit a row per element.
  package var each: Int? { rules[0].each }
  /// The first rule's value, as far as fields can say it (`nil` for a constant other than
  /// `null`, an object, or an array that is not of fields).
  package var value: Value? {
    switch rules[0].value {
    case .constant(.null): Value.none
    case .field(let field): .field(field)
    case .document: .document
    case .array(let parts): Self.fields(parts).map(Value.fields)
    default: nil
    }
  }
  /// Which documents the first rule maps (`nil`: all of them).
  package var filter: Selector? { rules[0].filter }

  /// The paths of `terms` when every one is a field.
  static func fields(_ terms: [Term]) -> [FieldPath]? {
    var paths: [FieldPath] = []
    for term in terms {
      guard case .field(let path) = term else { return nil }
      paths.append(path)
    }
    return paths
  }

  /// A part of what a rule emits, stated as data (never code): a field, a constant, or an
  /// array or object made of such parts.
  package indirect enum Term: Sendable, Hashable {
    /// A field's value (`"pet.species"`; `_id` and `_rev` are the document's).
    case field(FieldPath)
    /// A constant (`{"const": 1}`).
    case constant(JSON)
    /// An array of parts (a compound key, or `["first", "last"]` as a value).
    case array([Term])
    /// An object of parts (`{"object": {"title": "title", "n": {"const": 1}}}`).
    case object(names: [String], terms: [Term])
    /// The whole document, `_id` and `_rev` included (`"_doc"`).
    case document
  }

  /// One `emit` of CouchDB's map functions, as data: each document the filter lets through
  /// emits one row (or one per element, with `each`).
  package struct Rule: Sendable, Hashable {
    /// The key. A document missing a field the key reads emits nothing by this rule.
    package var key: Term
    /// Which part of the key emits a row per element of an array (or member value of an
    /// object): its position in an array key, or 0 for a key of one field.
    package var each: Int?
    /// The value (a missing field gives `null`).
    package var value: Term
    /// Which documents this rule applies to (`nil`: all of them).
    package var filter: Selector?
  }

  /// The rows `rule` makes of a document (given as JSON, `_id` and `_rev` included).
  static func rows(_ rule: Rule, _ whole: JSON) throws -> [(key: JSON, value: JSON)] {
    if let filter = rule.filter, !(try Matcher.matches(filter, whole)) { return [] }
    guard let key = evaluate(rule.key, whole, missing: nil) else { return [] }
    let value = evaluate(rule.value, whole, missing: .null) ?? .null
    guard let each = rule.each else { return [(key, value)] }
    func elements(_ part: JSON) -> [JSON] {
      switch part {
      case .array(let elements): elements
      case .object(let members): members.map(\.value)
      case let single: [single]
      }
    }
    guard case .array(var parts) = key, case .array = rule.key else {
      return elements(key).map { ($0, value) }
    }
    return elements(parts[each]).map { element in
      parts[each] = element
      return (.array(parts), value)
    }
  }

  /// A term's JSON in `whole`; a missing field is `missing` (`nil` makes the whole term
  /// missing, as a key's part is; `null` for values).
  static func evaluate(_ term: Term, _ whole: JSON, missing: JSON?) -> JSON? {
    switch term {
    case .field(let path): return whole.value(at: path) ?? missing
    case .constant(let value): return value
    case .document: return whole
    case .array(let terms):
      var parts: [JSON] = []
      for term in terms {
        guard let part = evaluate(term, whole, missing: missing) else { return nil }
        parts.append(part)
      }
      return .array(parts)
    case .object(let names, let terms):
      var members: [(String, JSON)] = []
      for (name, term) in zip(names, terms) {
        guard let part = evaluate(term, whole, missing: missing) else { return nil }
        members.append((name, part))
      }
      return .object(JSONObject(members))
    }
  }

  /// Parses a term: a field path, `"_doc"` (values only), `{"const": …}`,
  /// `{"object": {name: term, …}}`, or an array of terms.
  static func term(
    _ json: JSON, _ member: String, allowsDocument: Bool, path: (JSON, String) throws -> FieldPath,
    refuse: (String) -> SetteeError
  ) throws -> Term {
    switch json {
    case .string("_doc") where allowsDocument: return .document
    case .string: return .field(try path(json, member))
    case .array(let list):
      return .array(
        try list.map {
          try term($0, member, allowsDocument: allowsDocument, path: path, refuse: refuse)
        })
    case .object(let object) where object.count == 1 && object[0].key == "const":
      return .constant(object[0].value)
    case .object(let object) where object.count == 1 && object[0].key == "object":
      guard case .object(let members) = object[0].value else {
        throw refuse("\(JSON.string(member)): \"object\" must hold an object of terms")
      }
      return .object(
        names: members.map(\.key),
        terms: try members.map {
          try term($0.value, member, allowsDocument: allowsDocument, path: path, refuse: refuse)
        })
    default:
      throw refuse(
        "\(JSON.string(member)) must be a field path, {\"const\": …}, {\"object\": {…}}\(allowsDocument ? ", \"_doc\"" : "") or an array of those, not \(json)"
      )
    }
  }
}
