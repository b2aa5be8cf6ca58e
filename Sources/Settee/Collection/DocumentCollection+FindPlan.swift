import Foundation
import GRDB
import SetteeCore

// Planning a find through the plan cache, and running its statement.
extension DocumentCollection {
  static func plan(_ query: FindQuery, cid: Int64, catalog: IndexCatalog, db: SQLConnection) throws
    -> QueryPlan
  {
    try prepare(query, cid: cid, catalog: catalog, db: db).plan
  }

  /// The plan and its prepared statement: from the connection's statement cache, or one of
  /// its own with `freshStatement` (see ``find(_:collection:in:db:freshStatement:_:)``).
  ///
  /// With `cache`, a query shaped like earlier ones takes its plan from there (see
  /// ``PlanCache``). `state` is the collection's, when the caller has read it in this
  /// transaction already.
  static func prepare(
    _ query: FindQuery, cid: Int64, catalog: IndexCatalog, db: SQLConnection,
    freshStatement: Bool = false, cache: PlanCache? = nil, state known: CollectionState? = nil
  ) throws -> (plan: QueryPlan, statement: FindStatement) {
    // A covering plan's rows are read through GRDB; every other plan's through SQLite's C
    // API (RawStatement), from statements of its own.
    func statement(for plan: QueryPlan) throws -> FindStatement {
      let sql = plan.statement.text
      if plan.coveringIndex != nil {
        return .rows(
          freshStatement ? try db.makeStatement(sql: sql) : try db.cachedStatement(sql: sql))
      }
      return .raw(
        freshStatement ? try db.uncachedRawStatement(sql: sql) : try db.rawStatement(sql: sql))
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
      let state = try known ?? catalog.state(db, cid: cid)
      var cached: (key: PlanCache.Key, shape: PlanCache.Shape, entry: PlanCache.Entry?)?
      if let cache, let version = state.version, let shape = PlanCache.shape(query) {
        let key = PlanCache.Key(
          cid: cid, catalogVersion: version, documentsHoldNUL: state.documentsHoldNUL,
          shape: shape.key.bytes)
        let entry = cache.entry(key)
        if case .template(let template, let checks)? = entry, checks >= PlanCache.verifiedUses {
          let templated = template.plan(shape.slots)
          return (templated, try statement(for: templated))
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
      return (fallback, try statement(for: fallback))
    }
    do {
      let prepared = try statement(for: plan)
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
        return (fallback, try statement(for: fallback))
      } catch let error as DatabaseError where BeyondSQL.isSizeLimit(error) {
        let scan = try QueryPlanner.swiftFilteredScan(query, collectionID: cid, reason: reason)
        return (scan, try statement(for: scan))
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
    _ plan: QueryPlan, _ prepared: FindStatement, query: FindQuery, db: SQLConnection,
    _ body: (Document) throws -> Void
  ) throws {
    let statement: RawStatement.Prepared
    switch prepared {
    case .rows(let rowStatement):
      guard let index = plan.coveringIndex else {
        throw SetteeError(.storage, "internal error: a covering statement for a plan without one")
      }
      let rows = try Row.fetchCursor(rowStatement, arguments: plan.statement.statementArguments)
      while let row = try rows.next() { try body(try CoveringPlan.document(row, index, query)) }
      return
    case .raw(let rawStatement): statement = rawStatement
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

/// A find's prepared statement: a covering plan's, read through GRDB's rows, or any
/// other plan's, read through SQLite's C API (``RawStatement``).
enum FindStatement {
  case rows(Statement)
  case raw(RawStatement.Prepared)
}
