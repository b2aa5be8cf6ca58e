import Foundation

extension DocumentCollection {
  /// The documents for which a Swift predicate (Mango's query language, built in Swift)
  /// holds, in order. `find(where: "…")` takes a `where` string instead, whose semantics
  /// are SQLite's (see the `where` face).
  ///
  /// ```swift
  /// let kids = try people.find(
  ///   matching: Field("age") < 13 && Field("pet.species").in(["cat", "dog"]),
  ///   sort: [.descending("age")], fields: ["name", "age"], limit: 10)
  /// ```
  ///
  /// - Throws: ``SetteeError`` (`invalidQuery` for a bad path or argument, as for JSON).
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func find(
    matching predicate: Where, sort: [Sort] = [], fields: [Field]? = nil, skip: Int = 0,
    limit: Int = 0
  ) throws -> [Document] {
    try find(FindQuery(matching: predicate, sort: sort, fields: fields, skip: skip, limit: limit))
  }

  /// The matching documents decoded as `type`.
  ///
  /// - Throws: as `find(matching:sort:fields:skip:limit:)`, and `invalidDocument` for a
  ///   document that does not decode.
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func find<T: Decodable>(
    _ type: T.Type, matching predicate: Where, sort: [Sort] = [], skip: Int = 0, limit: Int = 0
  ) throws -> [T] {
    try find(matching: predicate, sort: sort, skip: skip, limit: limit).map { try $0.decode(type) }
  }

  /// The first matching document, if any.
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func findOne(matching predicate: Where, sort: [Sort] = []) throws -> Document? {
    try find(matching: predicate, sort: sort, limit: 1).first
  }

  /// The first matching document decoded as `type`, if any.
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func findOne<T: Decodable>(_ type: T.Type, matching predicate: Where, sort: [Sort] = [])
    throws -> T?
  {
    try findOne(matching: predicate, sort: sort)?.decode(type)
  }

  /// How many documents match.
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func count(matching predicate: Where) throws -> Int {
    try count(FindQuery(matching: predicate))
  }
}

extension DocumentCollection {
  /// The documents for which a Swift predicate holds, without blocking the caller's thread.
  public func find(
    matching predicate: Where, sort: [Sort] = [], fields: [Field]? = nil, skip: Int = 0,
    limit: Int = 0
  ) async throws -> [Document] {
    try await find(
      FindQuery(matching: predicate, sort: sort, fields: fields, skip: skip, limit: limit))
  }

  /// The matching documents decoded as `type`, without blocking the caller's thread.
  public func find<T: Decodable & Sendable>(
    _ type: T.Type, matching predicate: Where, sort: [Sort] = [], skip: Int = 0, limit: Int = 0
  ) async throws -> [T] {
    try await find(matching: predicate, sort: sort, skip: skip, limit: limit).map {
      try $0.decode(type)
    }
  }

  /// The first matching document, without blocking the caller's thread.
  public func findOne(matching predicate: Where, sort: [Sort] = []) async throws -> Document? {
    try await find(matching: predicate, sort: sort, limit: 1).first
  }

  /// The first matching document decoded as `type`, without blocking the caller's thread.
  public func findOne<T: Decodable & Sendable>(
    _ type: T.Type, matching predicate: Where, sort: [Sort] = []
  ) async throws -> T? {
    try await findOne(matching: predicate, sort: sort)?.decode(type)
  }

  /// How many documents match, without blocking the caller's thread.
  public func count(matching predicate: Where) async throws -> Int {
    try await count(FindQuery(matching: predicate))
  }
}
