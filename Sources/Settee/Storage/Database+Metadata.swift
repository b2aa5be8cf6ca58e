import GRDB
import SetteeCore

/// The store-wide metadata of seed 003: any JSON value by key, kept in the database file
/// beside the collections (for an app's own settings about its data).
extension Database {
  /// The value stored under `key`, or `nil`.
  ///
  /// - Throws: ``SetteeError`` with code `invalidArgument` for a key holding U+0000,
  ///   `corruption` for a stored value that no longer parses.
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func metadata(forKey key: String) throws -> JSON? {
    try Names.refuseNUL(key, kind: "metadata key", code: .invalidArgument)
    return try read { db in
      guard
        let text = try String.fetchOne(
          db.cachedStatement(sql: "SELECT value FROM metadata WHERE key = ?"), arguments: [key])
      else { return nil }
      do { return try JSONParser.parse(text) } catch {
        throw SetteeError(.corruption, "metadata \(JSON.string(key)) is damaged")
      }
    }
  }

  /// Stores `value` under `key`; `nil` removes the key.
  ///
  /// - Throws: ``SetteeError`` with code `invalidArgument` for a key holding U+0000.
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func setMetadata(_ value: JSON?, forKey key: String) throws {
    try Names.refuseNUL(key, kind: "metadata key", code: .invalidArgument)
    try write { db in
      if let value {
        try db.execute(
          sql:
            "INSERT INTO metadata (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
          arguments: [key, JSONWriter.string(value)])
      } else {
        try db.execute(sql: "DELETE FROM metadata WHERE key = ?", arguments: [key])
      }
    }
  }

  /// Every metadata key, sorted.
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func metadataKeys() throws -> [String] {
    try read { db in try String.fetchAll(db, sql: "SELECT key FROM metadata ORDER BY key") }
  }

  /// The value stored under `key`, without blocking the caller's thread.
  public func metadata(forKey key: String) async throws -> JSON? {
    try await withConnection(.brief) { try self.metadata(forKey: key) }
  }

  /// Stores or removes a value without blocking the caller's thread.
  public func setMetadata(_ value: JSON?, forKey key: String) async throws {
    try await withConnection(.writing) { try self.setMetadata(value, forKey: key) }
  }

  /// Every metadata key, without blocking the caller's thread.
  public func metadataKeys() async throws -> [String] {
    try await withConnection(.reading) { try self.metadataKeys() }
  }
}
