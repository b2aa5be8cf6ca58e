import Foundation

/// The one rule for names that Settee stores and compares: document ids, collection names,
/// index names and field names (member names in documents, paths in selectors, sorts,
/// projections and index definitions).
///
/// A name must not contain U+0000. SQLite's C interface reads bound text up to its first
/// NUL, so such a name would be stored and compared cut short (`"d1\u0000x"` would write
/// to `"d1"`). MongoDB refuses NUL in field and collection names for the same kind of
/// reason. Values (strings inside documents) may hold U+0000; they are stored whole.
package enum Names {
  /// Whether `name` holds U+0000 (a byte search of its UTF-8: the generic `contains` of
  /// the UTF-8 view was a fiftieth of an import, which checks every member name).
  package static func containsNUL(_ name: String) -> Bool {
    if let found = name.utf8.withContiguousStorageIfAvailable({ bytes in
      bytes.count > 0 && memchr(bytes.baseAddress!, 0, bytes.count) != nil
    }) {
      return found
    }
    return name.utf8.contains(0)
  }

  /// Throws `code` with a message saying what kind of name holds U+0000.
  /// Refuses a name or value that holds a control character (U+0000 to U+001F, U+007F):
  /// it could not travel in an HTTP header (a CR or LF would end one and begin another).
  package static func refuseControlCharacters(
    _ text: String, kind: String, code: SetteeError.Code, documentID: String? = nil
  ) throws {
    guard text.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) else { return }
    throw SetteeError(
      code,
      "\(kind) \(quoted(text)) holds a control character (CR, LF, tab …), which cannot travel in an HTTP header",
      documentID: documentID)
  }

  package static func refuseNUL(
    _ name: String, kind: String, code: SetteeError.Code, documentID: String? = nil
  ) throws {
    guard containsNUL(name) else { return }
    throw SetteeError(
      code, "\(kind) \(quoted(name)) contains U+0000, which names may not hold",
      documentID: documentID)
  }
}
