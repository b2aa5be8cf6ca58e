import Foundation
import GRDB
import SetteeCore

/// How a `where` field is read from a body: its JSON path, and strings holding U+0000.
extension WhereFieldTable {
  /// How strings are read from bodies: SQLite's JSON functions end a string at its first
  /// U+0000, which would make `"victim@x.org\u0000evil"` equal `"victim@x.org"` in
  /// queries and unique indexes.
  enum StringReading {
    /// `json_extract` alone, for a collection none of whose documents has held U+0000.
    case plain
    /// Whole: a body that prints the escape `\u0000` (``JSONWriter``), which `instr`
    /// finds, has its string read by ``SQLFunctions/jsonString``.
    case whole
    /// Whole, with the byte search made once for the whole row: `condition` is true when
    /// the body holds the escape (a trigger computes it once for all its fields).
    case wholeWhen(SQLFragment)
  }

  /// The value of one field as queries read it: `json_extract`, or the default when the
  /// document lacks the member (a member holding null is null, not the default).
  static func value(
    body: SQLFragment, path: SQLFragment, default defaultValue: SQLFragment?,
    reading: StringReading = .whole
  ) -> SQLFragment {
    let read = extract(body: body, path: path, reading)
    guard let defaultValue else { return read }
    return SQLFragment("(CASE WHEN json_type(") + body + SQLFragment(", ") + path
      + SQLFragment(") IS NULL THEN ") + defaultValue + SQLFragment(" ELSE ") + read
      + SQLFragment(" END)")
  }

  /// `json_extract(body, path)`, strings read as `reading` says; a whole string comes from
  /// ``SQLFunctions/jsonString`` as bytes, read back as text.
  static func extract(body: SQLFragment, path: SQLFragment, _ reading: StringReading)
    -> SQLFragment
  {
    let plain = SQLFragment("json_extract(") + body + SQLFragment(", ") + path + SQLFragment(")")
    let holdsNUL: SQLFragment
    switch reading {
    case .plain: return plain
    case .whole: holdsNUL = SQLFragment("instr(") + body + SQLFragment(", '\\u0000') > 0")
    case .wholeWhen(let condition): holdsNUL = condition
    }
    return SQLFragment("(CASE WHEN ") + holdsNUL + SQLFragment(" AND json_type(") + body
      + SQLFragment(", ") + path + SQLFragment(") = 'text' THEN CAST(settee_json_string(")
      + body + SQLFragment(", ") + path + SQLFragment(") AS TEXT) ELSE ") + plain
      + SQLFragment(" END)")
  }

  /// The value of `field` in the JSON text `body` (a column or a bound value), as
  /// ``value(body:path:default:)`` reads it with the field's path and default bound.
  static func value(
    of field: FieldPath, in body: SQLFragment, _ settings: WhereSettings,
    reading: StringReading = .whole
  ) throws -> SQLFragment {
    value(
      body: body, path: .value(try jsonPath(field)),
      default: settings.defaultValue(of: field).map { .whereValue($0.whereArgument) },
      reading: reading)
  }

  /// SQLite's JSON path of a field (`$."a"."b"`, `$."tags"[0]`).
  ///
  /// A label holds the name as ``JSONWriter`` escapes it in stored bodies (`\\` for a
  /// backslash, `\t`, `\u0001`): SQLite 3.40 compares labels with the stored, escaped
  /// text of names, and later versions decode both sides, so the escaped form finds the
  /// member in either. A double quote cannot be written in a label at all.
  ///
  /// - Throws: ``SetteeError`` (`invalidQuery`) for a name holding a double quote.
  static func jsonPath(_ field: FieldPath) throws -> String {
    var path = JSONPathText.root
    for component in field.components {
      if let index = FieldPath.arrayIndexOf(component) {
        path = JSONPathText.element(path, index)
      } else if let member = JSONPathText.escapedMember(path, component) {
        path = member
      } else {
        throw SetteeError(
          .invalidQuery,
          "field [\(field)] holds a double quote, which SQLite's JSON paths cannot name")
      }
    }
    return path
  }

  /// One step of a JSON path.
  enum PathComponent: Equatable {
    case member(String)
    case index(Int)
  }

  /// The steps of a path that ``jsonPath(_:)`` wrote; `nil` for any other text.
  static func components(ofJSONPath path: String) -> [PathComponent]? {
    var bytes = Array(path.utf8)[...]
    guard bytes.popFirst() == UInt8(ascii: "$") else { return nil }
    var components: [PathComponent] = []
    while let first = bytes.popFirst() {
      if first == UInt8(ascii: "["), let end = bytes.firstIndex(of: UInt8(ascii: "]")),
        let index = Int(String(decoding: bytes[..<end], as: UTF8.self))
      {
        components.append(.index(index))
        bytes = bytes[(end + 1)...]
      } else if first == UInt8(ascii: "."), bytes.popFirst() == UInt8(ascii: "\""),
        let end = bytes.firstIndex(of: UInt8(ascii: "\"")),
        case .string(let name)? = try? JSONParser.parse(
          "\"" + String(decoding: bytes[..<end], as: UTF8.self) + "\"")
      {
        components.append(.member(name))
        bytes = bytes[(end + 1)...]
      } else {
        return nil
      }
    }
    return components
  }
}
