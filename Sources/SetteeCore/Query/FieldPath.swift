/// A path to a value inside a document: `pet.species`, `tags.0`, `a\.b` (one member named
/// `a.b`).
///
/// A numeric component indexes an array or names an object member, whichever the
/// document holds; a component that meets an array of objects applies to each element.
///
/// Paths come from text through the throwing ``init(parsing:allowingDollar:)`` (or, in Swift queries,
/// from ``Field``, checked when the query runs); there is no string literal form, which
/// could only trap on a bad literal.
public struct FieldPath: Sendable, Hashable, Comparable, CustomStringConvertible {
  /// The member names (or array indexes), outermost first.
  public var components: [String]

  /// The most components a path may have: as deep as a document may nest by default
  /// (``DocumentLimits/maxNestingDepth``), so no value lies deeper.
  package static let maxComponents = 100

  /// A path of unescaped components, unchecked (use `init(parsing:)` for text).
  public init(components: [String]) { self.components = components }

  /// Names compare byte for byte, as member lookups match them.
  public static func == (lhs: FieldPath, rhs: FieldPath) -> Bool {
    lhs.components.count == rhs.components.count
      && zip(lhs.components, rhs.components).allSatisfy { $0.hasSameBytes(as: $1) }
  }

  /// Parses dotted notation; `\.` is a literal dot, `\\` a literal backslash and `\$` at
  /// the start of a component a literal dollar sign (any other backslash is itself).
  ///
  /// A component starting with `$` would read as an operator in a selector, so it must be
  /// written `\$` (`{"\\$weird": 1}` finds the member `$weird`) unless `allowingDollar`
  /// says that the text cannot hold operators (`fields`, `sort` and `where` brackets, which
  /// accept both spellings, as CouchDB's `fields` accepts `$key`).
  ///
  /// - Throws: ``SetteeError`` (`invalidQuery`) for an empty path or component, or a
  ///   component that starts with an unescaped `$` when `allowingDollar` is `false`.
  public init(parsing text: String, allowingDollar: Bool = false) throws {
    var components: [String] = []
    var current = ""
    var escaped = false
    // Whether the current component's leading `$` was written `\$`.
    var escapedDollar = false
    var unescapedDollar: String? = nil
    func endComponent() {
      if !escapedDollar, unescapedDollar == nil, current.hasPrefix("$") {
        unescapedDollar = current
      }
      components.append(current)
      current = ""
      escapedDollar = false
    }
    for character in text {
      if escaped {
        if character == "$" && current.isEmpty {
          escapedDollar = true
        } else if character != "." && character != "\\" {
          current.append("\\")
        }
        current.append(character)
        escaped = false
      } else if character == "\\" {
        escaped = true
      } else if character == "." {
        endComponent()
      } else {
        current.append(character)
      }
    }
    if escaped { current.append("\\") }
    endComponent()
    try Names.refuseNUL(text, kind: "field path", code: .invalidQuery)
    if components.count > FieldPath.maxComponents {
      throw SetteeError(
        .limitExceeded,
        "field path \(quoted(String(text.prefix(60))))… has \(components.count) components, more than the limit of \(FieldPath.maxComponents)"
      )
    }
    for component in components where component.isEmpty {
      throw SetteeError(.invalidQuery, "field path \(quoted(text)) has an empty component")
    }
    if let component = unescapedDollar, !allowingDollar {
      throw SetteeError(
        .invalidQuery,
        "field path \(quoted(text)) has a component starting with '$' (\(quoted(component))), which reads as an operator: write a member whose name starts with '$' as \(quoted("\\" + component))"
      )
    }
    self.components = components
  }

  /// The path itself, for selectors inside `$elemMatch` that apply to the element.
  package static let root = FieldPath(components: [])

  /// Whether this is the value itself (no components).
  package var isRoot: Bool { components.isEmpty }

  /// This path followed by `other`.
  package func appending(_ other: FieldPath) -> FieldPath {
    FieldPath(components: components + other.components)
  }

  /// Dotted notation, with dots and backslashes inside components escaped.
  public var description: String {
    components.map(FieldPath.escape).joined(separator: ".")
  }

  /// A member name written as one path component: `\` and `.` escaped, and a leading `$`
  /// written `\$` (so that it does not read as an operator).
  package static func escape(_ name: String) -> String {
    guard name.contains(where: { $0 == "." || $0 == "\\" }) || name.hasPrefix("$") else {
      return name
    }
    let escaped = name.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(
      of: ".", with: "\\.")
    return escaped.hasPrefix("$") ? "\\" + escaped : escaped
  }

  public static func < (lhs: FieldPath, rhs: FieldPath) -> Bool {
    lhs.components.lexicographicallyPrecedes(rhs.components)
  }

  /// The component as an array index, if it is a canonical non-negative integer.
  package static func arrayIndexOf(_ component: String) -> Int? { arrayIndex(component) }

  static func arrayIndex(_ component: String) -> Int? {
    guard let first = component.utf8.first, first >= UInt8(ascii: "0"), first <= UInt8(ascii: "9"),
      component == "0" || first != UInt8(ascii: "0"), component.utf8.count < 10
    else { return nil }
    return Int(component)
  }
}

func quoted(_ text: String) -> String { JSONWriter.string(.string(text)) }
