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
      let (plan, statement) = try prepare(
        query, cid: cid, catalog: database.indexCatalog, db: db, freshStatement: freshStatement,
        cache: database.planCache)
      var returned = 0
      var last: Document?
      try run(plan, statement, query: query, db: db) { document in
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
    let (name, database) = (self.name, self.database)
    return try database.query { db in
      try DocumentCollection.count(query, collection: name, in: database, db: db)
    }
  }

  static func count(
    _ query: FindQuery, collection name: String, in database: Database, db: SQLConnection
  ) throws -> Int {
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
  public func explain(_ query: FindQuery) throws -> QueryPlan {
    let name = self.name
    return try database.query { db in
      let cid = try database.collectionID(db, name) ?? -1
      // The plan of the page the bookmark asks for, as find runs it.
      return try DocumentCollection.plan(
        query.continuingFromBookmark(), cid: cid, catalog: database.indexCatalog, db: db)
    }
  }

  static func plan(_ query: FindQuery, cid: Int64, catalog: IndexCatalog, db: SQLConnection) throws
    -> QueryPlan
  {
    try prepare(query, cid: cid, catalog: catalog, db: db).plan
  }

  /// The plan and its prepared statement: from the connection's statement cache, or one of
  /// its own with `freshStatement` (see ``find(_:collection:in:db:freshStatement:_:)``).
  ///
  /// With `cache`, a query shaped like earlier ones takes its plan from there (see
  /// ``PlanCache``).
  static func prepare(
    _ query: FindQuery, cid: Int64, catalog: IndexCatalog, db: SQLConnection,
    freshStatement: Bool = false, cache: PlanCache? = nil
  ) throws -> (plan: QueryPlan, statement: Statement) {
    func statement(_ sql: String) throws -> Statement {
      freshStatement ? try db.makeStatement(sql: sql) : try db.cachedStatement(sql: sql)
    }
    guard query.skip >= 0, query.limit >= 0 else {
      // FindQuery's memberwise initializer takes any integers; JSON and Swift predicates
      // are checked when parsed.
      throw SetteeError(
        .invalidQuery,
        "skip and limit must be 0 or more, not \(query.skip) and \(query.limit)")
    }
    let plan: QueryPlan
    // A shape met for the first time: its entry, kept once the plan's statement prepares.
    var newEntry: (key: PlanCache.Key, entry: PlanCache.Entry)?
    do {
      let state = try catalog.state(db, cid: cid)
      var cached: (key: PlanCache.Key, shape: PlanCache.Shape, entry: PlanCache.Entry?)?
      if let cache, let version = state.version, let shape = PlanCache.shape(query) {
        let key = PlanCache.Key(
          cid: cid, catalogVersion: version, documentsHoldNUL: state.documentsHoldNUL,
          shape: shape.key.bytes)
        let entry = cache.entry(key)
        if case .template(let template, let checks)? = entry, checks >= PlanCache.verifiedUses {
          return (template.plan(shape.slots), try statement(template.text))
        }
        cached = (key, shape, entry)
      }
      var probed = false
      plan = try QueryPlanner.plan(
        query, collectionID: cid, indexes: state.indexes, documentsHoldNUL: state.documentsHoldNUL
      ) { rids in
        probed = true
        let probe =
          SQLFragment("SELECT count(*) FROM (") + rids + SQLFragment(" LIMIT ")
          + .integer(QueryPlanner.probeCap) + SQLFragment(")")
        return try RawStatement(db, probe).first { Int($0.int64(0)) } ?? 0
      }
      if let (key, shape, entry) = cached, let cache {
        switch entry {
        case .template(let template, _)?:
          let matched = template.plan(shape.slots).statement.isIdentical(to: plan.statement)
          cache.checked(key, matched: matched)
        case .uncacheable?: break
        case nil:
          newEntry = (key, probed ? .uncacheable : template(query, shape, plan, state, cid: cid))
        }
      }
    } catch let reason as BeyondSQL {
      try checkSwiftFilterable(query, reason)
      let fallback = try QueryPlanner.swiftFilteredScan(query, collectionID: cid, reason: reason)
      return (fallback, try statement(fallback.statement.text))
    }
    do {
      let prepared = try statement(plan.statement.text)
      if let cache, let (key, entry) = newEntry { cache.store(entry, key) }
      return (plan, prepared)
    } catch let error as DatabaseError where BeyondSQL.isSizeLimit(error) {
      let reason = BeyondSQL.sqliteLimit(error.message ?? "\(error.resultCode)")
      try checkSwiftFilterable(query, reason)
      // The same index access, with the selector checked in Swift; when the access itself
      // is too large for SQLite (a union of thousands of branches), a scan.
      let fallback = QueryPlanner.swiftFiltered(
        plan, query, plan.choice, collectionID: cid, reason: reason)
      do {
        return (fallback, try statement(fallback.statement.text))
      } catch let error as DatabaseError where BeyondSQL.isSizeLimit(error) {
        let scan = try QueryPlanner.swiftFilteredScan(query, collectionID: cid, reason: reason)
        return (scan, try statement(scan.statement.text))
      }
    }
  }

  /// The cache entry for a shape first met with `query`, planned as `plan`: a template
  /// made from the query with sentinels in its slots, if it gives `plan` back with the
  /// query's own values.
  static func template(
    _ query: FindQuery, _ shape: PlanCache.Shape, _ plan: QueryPlan, _ state: CollectionState,
    cid: Int64
  ) -> PlanCache.Entry {
    struct Probed: Error {}
    let (sentinelQuery, sentinels) = PlanCache.sentinelQuery(query)
    // The sentinels must be planned without counting entries (the plan would depend on
    // the values) and without failing where the query's values did not.
    guard
      let sentinelPlan = try? QueryPlanner.plan(
        sentinelQuery, collectionID: cid, indexes: state.indexes,
        documentsHoldNUL: state.documentsHoldNUL, probe: { _ in throw Probed() })
    else { return .uncacheable }
    guard let template = PlanCache.Template(sentinelPlan: sentinelPlan, sentinels: sentinels),
      template.plan(shape.slots).statement.isIdentical(to: plan.statement)
    else { return .uncacheable }
    return .template(template, checks: 1)
  }

  /// The matcher cannot check `$text`: a selector with it must run in SQL.
  static func checkSwiftFilterable(_ query: FindQuery, _ reason: BeyondSQL) throws {
    guard query.selector.textClauseCount == 0 else {
      throw SetteeError(
        .invalidQuery,
        "the selector cannot run in SQL (\(reason.text)), and with $text it cannot be checked in Swift; simplify it"
      )
    }
  }

  static func run(
    _ plan: QueryPlan, _ statement: Statement, query: FindQuery, db: SQLConnection,
    _ body: (Document) throws -> Void
  ) throws {
    if let index = plan.coveringIndex {
      let rows = try Row.fetchCursor(statement, arguments: plan.statement.statementArguments)
      while let row = try rows.next() { try body(try CoveringPlan.document(row, index, query)) }
      return
    }
    // Rows are read through SQLite's C API: GRDB's generic arguments and row decoding cost
    // as much as a small indexed query (as for views and `where` queries). The plan's SQL
    // is never run through GRDB's fetch methods (see ``RawStatement``).
    let raw = RawStatement(db, statement: statement, arguments: plan.statement.arguments)
    if plan.filteredInSwift {
      // Only the matching documents are kept (for the sort), not every candidate.
      var matching: [Document] = []
      try raw.forEach { row in
        let document = try document(row)
        if try Matcher.matches(query.selector, .object(document.json)) {
          matching.append(document)
        }
        return true
      }
      var rest = query
      rest.selector = .all
      for document in try Matcher.find(rest, in: matching) { try body(document) }
      return
    }
    try raw.forEach { row in
      var document = try document(row)
      if let fields = query.fields { document = Matcher.project(document, fields) }
      try body(document)
      return true
    }
  }

  static func document(_ row: RawStatement) throws -> Document {
    let id = row.string(0)
    return Document(
      id: id, rev: try DocumentReader.storedRevision(row.string(1), documentID: id),
      body: try DocumentReader.parseBody(row.bytes(2), documentID: id))
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
