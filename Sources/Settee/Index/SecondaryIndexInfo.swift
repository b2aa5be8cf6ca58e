import SetteeCore

/// One piece of secondary data a collection keeps beside its documents, whatever its
/// kind: what `DocumentCollection.secondaryIndexes()` and `settee describe` list, so that
/// a user sees what every write pays for and what a query may read.
public struct SecondaryIndexInfo: Sendable, Hashable {
  /// The kind of secondary data.
  public enum Kind: String, Sendable, Hashable {
    /// A Mango JSON index.
    case json
    /// A Mango TEXT index (full-text search).
    case text
    /// A view.
    case view
    /// A value index (seed 001).
    case valueIndex = "value_index"
    /// The `where` face's table of queryable fields and its indexes.
    case whereFields = "where_fields"
  }

  /// How it is kept in step with the documents.
  public enum Upkeep: String, Sendable, Hashable {
    /// In each write's transaction: every write pays for it.
    case inWriteTransaction = "in_write"
    /// By SQLite triggers on each write: every write pays for it.
    case byTrigger = "by_trigger"
    /// Caught up from the changes when queried: writes pay nothing.
    case onRead = "on_read"
  }

  /// Its kind.
  public var kind: Kind
  /// Its name (for the `where` face's fields, the fields).
  public var name: String
  /// How it is kept current.
  public var upkeep: Upkeep
  /// How many entries or rows it holds.
  public var rows: Int
  /// For data caught up on read: how many of the collection's changes it has not caught
  /// up with yet (`0`: current); `nil` for the others, always current.
  public var changesBehind: Int64?

  /// `{"kind", "name", "upkeep", "rows"[, "changes_behind"]}`.
  public var json: JSON {
    var members: [(String, JSON)] = [
      ("kind", .string(kind.rawValue)), ("name", .string(name)),
      ("upkeep", .string(upkeep.rawValue)), ("rows", .int(Int64(rows))),
    ]
    if let changesBehind { members.append(("changes_behind", .int(changesBehind))) }
    return .object(JSONObject(members))
  }
}

extension Upkeep {
  var info: SecondaryIndexInfo.Upkeep {
    switch self {
    case .inWriteTransaction: .inWriteTransaction
    case .byTrigger: .byTrigger
    case .onRead: .onRead
    }
  }
}

extension DocumentCollection {
  /// Every piece of secondary data the collection keeps, of every kind, in the order of
  /// the registry (JSON indexes, TEXT indexes, views and value indexes, `where` fields).
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func secondaryIndexes() throws -> [SecondaryIndexInfo] {
    try database.read { db in
      guard let cid = try DocumentReader.collectionID(db, name) else { return [] }
      return try SecondaryIndexes.kinds.flatMap { try $0.describe(db, cid: cid) }
    }
  }

  /// Every piece of secondary data the collection keeps, without blocking the caller's
  /// thread.
  public func secondaryIndexes() async throws -> [SecondaryIndexInfo] {
    try await database.withConnection(.reading) { try self.secondaryIndexes() }
  }
}
