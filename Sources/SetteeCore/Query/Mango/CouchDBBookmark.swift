/// Where a page of a CouchDB-dialect find ended: the last result's key in the index read
/// and its id; the next page starts after it (and skips `skip` more, as CouchDB's does).
///
/// The token is base64url of `[key, id]` as JSON: opaque to clients, as CouchDB's is.
package struct CouchDBBookmark: Sendable, Hashable {
  /// The index key of the last result (its values of the index's columns).
  package var key: [JSON]
  /// Its document id.
  package var id: String

  package init(key: [JSON], id: String) {
    self.key = key
    self.id = id
  }

  /// Decodes a token; `nil` for the start (`"nil"`, `""`).
  ///
  /// - Throws: ``SetteeError`` `invalid_bookmark`.
  package init?(token: String) throws {
    if token == "nil" || token.isEmpty { return nil }
    guard let data = FindBookmark.bytes(base64URL: token),
      case .array(let parts)? = try? JSONParser.parse(data), parts.count == 2,
      case .array(let key) = parts[0], case .string(let id) = parts[1]
    else {
      throw SetteeError.couchDB(
        "invalid_bookmark", "Invalid bookmark value: \(JSONWriter.string(.string(token)))")
    }
    self.init(key: key, id: id)
  }

  /// The token.
  package var token: String {
    FindBookmark.base64URL(JSONWriter.bytes(.array([.array(key), .string(id)])))
  }
}
