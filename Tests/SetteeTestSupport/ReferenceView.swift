import Foundation
import SetteeCore

/// A second statement of view keys and declarative views, written from docs/views.md
/// alone, for the view differential tests: keys are ordered by comparing JSON values (the
/// engine stores binary sort keys made by its own ICU shim and ranges over them in SQL),
/// strings in Unicode order through Foundation's ICU collation of the root locale, and a
/// declarative definition emits its rows by reading the document as the table says.
package enum ReferenceView {
  /// `unicode` (CouchDB's default) or `raw` (Erlang's term order).
  package enum Order: Sendable { case unicode, raw }

  // MARK: - The order of keys

  /// `unicode`: null < false < true < numbers < strings < arrays < objects.
  /// `raw`: numbers < false < null < true < objects < arrays < strings.
  static func rank(_ value: JSON, _ order: Order) -> Int {
    switch (value, order) {
    case (.null, .unicode): 0
    case (.bool(false), .unicode): 1
    case (.bool(true), .unicode): 2
    case (.int, .unicode), (.double, .unicode), (.largeInteger, .unicode): 3
    case (.string, .unicode): 4
    case (.array, .unicode): 5
    case (.object, .unicode): 6
    case (.int, .raw), (.double, .raw), (.largeInteger, .raw): 0
    case (.bool(false), .raw): 1
    case (.null, .raw): 2
    case (.bool(true), .raw): 3
    case (.object, .raw): 4
    case (.array, .raw): 5
    case (.string, .raw): 6
    }
  }

  private static let root = Locale(identifier: "")

  /// Strings: the Unicode Collation Algorithm with ICU's root collation (canonically
  /// equivalent spellings equal), or code points for `raw`.
  package static func compareStrings(_ left: String, _ right: String, _ order: Order) -> Int {
    switch order {
    case .raw:
      return ReferenceQuery.compareText(left, right)
    case .unicode:
      // U+0000 is completely ignorable in the Unicode Collation Algorithm's table (ICU
      // ignores it; Foundation's comparison breaks such ties by code point).
      let (a, b) = (
        left.replacingOccurrences(of: "\u{0}", with: ""),
        right.replacingOccurrences(of: "\u{0}", with: "")
      )
      switch a.compare(b, options: [], range: nil, locale: root) {
      case .orderedAscending: return -1
      case .orderedDescending: return 1
      case .orderedSame: return 0
      }
    }
  }

  /// Two keys in the view's order: by rank, numbers by value, strings as above, arrays
  /// element by element (a shorter prefix first), objects member by member (name, then
  /// value; fewer members first).
  package static func compare(_ left: JSON, _ right: JSON, _ order: Order) -> Int {
    let ranks = (rank(left, order), rank(right, order))
    if ranks.0 != ranks.1 { return ranks.0 < ranks.1 ? -1 : 1 }
    switch (left, right) {
    case (.string(let a), .string(let b)):
      return compareStrings(a, b, order)
    case (.array(let a), .array(let b)):
      for (x, y) in zip(a, b) {
        let result = compare(x, y, order)
        if result != 0 { return result }
      }
      return a.count == b.count ? 0 : a.count < b.count ? -1 : 1
    case (.object(let a), .object(let b)):
      for (x, y) in zip(a, b) {
        let names = compareStrings(x.key, y.key, order)
        if names != 0 { return names }
        let values = compare(x.value, y.value, order)
        if values != 0 { return values }
      }
      return a.count == b.count ? 0 : a.count < b.count ? -1 : 1
    default:
      if let a = ReferenceQuery.number(left), let b = ReferenceQuery.number(right) {
        return ReferenceQuery.compareNumbers(a, b)
      }
      return 0
    }
  }

  /// The high end of a range with `prefix_match_level` (docs/views.md): level 1 extends a
  /// string with U+FFFF (ICU's highest primary weight; U+10FFFF, the highest code point,
  /// for `raw`) and an array with an element after every other (`{}` in Unicode order, the
  /// highest string for `raw`); a higher level applies the level below to an array's last
  /// element.
  package static func prefixEnd(_ key: JSON, level: Int, _ order: Order) -> JSON {
    guard level > 0 else { return key }
    switch key {
    case .string(let text) where level == 1:
      return .string(text + (order == .unicode ? "\u{FFFF}" : "\u{10FFFF}"))
    case .array(var elements):
      if level == 1 {
        elements.append(order == .unicode ? .object([:]) : .string("\u{10FFFF}"))
      } else if let last = elements.popLast() {
        elements.append(prefixEnd(last, level: level - 1, order))
      }
      return .array(elements)
    default:
      return key
    }
  }

  // MARK: - Declarative views

  /// The rows a declarative definition (docs/views.md's table) emits for a document, in
  /// emission order. `document` holds `_id` and `_rev` as members.
  package static func rows(_ document: JSONObject, definition: JSONObject) -> [(
    key: JSON, value: JSON
  )] {
    if let filter = definition["filter"], !ReferenceQuery.matches(.object(document), filter) {
      return []
    }
    let keyPaths: [String]
    let compound: Bool
    switch definition["key"] {
    case .string(let path)?: (keyPaths, compound) = ([path], false)
    case .array(let paths)?: (keyPaths, compound) = (paths.compactMap(\.stringValue), true)
    default: return []
    }
    // A document missing any key field emits nothing.
    var parts: [JSON] = []
    for path in keyPaths {
      guard let found = field(path, in: document) else { return [] }
      parts.append(found)
    }
    let value: JSON
    switch definition["value"] {
    case nil, .null?: value = .null
    case .string("_doc")?: value = .object(document)
    case .string(let path)?: value = field(path, in: document) ?? .null
    case .array(let paths)?:
      value = .array(paths.map { field($0.stringValue ?? "", in: document) ?? .null })
    default: value = .null
    }
    // `each`: the key part at that path emits a row per element (array) or member value
    // (object); any other value one row.
    var eachIndex: Int?
    switch definition["each"] {
    case .bool(true)?: eachIndex = 0
    case .string(let path)?: eachIndex = keyPaths.firstIndex(of: path)
    default: eachIndex = nil
    }
    var variants: [[JSON]] = [parts]
    if let eachIndex {
      let spread: [JSON]
      switch parts[eachIndex] {
      case .array(let elements): spread = elements
      case .object(let members): spread = members.map(\.value)
      case let other: spread = [other]
      }
      variants = spread.map { element in
        var copy = parts
        copy[eachIndex] = element
        return copy
      }
    }
    return variants.map { (compound ? .array($0) : $0[0], value) }
  }

  /// A field by its path: members of objects, elements of arrays by number; `nil` when
  /// the document lacks it.
  static func field(_ path: String, in document: JSONObject) -> JSON? {
    var current: JSON = .object(document)
    for name in ReferenceQuery.components(path) {
      switch current {
      case .object(let object):
        guard let member = object[name] else { return nil }
        current = member
      case .array(let elements):
        guard let index = Int(name), String(index) == name, index >= 0, index < elements.count
        else { return nil }
        current = elements[index]
      default:
        return nil
      }
    }
    return current
  }
}

// MARK: - Built-in reduces

extension ReferenceView {
  /// A built-in reduce over one group's values, restated from CouchDB's
  /// `couch_query_servers` (`builtin_sum_rows`, `sum_values`, `builtin_stats`) and
  /// docs/views.md, in one pass over the group in key order (the engine reduces in chunks
  /// and rereduces them, and sums numbers in SQL). `_sum` with a value it cannot add is the
  /// group's error object; `_stats` with one throws `RefusedReduce`.
  package static func reduce(_ name: String, _ values: [JSON]) throws -> JSON {
    switch name {
    case "_count":
      return .int(Int64(values.count))
    case "_sum":
      var total: JSON = 0
      for value in values {
        guard let sum = plus(total, value) else {
          return [
            "error": "builtin_reduce_error",
            "reason": """
            The _sum function requires that map values be numbers, arrays of numbers, or \
            objects. Objects cannot be mixed with other data structures. Objects can be \
            arbitrarily nested, provided that the values for all fields are themselves \
            numbers, arrays of numbers, or objects.
            """,
            "caused_by": culprit(total, value),
          ]
        }
        total = sum
      }
      return total
    case "_stats":
      guard let first = values.first else { return .null }
      var total = try stats(first)
      for value in values.dropFirst() { total = try merge(total, try stats(value)) }
      return total
    default:
      throw RefusedReduce()
    }
  }

  /// A reduce the reference refuses (`_stats` of a value that is not a number or an
  /// array of numbers).
  package struct RefusedReduce: Error {}

  static func isNumber(_ value: JSON) -> Bool {
    switch value {
    case .int, .double, .largeInteger: true
    default: false
    }
  }

  /// Numbers as Swift adds them: integers while the sum fits, doubles otherwise.
  static func number(_ a: JSON, _ b: JSON) -> JSON {
    if case .int(let x) = a, case .int(let y) = b,
      case (let sum, false) = x.addingReportingOverflow(y)
    {
      return .int(sum)
    }
    return .double((a.doubleValue ?? 0) + (b.doubleValue ?? 0))
  }

  /// `sum_values`: numbers add; arrays add element by element (the shorter padded with
  /// zeros); a number and an array add the number to the first element; objects add
  /// member by member (a member on one side only is kept, but must itself be summable);
  /// nothing else adds.
  static func plus(_ a: JSON, _ b: JSON) -> JSON? {
    switch (a, b) {
    case _ where isNumber(a) && isNumber(b):
      return number(a, b)
    case (.array(let x), .array(let y)):
      var result: [JSON] = []
      for index in 0..<max(x.count, y.count) {
        let left = index < x.count ? x[index] : 0
        let right = index < y.count ? y[index] : 0
        guard isNumber(left), isNumber(right) else { return nil }
        result.append(number(left, right))
      }
      return .array(result)
    case (.array, _) where isNumber(b):
      return plus(a, [b])
    case (_, .array) where isNumber(a):
      return plus([a], b)
    case (.object(let x), .object(let y)):
      var result = x
      for member in y {
        if let left = x[member.key] {
          guard let sum = plus(left, member.value) else { return nil }
          result[member.key] = sum
        } else {
          guard valid(member.value) else { return nil }
          result[member.key] = member.value
        }
      }
      for member in x where y[member.key] == nil {
        guard valid(member.value) else { return nil }
      }
      return .object(result)
    case (.int(0), .object):
      return valid(b) ? b : nil
    default:
      return nil
    }
  }

  /// Whether a value could be a sum: a number, an array of numbers, an object of those.
  static func valid(_ value: JSON) -> Bool {
    switch value {
    case .int, .double, .largeInteger: true
    case .array(let elements): elements.allSatisfy(isNumber)
    case .object(let members): members.allSatisfy { valid($0.value) }
    default: false
    }
  }

  /// The value a failed sum names: the first value found that is not a number, an array of
  /// numbers or an object of those, looking into arrays and objects.
  static func culprit(_ total: JSON, _ value: JSON) -> JSON {
    func find(_ value: JSON) -> JSON? {
      switch value {
      case .int, .double, .largeInteger: nil
      case .array(let elements): elements.first { !isNumber($0) }
      case .object(let members): members.lazy.compactMap { find($0.value) }.first
      default: value
      }
    }
    return find(value) ?? value
  }

  /// One value's `_stats`: a number's, or an array of numbers' element by element.
  static func stats(_ value: JSON) throws -> JSON {
    switch value {
    case .array(let elements):
      return .array(try elements.map { element in try stats(element) })
    case _ where isNumber(value):
      let number = value.doubleValue ?? 0
      return [
        "sum": value, "count": 1, "min": value, "max": value, "sumsqr": .double(number * number),
      ]
    default:
      throw RefusedReduce()
    }
  }

  /// Two `_stats` results together (arrays element by element, the longer's tail kept).
  static func merge(_ a: JSON, _ b: JSON) throws -> JSON {
    switch (a, b) {
    case (.array(let x), .array(let y)):
      return .array(
        try (0..<max(x.count, y.count)).map { index in
          index >= x.count ? y[index] : index >= y.count ? x[index] : try merge(x[index], y[index])
        })
    case (.object(let x), .object(let y)):
      let (xmin, ymin, xmax, ymax) = (x["min"] ?? 0, y["min"] ?? 0, x["max"] ?? 0, y["max"] ?? 0)
      return [
        "sum": number(x["sum"] ?? 0, y["sum"] ?? 0),
        "count": number(x["count"] ?? 0, y["count"] ?? 0),
        "min": (xmin.doubleValue ?? 0) <= (ymin.doubleValue ?? 0) ? xmin : ymin,
        "max": (xmax.doubleValue ?? 0) >= (ymax.doubleValue ?? 0) ? xmax : ymax,
        "sumsqr": .double((x["sumsqr"]?.doubleValue ?? 0) + (y["sumsqr"]?.doubleValue ?? 0)),
      ]
    default:
      throw RefusedReduce()
    }
  }
}
