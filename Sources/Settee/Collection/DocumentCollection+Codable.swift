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
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func put(
    _ value: some Encodable, id: String? = nil, rev: RevisionID? = nil,
    encoder: JSONEncoder = JSONEncoder()
  ) throws -> WriteResult {
    try put(DocumentCollection.object(encoding: value, id: id, rev: rev, encoder: encoder))
  }

  /// Creates or replaces a document from an `Encodable` value without naming a revision
  /// (see ``upsert(_:)-9yoft``); `id`, when given, sets `_id`.
  @discardableResult
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func upsert(
    _ value: some Encodable, id: String? = nil, encoder: JSONEncoder = JSONEncoder()
  ) throws -> WriteResult {
    try upsert(DocumentCollection.object(encoding: value, id: id, rev: nil, encoder: encoder))
  }

  /// Deletes the document an `Encodable` value stands for, by its `_id` and `_rev` members
  /// (a `Codable` type that mirrors documents holds both, `_rev` as a `String`).
  ///
  /// - Throws: ``SetteeError`` with code `invalidDocument` when the value has no `_id` or
  ///   `_rev`, and as ``delete(_:rev:)-4mi6e``.
  @discardableResult
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func delete(_ value: some Encodable, encoder: JSONEncoder = JSONEncoder()) throws
    -> WriteResult
  {
    let object = try DocumentCollection.object(encoding: value, id: nil, rev: nil, encoder: encoder)
    guard case .string(let id)? = object["_id"], case .string(let rev)? = object["_rev"] else {
      throw SetteeError(
        .invalidDocument,
        "\(type(of: value)) has no \"_id\" and \"_rev\" members as strings, so it names no document revision to delete"
      )
    }
    return try delete(id, rev: rev)
  }

  /// Reads a live document and decodes it (with `_id` and `_rev`) as `type`.
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
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

// The async twins: the same calls without blocking the caller's thread.
extension DocumentCollection {
  /// Stores an `Encodable` value as a document, without blocking the caller's thread.
  @discardableResult
  public func put<T: Encodable & Sendable>(_ value: T, id: String? = nil, rev: RevisionID? = nil)
    async throws -> WriteResult
  {
    try await database.withConnection(.writing) { try self.put(value, id: id, rev: rev) }
  }

  /// Creates or replaces a document from an `Encodable` value, without blocking.
  @discardableResult
  public func upsert<T: Encodable & Sendable>(_ value: T, id: String? = nil) async throws
    -> WriteResult
  {
    try await database.withConnection(.writing) { try self.upsert(value, id: id) }
  }

  /// Reads a live document decoded as `type`, without blocking the caller's thread.
  public func get<T: Decodable & Sendable>(_ type: T.Type, id: String) async throws -> T? {
    try await database.withConnection(.brief) { try self.get(type, id: id) }
  }
}
