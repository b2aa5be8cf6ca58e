import Foundation
import SetteeCore

/// A second statement of the query language, written from SPEC section 2 and
/// docs/query-language.md alone, for the differential tests: selectors as JSON, evaluated
/// over documents as JSON, with an order of its own. It shares nothing with the engine but
/// the `JSON` type (no `Selector`, `Matcher`, collation or path code), so that a test
/// comparing the engine with it compares two readings of the rules, not one with itself.
///
/// Small and direct on purpose: every rule is a line or two that can be read against the
/// documentation. Inputs are the generators' (well-formed); it does not check arguments.
package enum ReferenceQuery {
  /// The ids a query finds among `documents` (bodies with `_id`), in its order: `sort` as
  /// `_find` takes it (`["a", {"b": "desc"}]`, or `nil`), then `skip` and `limit` (0: none).
  package static func find(
    _ documents: [JSONObject], selector: JSON, sort: JSON? = nil, skip: Int = 0, limit: Int = 0
  ) -> [String] {
    let found = documents.filter { document in
      let id = document["_id"]?.stringValue ?? ""
      return !id.hasPrefix("_design/") && matches(.object(document), selector)
    }
    let keys: [(path: [String], descending: Bool)] = (sort?.arrayValue ?? []).map { key in
      if let name = key.stringValue { return (components(name), false) }
      let member = key.objectValue![0]
      return (components(member.key), member.value.stringValue == "desc")
    }
    let lastDescending = keys.last?.descending ?? false
    // Each document's sort values, read once (decorate, sort, undecorate).
    let decorated = found.map { document in
      (
        id: document["_id"]?.stringValue ?? "",
        values: keys.map { sortValue(document, $0.path, $0.descending) }
      )
    }
    let sorted = decorated.sorted { left, right in
      for (index, key) in keys.enumerated() {
        let order = compareSortValues(left.values[index], right.values[index])
        if order != 0 { return key.descending ? order > 0 : order < 0 }
      }
      let order = compareText(left.id, right.id)
      return lastDescending ? order > 0 : order < 0
    }
    let ids = sorted.dropFirst(skip).map(\.id)
    return limit > 0 ? Array(ids.prefix(limit)) : ids
  }

  /// ``find(_:selector:sort:skip:limit:)`` over stored documents.
  package static func find(
    _ documents: [Document], selector: JSON, sort: JSON? = nil, skip: Int = 0, limit: Int = 0
  ) -> [String] {
    find(documents.map(\.json), selector: selector, sort: sort, skip: skip, limit: limit)
  }

  // MARK: - Selectors

  /// Whether `value` (a document, or an element inside `$elemMatch`/`$allMatch`) matches
  /// `selector`: members are an implicit `$and`; combinators and operators start with `$`,
  /// operators then applying to `value` itself; other members are paths.
  package static func matches(_ value: JSON, _ selector: JSON) -> Bool {
    guard let object = selector.objectValue else { return false }
    return object.allSatisfy { member in
      switch member.key {
      case "$and": return member.value.arrayValue!.allSatisfy { matches(value, $0) }
      case "$or": return member.value.arrayValue!.contains { matches(value, $0) }
      case "$nor": return !member.value.arrayValue!.contains { matches(value, $0) }
      case "$not": return !matches(value, member.value)
      case let op where op.hasPrefix("$"): return holds([value], op, member.value)
      default: return holds(values(at: components(member.key)[...], in: value), member.value)
      }
    }
  }

  /// A field's condition over the values its path reaches: an object of operators (all
  /// must hold), a nested object of paths (`{"pet": {"species": "cat"}}`), or a value to
  /// equal (`{}` included).
  static func holds(_ found: [JSON], _ condition: JSON) -> Bool {
    guard let object = condition.objectValue, !object.isEmpty else {
      return holds(found, "$eq", condition)
    }
    if object.keys.allSatisfy({ $0.hasPrefix("$") }) {
      return object.allSatisfy { holds(found, $0.key, $0.value) }
    }
    // Nested paths: each member continues the path from every value reached so far.
    return object.allSatisfy { member in
      holds(found.flatMap { values(at: components(member.key)[...], in: $0) }, member.value)
    }
  }

  /// One operator over the values a path reaches. Negations are the complement of their
  /// positive form, so they hold where the path reaches nothing.
  static func holds(_ found: [JSON], _ op: String, _ argument: JSON) -> Bool {
    switch op {
    case "$ne": return !holds(found, "$eq", argument)
    case "$nin": return !holds(found, "$in", argument)
    case "$not": return !holds(found, argument)
    case "$and": return argument.arrayValue!.allSatisfy { holds(found, $0) }
    case "$or": return argument.arrayValue!.contains { holds(found, $0) }
    case "$nor": return !argument.arrayValue!.contains { holds(found, $0) }
    case "$exists": return found.isEmpty != (argument == .bool(true))
    default: return found.contains { holds(value: $0, op, argument) }
    }
  }

  /// A positive operator on one value. Value conditions hold for an array when any of its
  /// elements satisfies them; `$eq`, `$in` and comparisons with an array argument also
  /// look at the whole array. `$type`, `$size`, `$all`, `$elemMatch`, `$allMatch` look at
  /// the value itself.
  static func holds(value: JSON, _ op: String, _ argument: JSON) -> Bool {
    let elements = value.arrayValue ?? []
    func anyElement(_ test: (JSON) -> Bool) -> Bool {
      test(value) || elements.contains(where: test)
    }
    switch op {
    case "$eq":
      return anyElement { equal($0, argument) }
    case "$in":
      return argument.arrayValue!.contains { candidate in anyElement { equal($0, candidate) } }
    case "$lt", "$lte", "$gt", "$gte":
      func test(_ candidate: JSON) -> Bool {
        if candidate == .null { return false }
        let order = compare(candidate, argument)
        switch op {
        case "$lt": return order < 0
        case "$lte": return order <= 0
        case "$gt": return order > 0
        default: return order >= 0
        }
      }
      let wholeArray = value.arrayValue != nil && argument.arrayValue != nil && test(value)
      return wholeArray || (value.arrayValue == nil ? test(value) : elements.contains(where: test))
    case "$type":
      return typeName(value) == argument.stringValue
    case "$size":
      return value.arrayValue?.count == argument.intValue
    case "$all":
      let wanted = argument.arrayValue!
      return value.arrayValue != nil && !wanted.isEmpty
        && wanted.allSatisfy { item in elements.contains { equal($0, item) } }
    case "$elemMatch":
      return elements.contains { matches($0, argument) }
    case "$allMatch":
      return !elements.isEmpty && elements.allSatisfy { matches($0, argument) }
    case "$keyMapMatch":
      return (value.objectValue?.keys ?? []).contains { matches(.string($0), argument) }
    case "$mod":
      let pair = argument.arrayValue!
      return anyElement { candidate in
        guard let value = number(candidate), let divisor = truncated(number(pair[0])!),
          let remainder = truncated(number(pair[1])!), let dividend = truncated(value),
          divisor != 0
        else { return false }
        return dividend % divisor == remainder
      }
    case "$regex":
      // `""` matches every string (the documentation says so; Foundation refuses it).
      let pattern = argument.stringValue!
      let expression = pattern.isEmpty ? nil : try! NSRegularExpression(pattern: pattern)
      return anyElement { candidate in
        guard let text = candidate.stringValue else { return false }
        guard let expression else { return true }
        let range = NSRange(text.startIndex..., in: text)
        return expression.firstMatch(in: text, range: range) != nil
      }
    case "$beginsWith":
      let prefix = Array(argument.stringValue!.unicodeScalars)
      return anyElement { candidate in
        guard let text = candidate.stringValue else { return false }
        return Array(text.unicodeScalars).starts(with: prefix)
      }
    default:
      preconditionFailure("the reference has no operator \(op)")
    }
  }

  // MARK: - Paths

  /// A path's components: `.` separates them, `\.` is a dot and `\\` a backslash in a name,
  /// and `\$` starts a name with `$`.
  package static func components(_ path: String) -> [String] {
    var parts: [String] = []
    var current = ""
    var escaped = false
    for character in path {
      if escaped {
        current.append(character)
        escaped = false
      } else if character == "\\" {
        escaped = true
      } else if character == "." {
        parts.append(current)
        current = ""
      } else {
        current.append(character)
      }
    }
    parts.append(current)
    return parts
  }

  /// The values a path reaches: a member of an object; on an array, the element a numeric
  /// component names, and the component applied to every element that is an object (one
  /// level: arrays inside arrays are not entered).
  static func values(at path: ArraySlice<String>, in value: JSON) -> [JSON] {
    guard let name = path.first else { return [value] }
    let rest = path.dropFirst()
    switch value {
    case .object(let object):
      return object[name].map { values(at: rest, in: $0) } ?? []
    case .array(let elements):
      var found: [JSON] = []
      if let index = Int(name), String(index) == name, index >= 0, index < elements.count {
        found += values(at: rest, in: elements[index])
      }
      for case .object(let object) in elements {
        if let member = object[name] { found += values(at: rest, in: member) }
      }
      return found
    default:
      return []
    }
  }

  // MARK: - The order of JSON values

  static func typeName(_ value: JSON) -> String {
    switch value {
    case .null: "null"
    case .bool: "boolean"
    case .int, .double, .largeInteger: "number"
    case .string: "string"
    case .array: "array"
    case .object: "object"
    }
  }

  static func rank(_ value: JSON) -> Int {
    switch value {
    case .null: 0
    case .bool(false): 1
    case .bool(true): 2
    case .int, .double, .largeInteger: 3
    case .string: 4
    case .array: 5
    case .object: 6
    }
  }

  static func equal(_ left: JSON, _ right: JSON) -> Bool { compare(left, right) == 0 }

  /// null < false < true < numbers < strings < arrays < objects; numbers by value (a 64-bit
  /// integer exactly against a double), strings by code point, arrays element by element,
  /// objects member by member (name, then value).
  static func compare(_ left: JSON, _ right: JSON) -> Int {
    let ranks = (rank(left), rank(right))
    if ranks.0 != ranks.1 { return ranks.0 < ranks.1 ? -1 : 1 }
    switch (left, right) {
    case (.string(let a), .string(let b)):
      return compareText(a, b)
    case (.array(let a), .array(let b)):
      for (x, y) in zip(a, b) {
        let order = compare(x, y)
        if order != 0 { return order }
      }
      return a.count == b.count ? 0 : a.count < b.count ? -1 : 1
    case (.object(let a), .object(let b)):
      for (x, y) in zip(a, b) {
        let order = compareText(x.key, y.key)
        if order != 0 { return order }
        let values = compare(x.value, y.value)
        if values != 0 { return values }
      }
      return a.count == b.count ? 0 : a.count < b.count ? -1 : 1
    default:
      if let a = number(left), let b = number(right) { return compareNumbers(a, b) }
      return 0  // two nulls, or two equal booleans
    }
  }

  /// Code point order: the order of UTF-8 bytes.
  package static func compareText(_ left: String, _ right: String) -> Int {
    let (a, b) = (Array(left.utf8), Array(right.utf8))
    if a == b { return 0 }
    return a.lexicographicallyPrecedes(b) ? -1 : 1
  }

  /// A number as an exact integer when it is one that fits, else as a double (an integer
  /// past 64 bits as its nearest double).
  package enum Number { case integer(Int64), real(Double) }

  package static func number(_ value: JSON) -> Number? {
    switch value {
    case .int(let integer): .integer(integer)
    case .double(let real): .real(real)
    case .largeInteger(let digits): Double(digits).map { .real($0) }
    default: nil
    }
  }

  package static func compareNumbers(_ left: Number, _ right: Number) -> Int {
    switch (left, right) {
    case (.integer(let a), .integer(let b)): return a == b ? 0 : a < b ? -1 : 1
    case (.real(let a), .real(let b)): return a == b ? 0 : a < b ? -1 : 1
    case (.integer(let a), .real(let b)): return -compareRealToInteger(b, a)
    case (.real(let a), .integer(let b)): return compareRealToInteger(a, b)
    }
  }

  /// A double against a 64-bit integer, exactly: by the double's integer part (when it is
  /// in the integers' range), then its fraction.
  static func compareRealToInteger(_ real: Double, _ integer: Int64) -> Int {
    if real >= 9_223_372_036_854_775_808.0 { return 1 }
    if real < -9_223_372_036_854_775_808.0 { return -1 }
    let whole = Int64(real.rounded(.towardZero))
    if whole != integer { return whole < integer ? -1 : 1 }
    let fraction = real - real.rounded(.towardZero)
    return fraction == 0 ? 0 : fraction < 0 ? -1 : 1
  }

  /// `$mod`'s truncation to an integer; `nil` outside the 64-bit range.
  static func truncated(_ number: Number) -> Int64? {
    switch number {
    case .integer(let integer): return integer
    case .real(let real):
      let whole = real.rounded(.towardZero)
      guard whole >= -9_223_372_036_854_775_808.0, whole < 9_223_372_036_854_775_808.0 else {
        return nil
      }
      return Int64(whole)
    }
  }

  // MARK: - Sort

  /// A document's value for one sort key: missing (`nil`) when the path reaches nothing;
  /// an array stands for its smallest element ascending, its largest descending, and an
  /// empty one for missing.
  static func sortValue(_ document: JSONObject, _ path: [String], _ descending: Bool) -> JSON? {
    var candidates: [JSON] = []
    for value in values(at: path[...], in: .object(document)) {
      if let elements = value.arrayValue {
        candidates += elements
      } else {
        candidates.append(value)
      }
    }
    return candidates.min { left, right in
      descending ? compare(left, right) > 0 : compare(left, right) < 0
    }
  }

  /// Sort values in the collation, a missing value before `null`.
  static func compareSortValues(_ left: JSON?, _ right: JSON?) -> Int {
    switch (left, right) {
    case (nil, nil): return 0
    case (nil, _): return -1
    case (_, nil): return 1
    case (let a?, let b?): return compare(a, b)
    }
  }
}
