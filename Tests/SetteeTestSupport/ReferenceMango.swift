import Foundation
import SetteeCore

/// A second statement of CouchDB 3.5's `_find` (the `couchdb` dialect), written from
/// docs/query-language.md's dialect table and CouchDB's Mango modules as they read
/// (`mango_selector`'s normalization and matching, `mango_idx_view`'s usable indexes,
/// `mango_cursor_view`'s choice among them, `mango_fields`' projection), for the dialect's
/// differential tests. It shares nothing with the engine but the `JSON` type: no
/// `MangoSelector`, `MangoMatcher`, `MangoPlan` or collation code. Strings compare through
/// ``ReferenceView`` (Foundation's ICU root collation; the engine builds ICU sort keys).
///
/// Simplified on purpose, where the simplification cannot change an answer:
/// - an index is read whole, not over its range: CouchDB's matcher checks every row it
///   reads with the same comparisons its range was made of (but for `_id`, whose matcher
///   compares raw bytes and whose range in a JSON index compares in ICU's collation; the
///   tests' ids, `d0` to `d199`, sort alike in both against their strings);
/// - an empty range (contradictory conditions on a field) is not computed: it changes
///   which index CouchDB reads, but a selector with one matches nothing in any index.
package enum ReferenceMango {
  /// A refusal, by CouchDB's error name (`no_usable_index`, `bad_arg`, …).
  package struct Refusal: Error, CustomStringConvertible {
    package var error: String
    package var description: String { error }
  }

  /// An index as the planner sees it: `_all_docs` (no design document), or a JSON index.
  package struct Index: Sendable {
    package var designDocument: String?
    package var name: String
    package var fields: [String]
    package var partialFilter: JSON?

    package static let allDocs = Index(
      designDocument: nil, name: "_all_docs", fields: ["_id"], partialFilter: nil)

    package init(designDocument: String?, name: String, fields: [String], partialFilter: JSON?) {
      self.designDocument = designDocument
      self.name = name
      self.fields = fields
      self.partialFilter = partialFilter
    }
  }

  /// The documents a `_find` body (`selector`, `sort`, `limit` (25 unless given), `skip`,
  /// `fields`, `use_index`) returns from `documents` (bodies with `_id` and `_rev`), with
  /// the JSON `indexes` beside `_all_docs`; `after` continues after that document, as a
  /// bookmark does.
  package static func find(
    _ body: JSONObject, indexes: [Index], in documents: [JSONObject], after: String? = nil
  ) throws -> [JSONObject] {
    let selector = try normalize(body["selector"] ?? [:])
    let sort = try sortFields(body["sort"])
    let index = try choose(selector, sort: sort, useIndex: body["use_index"], from: indexes)
    // `{"$and": []}` or `{"$or": []}` alone reads nothing (`maybe_noop_range`).
    if case .and([]) = selector { return [] }
    if case .or([]) = selector { return [] }
    let filter = try index.partialFilter.map(normalize)
    var rows: [(key: [JSON], id: String, document: JSONObject)] = []
    for document in documents {
      let id = document["_id"]?.stringValue ?? ""
      if id.hasPrefix("_design/") { continue }
      let value = JSON.object(document)
      var key: [JSON] = []
      for field in index.fields {
        guard case .found(let found) = lookup(value, field) else { break }
        key.append(found)
      }
      guard key.count == index.fields.count else { continue }
      if let filter, !matches(filter, value) { continue }
      if matches(selector, value) { rows.append((key, id, document)) }
    }
    // The index's order: its key (view collation; `_all_docs` by id's bytes), then id.
    let descending = sort.first?.descending ?? false
    rows.sort { a, b in
      var order = 0
      if index.designDocument != nil {
        for (x, y) in zip(a.key, b.key) where order == 0 {
          order = ReferenceView.compare(x, y, .unicode)
        }
      }
      if order == 0 { order = ReferenceQuery.compareText(a.id, b.id) }
      return descending ? order > 0 : order < 0
    }
    if let after, let position = rows.firstIndex(where: { $0.id == after }) {
      rows.removeFirst(position + 1)
    }
    let skip = integer(body["skip"] ?? 0).map { Int($0) } ?? 0
    let limit = integer(body["limit"] ?? 25).map { Int($0) } ?? 25
    let page = rows.dropFirst(skip).prefix(limit).map(\.document)
    guard let fields = body["fields"]?.arrayValue?.compactMap(\.stringValue) else { return page }
    return page.map { extract($0, fields: fields) }
  }

  // MARK: - Selectors (mango_selector)

  /// A normalized selector: combinators, a field's condition, a terminal operator.
  indirect enum Node: Equatable {
    case and([Node]), or([Node]), nor([Node]), not(Node)
    /// A condition on a field (its path as written, dots joining names); `""` is the value
    /// itself (inside `$elemMatch`).
    case field(String, Node)
    /// `$elemMatch`, `$allMatch`, `$keyMapMatch` with their selector.
    case nested(String, Node)
    /// Any other operator and its argument.
    case op(String, JSON)
    /// `{}`: everything.
    case everything
  }

  /// `mango_selector:normalize`: explicit operators, field names pushed down to the
  /// conditions, negations pushed down to the fields.
  static func normalize(_ selector: JSON) throws -> Node {
    if selector == .object([:]) { return .everything }
    return negations(fields(try operators(selector), path: ""))
  }

  static let combinators: Set = ["$and", "$or", "$nor"]
  static let comparisons: Set = ["$lt", "$lte", "$eq", "$ne", "$gte", "$gt"]

  /// `norm_ops`: one member each; several are an implicit `$and`; a value that is not an
  /// object is `$eq`; operators' arguments are checked.
  static func operators(_ selector: JSON) throws -> Node {
    guard case .object(let object) = selector, !object.isEmpty else { return .op("$eq", selector) }
    if object.count > 1 {
      return .and(try object.map { try operators(.object([$0.key: $0.value])) })
    }
    let (name, argument) = (object[0].key, object[0].value)
    func refuse() -> Refusal { Refusal(error: "bad_arg") }
    switch name {
    case _ where combinators.contains(name):
      guard let parts = argument.arrayValue else { throw refuse() }
      let nodes = try parts.map(operators)
      return name == "$and" ? .and(nodes) : name == "$or" ? .or(nodes) : .nor(nodes)
    case "$not":
      guard case .object = argument else { throw refuse() }
      return .not(try operators(argument))
    case "$elemMatch", "$allMatch", "$keyMapMatch":
      guard case .object = argument else { throw refuse() }
      return .nested(name, try operators(argument))
    case "$in", "$nin", "$all":
      guard argument.arrayValue != nil else { throw refuse() }
    case "$exists":
      guard case .bool = argument else { throw refuse() }
    case "$type", "$beginsWith":
      guard argument.stringValue != nil else { throw refuse() }
    case "$regex":
      guard let pattern = argument.stringValue,
        pattern.isEmpty || (try? NSRegularExpression(pattern: pattern)) != nil
      else { throw refuse() }
    case "$mod":
      guard let pair = argument.arrayValue, pair.count == 2, let divisor = integer(pair[0]),
        integer(pair[1]) != nil
      else { throw refuse() }
      // CouchDB's matcher fails on a divisor of 0; docs/query-language.md: `bad_arg`.
      guard divisor != 0 else { throw refuse() }
    case "$size":
      guard let count = integer(argument), count >= 0 else { throw refuse() }
    case _ where comparisons.contains(name):
      break
    case _ where name.hasPrefix("$"):
      throw Refusal(error: "invalid_operator")
    default:
      return .field(name, try operators(argument))
    }
    return .op(name, argument)
  }

  /// `norm_fields`: a field's name moves down through combinators to each condition
  /// (`{"a": {"b": {"$gt": 1}}}` is `{"a.b": {"$gt": 1}}`); the selectors of `$elemMatch`
  /// and the like start over.
  static func fields(_ node: Node, path: String) -> Node {
    switch node {
    case .and(let parts): .and(parts.map { fields($0, path: path) })
    case .or(let parts): .or(parts.map { fields($0, path: path) })
    case .nor(let parts): .nor(parts.map { fields($0, path: path) })
    case .not(let inner): .not(fields(inner, path: path))
    case .nested(let name, let inner): .field(path, .nested(name, fields(inner, path: "")))
    case .op: .field(path, node)
    case .field(let name, let condition):
      fields(condition, path: path.isEmpty ? name : path + "." + name)
    case .everything: node
    }
  }

  /// `norm_negations`: `$not` and `$nor` pushed down to the fields by De Morgan's laws,
  /// through combinators and into `$elemMatch` and the like, not into a field's condition.
  static func negations(_ node: Node) -> Node {
    switch node {
    case .not(let inner): negate(inner)
    case .nor(let parts): .and(parts.map(negate))
    case .and(let parts): .and(parts.map(negations))
    case .or(let parts): .or(parts.map(negations))
    case .nested(let name, let inner): .nested(name, negations(inner))
    default: node
    }
  }

  /// `negate`: a comparison becomes its opposite, `$in` and `$nin` each other, `$exists`
  /// the other flag; any other operator keeps a `$not` above it.
  static func negate(_ node: Node) -> Node {
    let opposites = [
      "$lt": "$gte", "$lte": "$gt", "$eq": "$ne", "$ne": "$eq", "$gte": "$lt", "$gt": "$lte",
      "$in": "$nin", "$nin": "$in",
    ]
    switch node {
    case .not(let inner): return negations(inner)
    case .nor(let parts): return .or(parts.map(negations))
    case .and(let parts): return .or(parts.map(negate))
    case .or(let parts): return .and(parts.map(negate))
    case .field(let name, let condition): return .field(name, negate(condition))
    case .op("$exists", .bool(let flag)): return .op("$exists", .bool(!flag))
    case .op(let name, let argument):
      if let opposite = opposites[name] { return .op(opposite, argument) }
      return .not(node)
    case .nested, .everything: return .not(node)
    }
  }

  /// `mango_selector:match`: `raw` compares as `_id` does (Erlang's term order).
  static func matches(_ node: Node, _ value: JSON, raw: Bool = false) -> Bool {
    func compare(_ a: JSON, _ b: JSON) -> Int {
      ReferenceView.compare(a, b, raw ? .raw : .unicode)
    }
    switch node {
    case .everything: return true
    case .and(let parts): return parts.allSatisfy { matches($0, value, raw: raw) }
    case .or(let parts): return parts.isEmpty || parts.contains { matches($0, value, raw: raw) }
    case .nor(let parts): return !parts.contains { matches($0, value, raw: raw) }
    case .not(let inner): return !matches(inner, value, raw: raw)
    case .field("", let condition): return matches(condition, value, raw: raw)
    case .field(let path, let condition):
      switch lookup(value, path) {
      case .notFound: return condition == .op("$exists", false)
      case .badPath: return false
      case .found(let found): return matches(condition, found, raw: raw || path == "_id")
      }
    case .nested(let name, let inner):
      switch (name, value) {
      case ("$elemMatch", .array(let elements)):
        return elements.contains { matches(inner, $0, raw: raw) }
      case ("$allMatch", .array(let elements)):
        return !elements.isEmpty && elements.allSatisfy { matches(inner, $0, raw: raw) }
      case ("$keyMapMatch", .object(let object)):
        return object.contains { matches(inner, .string($0.key), raw: raw) }
      default: return false
      }
    case .op(let name, let argument):
      switch name {
      case "$lt": return compare(value, argument) < 0
      case "$lte": return compare(value, argument) <= 0
      case "$eq": return compare(value, argument) == 0
      case "$ne": return compare(value, argument) != 0
      case "$gte": return compare(value, argument) >= 0
      case "$gt": return compare(value, argument) > 0
      case "$in", "$nin":
        // An array's elements are compared, not the array itself.
        let values = value.arrayValue ?? [value]
        let found = argument.arrayValue!.contains { wanted in
          values.contains { compare($0, wanted) == 0 }
        }
        return name == "$in" ? found : !found
      case "$exists": return argument == .bool(true)
      case "$type": return ReferenceQuery.typeName(value) == argument.stringValue
      case "$size": return value.arrayValue.map { Int64($0.count) == integer(argument) } ?? false
      case "$all":
        // Erlang's `lists:member`: the same term (`1` is not `1.0`); or the one array
        // argument equal (`==`) to the whole value.
        let wanted = argument.arrayValue!
        if wanted.count == 1, wanted[0].arrayValue != nil, value.arrayValue != nil,
          compare(wanted[0], value) == 0, sameTypes(wanted[0], value)
        {
          return true
        }
        guard let elements = value.arrayValue, !wanted.isEmpty else { return false }
        return wanted.allSatisfy { item in elements.contains { $0 == item && sameTypes($0, item) } }
      case "$mod":
        guard let dividend = integer(value) else { return false }
        let pair = argument.arrayValue!
        let (divisor, remainder) = (integer(pair[0])!, integer(pair[1])!)
        // Erlang's `rem`: truncated, with the dividend's sign.
        return dividend.remainderReportingOverflow(dividingBy: divisor).partialValue == remainder
      case "$regex":
        guard let text = value.stringValue else { return false }
        let pattern = argument.stringValue!
        if pattern.isEmpty { return true }
        let expression = try! NSRegularExpression(pattern: pattern)
        return expression.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil
      case "$beginsWith":
        // Erlang's `string:prefix`, code point by code point.
        guard let text = value.stringValue else { return false }
        return text.unicodeScalars.starts(with: argument.stringValue!.unicodeScalars)
      default:
        preconditionFailure("the reference has no operator \(name)")
      }
    }
  }

  /// An integer as Erlang has one: a JSON number written without a fraction or exponent
  /// (`2.0` is a float). Past 64 bits: `nil` (the tests' generators stay inside).
  static func integer(_ value: JSON) -> Int64? {
    if case .int(let number) = value { return number }
    return nil
  }

  /// Erlang's `=:=` beyond `==`: integers and floats are not the same term, at any depth.
  static func sameTypes(_ a: JSON, _ b: JSON) -> Bool {
    switch (a, b) {
    case (.int, .double), (.double, .int), (.largeInteger, .double), (.double, .largeInteger):
      return false
    case (.array(let x), .array(let y)): return zip(x, y).allSatisfy { sameTypes($0, $1) }
    case (.object(let x), .object(let y)):
      return zip(x, y).allSatisfy { $0.key == $1.key && sameTypes($0.value, $1.value) }
    default: return true
    }
  }

  enum Lookup { case found(JSON), notFound, badPath }

  /// `mango_doc:get_field`: a member of an object, an element of an array by its number;
  /// a name on an array or anything on a scalar is a bad path.
  static func lookup(_ value: JSON, _ path: String) -> Lookup {
    var current = value
    for name in ReferenceQuery.components(path) {
      switch current {
      case .object(let object):
        guard let member = object[name] else { return .notFound }
        current = member
      case .array(let elements):
        guard let number = Int(name), number >= 0, number < elements.count else {
          return .badPath
        }
        current = elements[number]
      default:
        return .badPath
      }
    }
    return .found(current)
  }

  // MARK: - The index CouchDB reads (mango_idx, mango_idx_view, mango_cursor_view)

  /// `sort` as `_find` takes it: one direction for all fields.
  static func sortFields(_ sort: JSON?) throws -> [(field: String, descending: Bool)] {
    let fields: [(field: String, descending: Bool)] = (sort?.arrayValue ?? []).map { item in
      if let name = item.stringValue { return (name, false) }
      let member = item.objectValue![0]
      return (member.key, member.value.stringValue == "desc")
    }
    if Set(fields.map(\.descending)).count > 1 { throw Refusal(error: "unsupported_mixed_sort") }
    return fields
  }

  /// The index CouchDB reads: of the indexes without a partial filter and those `use_index`
  /// names, the usable ones; of those, the ones `use_index` names if any; JSON indexes
  /// before `_all_docs`; then the fewest selector fields left over by the index's leading
  /// columns, the fewest columns, the design document and name.
  static func choose(
    _ selector: Node, sort: [(field: String, descending: Bool)], useIndex: JSON?,
    from indexes: [Index]
  ) throws -> Index {
    let existing = indexes + [.allDocs]
    let named = named(existing, by: useIndex)
    var candidates = existing.filter { $0.partialFilter == nil }
    candidates += named.filter { index in !candidates.contains { same($0, index) } }
    let fields = sort.map(\.field)
    let usable = candidates.filter { isUsable($0, selector, sort: fields) }
    if usable.isEmpty { throw Refusal(error: "no_usable_index") }
    let chosen = named.filter { index in usable.contains { same($0, index) } }
    let pool = chosen.isEmpty ? usable : chosen
    let json = pool.filter { $0.designDocument != nil }
    guard !json.isEmpty else { return .allDocs }
    let ranged = indexable(selector)
    func distance(_ index: Index) -> Int {
      ranged.count - index.fields.prefix { ranged.contains($0) }.count
    }
    return json.min { a, b in
      if distance(a) != distance(b) { return distance(a) < distance(b) }
      if a.fields.count != b.fields.count { return a.fields.count < b.fields.count }
      let (x, y) = (a.designDocument! + "\u{0}" + a.name, b.designDocument! + "\u{0}" + b.name)
      return ReferenceQuery.compareText(x, y) < 0
    }!
  }

  static func same(_ a: Index, _ b: Index) -> Bool {
    a.designDocument == b.designDocument && a.name == b.name
  }

  /// The indexes `use_index` names: a design document (with or without `_design/`), or a
  /// design document and an index name.
  static func named(_ indexes: [Index], by useIndex: JSON?) -> [Index] {
    let parts: [String] =
      useIndex?.stringValue.map { [$0] } ?? useIndex?.arrayValue?.compactMap(\.stringValue) ?? []
    guard let first = parts.first else { return [] }
    let design = first.hasPrefix("_design/") ? first : "_design/" + first
    return indexes.filter {
      $0.designDocument == design && (parts.count < 2 || $0.name == parts[1])
    }
  }

  /// `is_usable`: a JSON index when the selector needs every column that is not a sort
  /// field, `_id` or `_rev`, and the sort is its columns' start once columns held to one
  /// value are skipped; `_all_docs` with no sort, or sorted by `_id` with a range on it.
  static func isUsable(_ index: Index, _ selector: Node, sort: [String]) -> Bool {
    guard index.designDocument != nil else {
      return sort.isEmpty || (indexable(selector).contains("_id") && ["_id"].starts(with: sort))
    }
    let needed = Set(index.fields).subtracting(sort).subtracting(["_id", "_rev"])
    guard required(selector, needed).isEmpty else { return false }
    guard !sort.isEmpty else { return true }
    var columns = index.fields[...]
    while let column = columns.first {
      if column == sort[0] { return columns.starts(with: sort) }
      guard constant(selector, column) else { return false }
      columns = columns.dropFirst()
    }
    return false
  }

  /// `has_required_fields`: what of `fields` the selector does not require. A field's
  /// condition requires it (`$exists: false` aside), through `$and`; an `$or` requires what
  /// all its branches do.
  static func required(_ node: Node, _ fields: Set<String>) -> Set<String> {
    if fields.isEmpty { return [] }
    switch node {
    case .and(let parts):
      return parts.reduce(fields) { remaining, part in required(part, remaining) }
    case .or(let parts):
      return parts.reduce(into: Set<String>()) { $0.formUnion(required($1, fields)) }
    case .field(let name, let condition):
      return condition == .op("$exists", false) ? fields : fields.subtracting([name])
    default:
      return fields
    }
  }

  /// `is_constant_field`: a condition `{field: {"$eq": …}}`, through `$and`.
  static func constant(_ node: Node, _ field: String) -> Bool {
    switch node {
    case .and(let parts): return parts.contains { constant($0, field) }
    case .field(field, .op("$eq", _)): return true
    default: return false
    }
  }

  /// `indexable_fields`: the fields with a comparison (`$lt`, `$lte`, `$eq`, `$gt`, `$gte`),
  /// and in CouchDB 3.5 `$beginsWith` and `$exists: true`, reached through `$and` alone.
  static func indexable(_ node: Node) -> Set<String> {
    let ranged: Set = ["$lt", "$lte", "$eq", "$gt", "$gte", "$beginsWith"]
    switch node {
    case .and(let parts): return parts.reduce(into: []) { $0.formUnion(indexable($1)) }
    case .field(let name, .op(let op, let argument))
    where ranged.contains(op) || (op == "$exists" && argument == true):
      return [name]
    default: return []
    }
  }

  // MARK: - Fields (mango_fields)

  /// `mango_fields:extract`: a new object with each named field that reads a value, in the
  /// order named, through objects made on the way; a field already set is replaced where it
  /// stands.
  static func extract(_ document: JSONObject, fields: [String]) -> JSONObject {
    var result = JSON.object([:])
    for field in fields {
      guard case .found(let value) = lookup(.object(document), field) else { continue }
      result = set(result, ReferenceQuery.components(field)[...], value)
    }
    return result.objectValue ?? [:]
  }

  /// `mango_doc:set_field`.
  static func set(_ target: JSON, _ path: ArraySlice<String>, _ value: JSON) -> JSON {
    guard let name = path.first else { return value }
    switch target {
    case .object(var object):
      object[name] = set(object[name] ?? .object([:]), path.dropFirst(), value)
      return .object(object)
    case .array(var elements):
      guard let number = Int(name), number >= 0, number < elements.count else { return target }
      elements[number] = set(elements[number], path.dropFirst(), value)
      return .array(elements)
    default:
      return target
    }
  }
}
