import Foundation
import SetteeCore

extension DocumentCollection {
  /// Stores an `Encodable` value as a document.
  ///
  /// `id` and `rev`, when given, set `_id` and `_rev`; otherwise the value's own `_id` and
  /// `_rev` members (if its type has them) are used.
  ///
  /// - Throws: the encoder's error, or ``SetteeError`` (for example `invalidDocument` when
  ///   the value does not encode to a JSON object, `conflict` on a stale revision).
  @discardableResult
  public func put(
    _ value: some Encodable, id: String? = nil, rev: RevisionID? = nil,
    encoder: JSONEncoder = JSONEncoder()
  ) throws -> WriteResult {
    try put(DocumentCollection.object(encoding: value, id: id, rev: rev, encoder: encoder))
  }

  /// Reads a live document and decodes it (with `_id` and `_rev`) as `type`.
  public func get<T: Decodable>(
    _ type: T.Type, id: String, decoder: JSONDecoder = JSONDecoder()
  ) throws -> T? {
    try get(id)?.decode(type, decoder: decoder)
  }

  static func object(
    encoding value: some Encodable, id: String?, rev: RevisionID?, encoder: JSONEncoder
  ) throws -> JSONObject {
    let json = try JSON(encoding: value, encoder: encoder)
    guard case .object(var object) = json else {
      throw SetteeError(
        .invalidDocument, "\(type(of: value)) encodes to a JSON \(json.typeName), not an object")
    }
    if let id { object["_id"] = .string(id) }
    if let rev { object["_rev"] = .string(rev.description) }
    return object
  }
}
