import Foundation

extension DocumentCollection {
  /// The documents for which a Swift predicate holds, in order.
  ///
  /// ```swift
  /// let kids = try people.find(
  ///   where: Field("age") < 13 && Field("pet.species").in(["cat", "dog"]),
  ///   sort: [.descending("age")], fields: ["name", "age"], limit: 10)
  /// ```
  ///
  /// - Throws: ``SetteeError`` (`invalidQuery` for a bad path or argument, as for JSON).
  public func find(
    where predicate: Where, sort: [Sort] = [], fields: [Field]? = nil, skip: Int = 0,
    limit: Int = 0
  ) throws -> [Document] {
    try find(FindQuery(where: predicate, sort: sort, fields: fields, skip: skip, limit: limit))
  }

  /// The matching documents decoded as `type`.
  ///
  /// - Throws: as ``find(where:sort:fields:skip:limit:)-94ad7``, and `invalidDocument` for a
  ///   document that does not decode.
  public func find<T: Decodable>(
    _ type: T.Type, where predicate: Where, sort: [Sort] = [], skip: Int = 0, limit: Int = 0
  ) throws -> [T] {
    try find(where: predicate, sort: sort, skip: skip, limit: limit).map { try $0.decode(type) }
  }

  /// The first matching document, if any.
  public func findOne(where predicate: Where, sort: [Sort] = []) throws -> Document? {
    try find(where: predicate, sort: sort, limit: 1).first
  }

  /// The first matching document decoded as `type`, if any.
  public func findOne<T: Decodable>(_ type: T.Type, where predicate: Where, sort: [Sort] = [])
    throws -> T?
  {
    try findOne(where: predicate, sort: sort)?.decode(type)
  }

  /// How many documents match.
  public func count(where predicate: Where) throws -> Int {
    try count(FindQuery(where: predicate))
  }
}

extension DocumentCollection {
  /// The documents for which a Swift predicate holds, without blocking the caller's thread.
  public func find(
    where predicate: Where, sort: [Sort] = [], fields: [Field]? = nil, skip: Int = 0,
    limit: Int = 0
  ) async throws -> [Document] {
    try await find(
      FindQuery(where: predicate, sort: sort, fields: fields, skip: skip, limit: limit))
  }

  /// The matching documents decoded as `type`, without blocking the caller's thread.
  public func find<T: Decodable & Sendable>(
    _ type: T.Type, where predicate: Where, sort: [Sort] = [], skip: Int = 0, limit: Int = 0
  ) async throws -> [T] {
    try await find(where: predicate, sort: sort, skip: skip, limit: limit).map {
      try $0.decode(type)
    }
  }

  /// The first matching document, without blocking the caller's thread.
  public func findOne(where predicate: Where, sort: [Sort] = []) async throws -> Document? {
    try await find(where: predicate, sort: sort, limit: 1).first
  }

  /// The first matching document decoded as `type`, without blocking the caller's thread.
  public func findOne<T: Decodable & Sendable>(
    _ type: T.Type, where predicate: Where, sort: [Sort] = []
  ) async throws -> T? {
    try await findOne(where: predicate, sort: sort)?.decode(type)
  }

  /// How many documents match, without blocking the caller's thread.
  public func count(where predicate: Where) async throws -> Int {
    try await count(FindQuery(where: predicate))
  }
}
