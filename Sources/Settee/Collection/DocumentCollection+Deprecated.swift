import Foundation

// The spellings before the Mango builder's calls took `matching:` (issue 30): `where:` with
// a `Where` read like the `where` face's `find(where: "…")`, whose semantics on arrays
// and booleans differ. Kept for one release.
extension DocumentCollection {
  /// Deprecated: `find(matching:sort:fields:skip:limit:)`.
  @available(*, deprecated, renamed: "find(matching:sort:fields:skip:limit:)")
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func find(
    where predicate: Where, sort: [Sort] = [], fields: [Field]? = nil, skip: Int = 0,
    limit: Int = 0
  ) throws -> [Document] {
    try find(matching: predicate, sort: sort, fields: fields, skip: skip, limit: limit)
  }

  /// Deprecated: `find(_:matching:sort:skip:limit:)`.
  @available(*, deprecated, renamed: "find(_:matching:sort:skip:limit:)")
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func find<T: Decodable>(
    _ type: T.Type, where predicate: Where, sort: [Sort] = [], skip: Int = 0, limit: Int = 0
  ) throws -> [T] {
    try find(type, matching: predicate, sort: sort, skip: skip, limit: limit)
  }

  /// Deprecated: `findOne(matching:sort:)`.
  @available(*, deprecated, renamed: "findOne(matching:sort:)")
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func findOne(where predicate: Where, sort: [Sort] = []) throws -> Document? {
    try findOne(matching: predicate, sort: sort)
  }

  /// Deprecated: `findOne(_:matching:sort:)`.
  @available(*, deprecated, renamed: "findOne(_:matching:sort:)")
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func findOne<T: Decodable>(_ type: T.Type, where predicate: Where, sort: [Sort] = [])
    throws -> T?
  {
    try findOne(type, matching: predicate, sort: sort)
  }

  /// Deprecated: `count(matching:)`.
  @available(*, deprecated, renamed: "count(matching:)")
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func count(where predicate: Where) throws -> Int {
    try count(matching: predicate)
  }

  /// Deprecated: `find(matching:sort:fields:skip:limit:)`.
  @available(*, deprecated, renamed: "find(matching:sort:fields:skip:limit:)")
  public func find(
    where predicate: Where, sort: [Sort] = [], fields: [Field]? = nil, skip: Int = 0,
    limit: Int = 0
  ) async throws -> [Document] {
    try await find(matching: predicate, sort: sort, fields: fields, skip: skip, limit: limit)
  }

  /// Deprecated: `find(_:matching:sort:skip:limit:)`.
  @available(*, deprecated, renamed: "find(_:matching:sort:skip:limit:)")
  public func find<T: Decodable & Sendable>(
    _ type: T.Type, where predicate: Where, sort: [Sort] = [], skip: Int = 0, limit: Int = 0
  ) async throws -> [T] {
    try await find(type, matching: predicate, sort: sort, skip: skip, limit: limit)
  }

  /// Deprecated: `findOne(matching:sort:)`.
  @available(*, deprecated, renamed: "findOne(matching:sort:)")
  public func findOne(where predicate: Where, sort: [Sort] = []) async throws -> Document? {
    try await findOne(matching: predicate, sort: sort)
  }

  /// Deprecated: `findOne(_:matching:sort:)`.
  @available(*, deprecated, renamed: "findOne(_:matching:sort:)")
  public func findOne<T: Decodable & Sendable>(
    _ type: T.Type, where predicate: Where, sort: [Sort] = []
  ) async throws -> T? {
    try await findOne(type, matching: predicate, sort: sort)
  }

  /// Deprecated: `count(matching:)`.
  @available(*, deprecated, renamed: "count(matching:)")
  public func count(where predicate: Where) async throws -> Int {
    try await count(matching: predicate)
  }
}
