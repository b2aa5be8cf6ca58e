import Foundation
import GRDB
import SetteeCore

// The async twins.
extension ValueIndexes {
  /// Defines an index over one field without blocking the caller's thread.
  public func define(_ name: String, field: String, type: ValueType = .string) async throws {
    try await collection.database.withConnection(.writing) {
      try self.define(name, field: field, type: type)
    }
  }

  /// Defines an index computed by a Swift function without blocking the caller's thread.
  public func define(
    _ name: String, type: ValueType, version: String,
    indexer: @escaping @Sendable (Document) throws -> [JSON]
  ) async throws {
    try await collection.database.withConnection(.writing) {
      try self.define(name, type: type, version: version, indexer: indexer)
    }
  }

  /// Deletes an index without blocking the caller's thread.
  public func delete(_ name: String) async throws {
    try await collection.database.withConnection(.writing) { try self.delete(name) }
  }

  /// The names of the collection's value indexes, without blocking the caller's thread.
  public func names() async throws -> [String] {
    try await collection.database.withConnection(.reading) { try self.names() }
  }

  /// The documents that satisfy every condition, without blocking the caller's thread.
  public func documents(
    matching conditions: [String: Condition], sortedBy sortIndex: String? = nil,
    descending: Bool = false, offset: Int = 0, limit: Int? = nil
  ) async throws -> [Document] {
    try await collection.database.withConnection(.reading) {
      try self.documents(
        matching: conditions, sortedBy: sortIndex, descending: descending, offset: offset,
        limit: limit)
    }
  }

  /// The ids of the matching documents, without blocking the caller's thread.
  public func documentIDs(
    matching conditions: [String: Condition], sortedBy sortIndex: String? = nil,
    descending: Bool = false, offset: Int = 0, limit: Int? = nil
  ) async throws -> [String] {
    try await collection.database.withConnection(.reading) {
      try self.documentIDs(
        matching: conditions, sortedBy: sortIndex, descending: descending, offset: offset,
        limit: limit)
    }
  }

  /// Every distinct value an index holds, without blocking the caller's thread.
  public func uniqueValues(of name: String) async throws -> [JSON] {
    try await collection.database.withConnection(.reading) { try self.uniqueValues(of: name) }
  }

  /// Brings every index of the collection up to date without blocking the caller's thread.
  public func updateAll() async throws {
    try await collection.database.withConnection(.writing) { try self.updateAll() }
  }
}
