import Foundation
import SetteeCore

/// A second statement of view keys and declarative views, written from docs/views.md
/// alone, for the view differential tests: keys are ordered by comparing JSON values (the
/// engine stores binary sort keys made by its own ICU shim and ranges over them in SQL),
/// strings in Unicode order through Foundation's ICU collation of the root locale, and a
/// declarative definition emits its rows by reading the document as the table says.
public enum ReferenceView {
  /// `unicode` (CouchDB's default) or `raw` (Erlang's term order).
  public enum Order: Sendable { case unicode, raw }

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
  public static func compareStrings(_ left: String, _ right: String, _ order: Order) -> Int {
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
  public static func compare(_ left: JSON, _ right: JSON, _ order: Order) -> Int {
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
  public static func prefixEnd(_ key: JSON, level: Int, _ order: Order) -> JSON {
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
  public static func rows(_ document: JSONObject, definition: JSONObject) -> [(
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
