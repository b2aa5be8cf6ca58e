import Foundation
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
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func find(_ query: FindQuery) throws -> [Document] {
    var results: [Document] = []
    let (name, database) = (self.name, self.database)
    _ = try database.query { db in
      try DocumentCollection.find(query, collection: name, in: database, db: db) {
        results.append($0)
      }
    }
    return results
  }

  /// Streams the matching documents to `body` one at a time, from one snapshot, without
  /// holding them all in memory, and returns what CouchDB's `_find` response carries
  /// besides them: the bookmark of the next page, a warning, execution statistics.
  ///
  /// `body` may call the collection (`get`, `find`, `count`, and writes too): reads run in
  /// the same snapshot, writes commit at once without disturbing the stream, which goes on
  /// showing the snapshot it started with.
  ///
  /// - Throws: ``SetteeError`` (`invalidQuery`, `noUsableIndex`, `storage`), or what `body`
  ///   throws, as it threw it (the stream stops there).
  @discardableResult
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func find(_ query: FindQuery, _ body: (Document) throws -> Void) throws -> FindSummary {
    let (name, database) = (self.name, self.database)
    return try CallerError.unmarking {
      try database.query { db in
        try DocumentCollection.find(
          query, collection: name, in: database, db: db, freshStatement: true, summary: true
        ) { document in try CallerError.marking { try body(document) } }
      }
    }
  }

  /// The matching documents with what CouchDB's `_find` response carries besides them:
  /// the `bookmark` that continues after the last of them, a warning, and, when the query
  /// asks (``FindQuery/executionStats``), what it read.
  ///
  /// ```swift
  /// var query = try FindQuery(matching: Field("age") > 12, sort: [.ascending("age")], limit: 10)
  /// repeat {
  ///   let page = try people.findPage(query)
  ///   if page.documents.isEmpty { break }
  ///   query.bookmark = page.bookmark
  /// } while true
  /// ```
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func findPage(_ query: FindQuery) throws -> FindResult {
    var documents: [Document] = []
    let (name, database) = (self.name, self.database)
    let summary = try database.query { db in
      try DocumentCollection.find(query, collection: name, in: database, db: db, summary: true) {
        documents.append($0)
      }
    }
    return FindResult(documents: documents, summary: summary)
  }

  /// - Parameters:
  ///   - freshStatement: run the query with a statement of its own rather than the
  ///     connection's cached one, because `body` may run the same query on the same
  ///     connection, which would reset a shared statement in the middle of the stream.
  ///   - summary: compute the bookmark and statistics (a read of the last document):
  ///     only callers that return them ask.
  @discardableResult
  static func find(
    _ query: FindQuery, collection name: String, in database: Database, db: SQLConnection,
    freshStatement: Bool = false, summary wantsSummary: Bool = false,
    _ body: (Document) throws -> Void
  ) throws -> FindSummary {
    if query.dialect == .couchDB {
      // (Its summary is always made: CouchDB's warnings need what the page read.)
      return try findCouchDB(
        query, collection: name, in: database, db: db, freshStatement: freshStatement, body)
    }
    let started = DispatchTime.now().uptimeNanoseconds
    let query = try query.continuingFromBookmark()
    var summary = FindSummary(bookmark: query.bookmark ?? FindBookmark.none)
    guard let cid = try database.collectionID(db, name) else {
      if let forced = query.useIndex {
        guard query.allowFallback else {
          throw SetteeError(.noUsableIndex, QueryPlanner.unknownIndexMessage(forced))
        }
        summary.warning = QueryPlanner.unusedIndexWarning(forced)
      }
      if query.executionStats { summary.executionStats = ExecutionStats() }
      return summary
    }
    try DocumentReader.namingDamagedBodies(db, cid: cid) {
      var returned = 0
      var last: Document?
      let plan = try stream(
        query, cid: cid, in: database, db: db, freshStatement: freshStatement
      ) { document in
        returned += 1
        if wantsSummary { last = document }
        try body(document)
      }
      summary.warning = plan.warning
      guard wantsSummary else { return }
      if let last {
        summary.bookmark = try bookmark(
          after: last, returned: returned, query, cid: cid, db: db)
      }
      if query.executionStats {
        let examined = try candidates(plan, query, db: db)
        summary.executionStats = ExecutionStats(
          totalKeysExamined: plan.indexes.isEmpty ? 0 : examined,
          totalDocsExamined: plan.covering ? 0 : examined, resultsReturned: returned,
          executionTimeMs: Double(DispatchTime.now().uptimeNanoseconds - started) / 1e6)
      }
    }
    return summary
  }

  /// Runs a query of the default dialect over an existing collection, handing `body` each
  /// result with its attachments (and, when the query asks, its conflicts); returns the
  /// plan it ran.
  static func stream(
    _ query: FindQuery, cid: Int64, in database: Database, db: SQLConnection,
    freshStatement: Bool, state: CollectionState? = nil, _ body: (Document) throws -> Void
  ) throws -> QueryPlan {
    let (plan, statement) = try prepare(
      query, cid: cid, catalog: database.indexCatalog, db: db, freshStatement: freshStatement,
      cache: database.planCache, state: state)
    let conflicted = query.conflicts ? try conflictedIDs(db, cid: cid) : []
    // Whole documents show their attachments (as stubs), as CouchDB's `_find` does; a
    // projection shows them only when `fields` names `_attachments`.
    let attachments =
      query.fields?.contains { $0.components.first == "_attachments" } ?? true
      ? try ListedAttachments(db, cid: cid) : nil
    try run(plan, statement, query: query, db: db) { document in
      var document = document
      try attachments?.fill(db, &document)
      guard conflicted.contains(document.id) else { return try body(document) }
      document.conflicts = try DocumentReader.conflicts(db, cid: cid, id: document.id)
      try body(document)
    }
    return plan
  }

  /// The ids of the collection's conflicted documents, from their partial index.
  static func conflictedIDs(_ db: SQLConnection, cid: Int64) throws -> Set<String> {
    Set(
      try String.fetchAll(
        db.cachedStatement(sql: "SELECT id FROM documents WHERE cid = ? AND conflicts > 0"),
        arguments: [cid]))
  }

  /// The bookmark after a page whose last result is `last`: its sort values, or, for
  /// relevance order, how many results came before. A projected result may lack its sort
  /// fields: the whole document is read again then.
  static func bookmark(
    after last: Document, returned: Int, _ query: FindQuery, cid: Int64, db: SQLConnection
  ) throws -> String {
    if query.sort.contains(where: \.isRelevance) {
      let (next, overflow) = query.skip.addingReportingOverflow(returned)
      return FindBookmark.skipped(overflow ? Int.max : next).token(sort: query.sort)
    }
    let lastID = last.id
    let document =
      query.fields == nil || query.sort.isEmpty
      ? last : try DocumentReader.document(db, cid: cid, id: lastID)
    let json = JSON.object(document?.json ?? ["_id": .string(lastID)])
    return FindBookmark.after(keys: query.sort.map { Matcher.sortKey(json, $0) }, id: lastID)
      .token(sort: query.sort)
  }

  /// How many index entries or documents the plan reads before its filter: the same
  /// access with no selector, sort or limit.
  static func candidates(_ plan: QueryPlan, _ query: FindQuery, db: SQLConnection) throws -> Int {
    var every = QueryPlanner.everyCandidate(query)
    every.fields = nil
    var choice = plan.choice
    choice.orderedBy = nil
    let sql =
      SQLFragment("SELECT count(*) FROM (")
      + (try QueryPlanner.sql(for: choice, query: every, collectionID: plan.collectionID))
      + SQLFragment(")")
    return try Int.fetchOne(db, sql: sql.text, arguments: sql.statementArguments) ?? 0
  }

  /// Runs a selector given as JSON, the seed's `find(_:skip:limit:fields:sort:)`.
  ///
  /// - Parameters:
  ///   - selector: a selector object, such as `["pet.species": "cat"]`.
  ///   - skip: how many results to leave out first.
  ///   - limit: the most results to return; `0` for all.
  ///   - fields: the fields to return (with `_id` and `_rev`); `nil` or `[]` for whole
  ///     documents.
  ///   - sort: `[["name": "asc"], ["age": "desc"]]` or plain field names.
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func find(
    _ selector: JSONObject, skip: Int = 0, limit: Int = 0, fields: [String]? = nil,
    sort: [JSON]? = nil
  ) throws -> [Document] {
    var query = FindQuery(
      selector: try SelectorParser.parse(.object(selector)), skip: skip, limit: limit)
    if let fields, !fields.isEmpty {
      query.fields = try fields.map { try FieldPath(parsing: $0, allowingDollar: true) }
    }
    if let sort { query.sort = try FindQuery.parseSort(.array(sort)) }
    return try find(query)
  }

  /// The first matching document, if any.
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func findOne(_ query: FindQuery) throws -> Document? {
    var one = query
    one.limit = 1
    return try find(one).first
  }

  /// The matching documents decoded as `type`.
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func find<T: Decodable>(_ type: T.Type, _ query: FindQuery) throws -> [T] {
    try find(query).map { try $0.decode(type) }
  }

  /// How many documents match (skip and limit do not apply).
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func count(_ query: FindQuery) throws -> Int {
    let (name, database) = (self.name, self.database)
    return try database.query { db in
      try DocumentCollection.count(query, collection: name, in: database, db: db)
    }
  }

  static func count(
    _ query: FindQuery, collection name: String, in database: Database, db: SQLConnection
  ) throws -> Int {
    if query.dialect == .couchDB {
      var all = query
      (all.skip, all.limit, all.returnsNothing, all.bookmark, all.fields) = (0, 0, false, nil, nil)
      var count = 0
      _ = try findCouchDB(all, collection: name, in: database, db: db, freshStatement: false) { _ in
        count += 1
      }
      return count
    }
    guard let cid = try database.collectionID(db, name) else { return 0 }
    return try DocumentReader.namingDamagedBodies(db, cid: cid) {
      try count(query, cid: cid, in: database, db: db)
    }
  }

  static func count(_ query: FindQuery, cid: Int64, in database: Database, db: SQLConnection)
    throws -> Int
  {
    var all = query
    all.sort = []
    all.skip = 0
    all.limit = 0
    all.fields = []
    // The plan a find of the same selector gets, from the plan cache when the shape was met
    // before.
    let (plan, statement) = try prepare(
      all, cid: cid, catalog: database.indexCatalog, db: db, cache: database.planCache)
    if plan.filteredInSwift {
      var count = 0
      try DocumentCollection.run(plan, statement, query: all, db: db) { _ in count += 1 }
      return count
    }
    // Without its ORDER BY by id (documents', or a covering index's entries'), SQLite folds
    // the query into the count; with it, SQLite (3.40 here) sorted every match, bodies
    // included, in a temporary B-tree first.
    let order =
      plan.coveringIndex.map { CoveringPlan.orderBy([], $0) } ?? QueryPlanner.orderBy([])
    let unordered = plan.statement.droppingSuffix(order) ?? plan.statement
    let sql = SQLFragment("SELECT count(*) FROM (") + unordered + SQLFragment(")")
    do {
      // Bound through SQLite's C API, as a find's are (GRDB's arguments cost a fifth of a
      // small count).
      return try RawStatement(db, sql).first { Int($0.int64(0)) } ?? 0
    } catch let error as DatabaseError where BeyondSQL.isSizeLimit(error) {
      // The wrapper nests one level deeper than the query itself: count its rows instead.
      var count = 0
      try DocumentCollection.run(plan, statement, query: all, db: db) { _ in count += 1 }
      return count
    }
  }

  /// The plan a query would run with: index, SQL, and why.
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func explain(_ query: FindQuery) throws -> QueryPlan {
    let name = self.name
    return try database.query { db in
      let cid = try database.collectionID(db, name) ?? -1
      // The plan of the page the bookmark asks for, as find runs it.
      return try DocumentCollection.plan(
        query.continuingFromBookmark(), cid: cid, catalog: database.indexCatalog, db: db)
    }
  }
}

extension FindQuery {
  /// The query with its ``bookmark`` decoded: results skipped, or a position to continue
  /// after.
  func continuingFromBookmark() throws -> FindQuery {
    var query = self
    switch try bookmark.flatMap({ try FindBookmark.decode($0, sort: sort) }) {
    case .skipped(let count)?:
      let (sum, overflow) = query.skip.addingReportingOverflow(count)
      query.skip = overflow ? Int.max : sum
    case let position?: query.position = position
    case nil: break
    }
    return query
  }
}

// The async twins: the same calls without blocking the caller's thread.
extension DocumentCollection {
  /// The documents that match a query, without blocking the caller's thread.
  public func find(_ query: FindQuery) async throws -> [Document] {
    let (name, database) = (self.name, self.database)
    return try await database.query { db in
      var results: [Document] = []
      try DocumentCollection.find(query, collection: name, in: database, db: db) {
        results.append($0)
      }
      return results
    }
  }

  /// A page of results with its bookmark, without blocking the caller's thread.
  public func findPage(_ query: FindQuery) async throws -> FindResult {
    let (name, database) = (self.name, self.database)
    // A page is usually brief (an index's few rows); one that is not moves to a lane.
    return try await database.tentativeQuery { db in
      var documents: [Document] = []
      let summary = try DocumentCollection.find(
        query, collection: name, in: database, db: db, summary: true
      ) {
        documents.append($0)
      }
      return FindResult(documents: documents, summary: summary)
    }
  }

  /// The matching documents decoded as `type`, without blocking the caller's thread.
  public func find<T: Decodable & Sendable>(_ type: T.Type, _ query: FindQuery) async throws -> [T]
  {
    try await find(query).map { try $0.decode(type) }
  }

  /// How many documents match, without blocking the caller's thread.
  public func count(_ query: FindQuery) async throws -> Int {
    let (name, database) = (self.name, self.database)
    return try await database.query { db in
      try DocumentCollection.count(query, collection: name, in: database, db: db)
    }
  }

  /// The first matching document, without blocking the caller's thread.
  public func findOne(_ query: FindQuery) async throws -> Document? {
    try await database.withConnection(.reading) { try self.findOne(query) }
  }

  /// The seed's `find(_:skip:limit:fields:sort:)`, without blocking the caller's thread.
  public func find(
    _ selector: JSONObject, skip: Int = 0, limit: Int = 0, fields: [String]? = nil,
    sort: [JSON]? = nil
  ) async throws -> [Document] {
    try await database.withConnection(.reading) {
      try self.find(selector, skip: skip, limit: limit, fields: fields, sort: sort)
    }
  }

  /// The plan a query would run with, without blocking the caller's thread.
  public func explain(_ query: FindQuery) async throws -> QueryPlan {
    try await database.withConnection(.reading) { try self.explain(query) }
  }

  /// Streams the matching documents to `body`, from one snapshot, without blocking the
  /// caller's thread (`body` runs on the reader connection's queue), and returns what CouchDB's `_find`
  /// response carries besides them, as the blocking form does.
  @discardableResult
  public func find(_ query: FindQuery, _ body: @escaping @Sendable (Document) throws -> Void)
    async throws -> FindSummary
  {
    try await database.withConnection(.reading) { try self.find(query, body) }
  }
}
