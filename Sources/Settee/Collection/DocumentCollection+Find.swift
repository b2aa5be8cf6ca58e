import GRDB
import SetteeCore

extension DocumentCollection {
  /// The documents that match a query, in its order.
  ///
  /// ```swift
  /// let query = FindQuery(selector: try SelectorParser.parse(#"{"age": {"$gt": 12}}"#),
  ///                       sort: [.init("age", descending: true)], limit: 10)
  /// for person in try people.find(query) { print(person["name"]!) }
  /// ```
  ///
  /// - Throws: ``SetteeError`` (`invalidQuery`, `noUsableIndex`, `storage`).
  public func find(_ query: FindQuery) throws -> [Document] {
    var results: [Document] = []
    try find(query) { results.append($0) }
    return results
  }

  /// Streams the matching documents to `body` one at a time, from one snapshot, without
  /// holding them all in memory.
  public func find(_ query: FindQuery, _ body: (Document) throws -> Void) throws {
    let name = self.name
    try database.read { db in
      guard let cid = try DocumentReader.collectionID(db, name) else { return }
      let plan = try QueryPlanner.plan(query, collectionID: cid)
      try DocumentCollection.run(plan, query: query, db: db, body)
    }
  }

  /// Runs a selector given as JSON, the seed's `find(_:skip:limit:fields:sort:)`.
  ///
  /// - Parameters:
  ///   - selector: a selector object, such as `["pet.species": "cat"]`.
  ///   - sort: `[["name": "asc"], ["age": "desc"]]` or plain field names.
  ///   - fields: the fields to return (with `_id` and `_rev`); `nil` for whole documents.
  public func find(
    _ selector: JSONObject, skip: Int = 0, limit: Int = 0, fields: [String]? = nil,
    sort: [JSON]? = nil
  ) throws -> [Document] {
    var query = FindQuery(selector: try SelectorParser.parse(.object(selector)), skip: skip, limit: limit)
    if let fields { query.fields = try fields.map { try FieldPath(parsing: $0) } }
    if let sort { query.sort = try FindQuery.parseSort(.array(sort)) }
    return try find(query)
  }

  /// The first matching document, if any.
  public func findOne(_ query: FindQuery) throws -> Document? {
    var one = query
    one.limit = 1
    return try find(one).first
  }

  /// The matching documents decoded as `type`.
  public func find<T: Decodable>(_ type: T.Type, _ query: FindQuery) throws -> [T] {
    try find(query).map { try $0.decode(type) }
  }

  /// How many documents match (skip and limit do not apply).
  public func count(_ query: FindQuery) throws -> Int {
    let name = self.name
    return try database.read { db in
      guard let cid = try DocumentReader.collectionID(db, name) else { return 0 }
      let sql = try QueryPlanner.count(query, collectionID: cid)
      return try Int.fetchOne(db, sql: sql.text, arguments: sql.statementArguments) ?? 0
    }
  }

  /// The plan a query would run with: index, SQL, and why.
  public func explain(_ query: FindQuery) throws -> QueryPlan {
    let name = self.name
    return try database.read { db in
      let cid = try DocumentReader.collectionID(db, name) ?? -1
      return try QueryPlanner.plan(query, collectionID: cid)
    }
  }

  static func run(
    _ plan: QueryPlan, query: FindQuery, db: SQLConnection, _ body: (Document) throws -> Void
  ) throws {
    let rows = try Row.fetchCursor(db, sql: plan.statement.text, arguments: plan.statement.statementArguments)
    while let row = try rows.next() {
      var document = Document(
        id: row[0], rev: try RevisionID(parsing: row[1]), body: try DocumentReader.parseBody(row, at: 2))
      if let fields = query.fields { document = Matcher.project(document, fields) }
      try body(document)
    }
  }
}
