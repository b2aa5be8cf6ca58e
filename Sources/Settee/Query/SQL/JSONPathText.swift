import SetteeCore

/// SQLite JSON path text for Settee's field paths: the one writer of the paths that the
/// selector compiler, the `where` face's field tables and SQL-mapped views give SQLite's
/// JSON functions (always as bound values, never spliced).
///
/// A label is compared by SQLite 3.40 with the stored, escaped text of a member name
/// (later versions decode both sides), and no label can hold a double quote.
enum JSONPathText {
  /// The path of the whole value.
  static let root = "$"

  /// Whether a member name can be written as a label as it is and be found by every
  /// SQLite version Settee runs on: no double quote, backslash or control character.
  static func isPlainLabel(_ name: String) -> Bool {
    !name.utf8.contains { $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") || $0 < 0x20 }
  }

  /// `path."name"`, the name written as it is (for a name ``isPlainLabel(_:)`` accepts).
  static func member(_ path: String, _ name: String) -> String {
    path + ".\"" + name + "\""
  }

  /// `path."name"`, the name escaped as ``JSONWriter`` escapes stored names (`\\`, `\t`,
  /// `\u0001`), which finds the member in every SQLite version; `nil` for a name holding
  /// a double quote, which no label can name.
  static func escapedMember(_ path: String, _ name: String) -> String? {
    guard !name.utf8.contains(UInt8(ascii: "\"")) else { return nil }
    return member(path, String(JSONWriter.string(.string(name)).dropFirst().dropLast()))
  }

  /// `path[index]`.
  static func element(_ path: String, _ index: Int) -> String { path + "[\(index)]" }
}
