import Foundation
import GRDB
import SetteeCore

/// A find in CouchDB 3.5's dialect (``QueryDialect/couchDB``), run as CouchDB runs it, on
/// Settee's tables.
///
/// CouchDB plans with its rules (``MangoPlan``: the index it would read, or `_all_docs`),
/// reads that index's range and keeps what its matcher accepts, in the index's order. Here
/// the SQL path reads a superset of the matches (``MangoSelector/candidates``, with Settee's
/// own indexes and plan), ``MangoMatcher`` keeps CouchDB's matches, and they come in the
/// order of the index CouchDB chose: by id as they stream when that is its order
/// (`_all_docs`, or every column held to one value), else sorted by the index's key in
/// CouchDB's collation, then id.
extension DocumentCollection {
  /// Stops reading candidates once a page is full.
  private struct PageFull: Error {}

  /// A document in the index CouchDB reads, waiting for its place in the index's order:
  /// its key there, and the document when it matches.
  private struct Placed {
    var id: String
    var key: [JSON]
    var match: Document?
  }

  static func findCouchDB(
    _ query: FindQuery, collection name: String, in database: Database, db: SQLConnection,
    freshStatement: Bool, _ body: (Document) throws -> Void
  ) throws -> FindSummary {
    let started = DispatchTime.now().uptimeNanoseconds
    let selector = try query.mangoSelector()
    let position = try query.bookmark.flatMap { try CouchDBBookmark(token: $0) }
    let cid = try database.collectionID(db, name)
    // The collection's indexes, read once for CouchDB's plan and Settee's.
    let state = try cid.map { try database.indexCatalog.state(db, cid: $0) }
    let plan = try couchDBPlan(query, selector, indexes: state?.indexes ?? [])
    var summary = FindSummary(bookmark: query.bookmark ?? FindBookmark.none)
    if plan.isEmpty {
      // CouchDB reads nothing, and says nothing more.
      summary.showsBookmark = false
      return summary
    }
    let index = plan.index
    let read = candidateQuery(plan, selector, query, after: position)
    let limit = query.returnsNothing ? 0 : query.limit > 0 ? query.limit : Int.max
    var skip = query.skip
    var returned = 0
    var examined = 0
    var last: CouchDBBookmark?
    let fields = query.fields?.map(\.components)
    func emit(_ document: Document, key: [JSON]) throws {
      last = CouchDBBookmark(key: key, id: document.id)
      returned += 1
      guard let fields else { return try body(document) }
      var projected = document
      let extracted = MangoMatcher.extract(.object(document.json), fields: fields)
      projected.projection = extracted
      projected.body = JSONObject(
        extracted.filter { $0.key != "_id" && $0.key != "_rev" }.map { ($0.key, $0.value) })
      try body(projected)
    }
    var placed: [Placed] = []
    if let cid, limit > 0 || !plan.ordersByID {
      do {
        try DocumentReader.namingDamagedBodies(db, cid: cid) {
          _ = try stream(
            read, cid: cid, in: database, db: db, freshStatement: freshStatement, state: state
          ) { document in
            let json = JSON.object(document.json)
            guard let key = try index.key(json) else { return }
            let matches = try MangoMatcher.matches(selector, json)
            guard plan.ordersByID else {
              placed.append(Placed(id: document.id, key: key, match: matches ? document : nil))
              return
            }
            examined += 1
            guard matches else { return }
            if skip > 0 {
              skip -= 1
              return
            }
            try emit(document, key: key)
            if returned >= limit { throw PageFull() }
          }
        }
      } catch is PageFull {}
    }
    if plan.ordersByID, index.isAllDocs, let cid {
      // CouchDB reads `_all_docs` document by document: what it examined is every id from
      // the page's start to where the page filled.
      examined = try idsExamined(
        db, cid: cid, plan: plan, after: position?.id, through: returned >= limit ? last?.id : nil)
    }
    if !plan.ordersByID {
      var failure: (any Error)?
      placed.sort { a, b in
        do { return try plan.order(a.key, a.id, b.key, b.id) < 0 } catch {
          failure = error
          return false
        }
      }
      if let failure { throw failure }
      var start = 0
      if let position {
        start =
          try placed.firstIndex { try plan.order($0.key, $0.id, position.key, position.id) > 0 }
          ?? placed.count
      }
      for entry in placed[start...] {
        if returned >= limit { break }
        examined += 1
        guard let document = entry.match else { continue }
        if skip > 0 {
          skip -= 1
          continue
        }
        try emit(document, key: entry.key)
      }
    }

    if let last { summary.bookmark = last.token }
    var warnings: [String] = []
    if let warning = plan.useIndexWarning { warnings.append(warning) }
    if index.isAllDocs {
      warnings.append("No matching index found, create an index to optimize query time.")
    }
    let covering = MangoPlan.covers(index, fields.map { $0 + selector.fieldNames })
    let docsExamined = covering ? 0 : examined
    if Double(docsExamined) / Double(max(returned, 1)) > 10 {
      warnings.append(
        "The number of documents examined is high in proportion to the number of results returned. Consider adding a more specific index to improve this."
      )
    }
    if !warnings.isEmpty { summary.warning = warnings.joined(separator: "\n") }
    if query.executionStats {
      summary.executionStats = ExecutionStats(
        totalKeysExamined: examined, totalDocsExamined: docsExamined,
        resultsReturned: returned,
        executionTimeMs: Double(DispatchTime.now().uptimeNanoseconds - started) / 1e6)
    }
    return summary
  }

  /// CouchDB's plan of a query (``MangoPlan``), over the collection's JSON indexes.
  static func couchDBPlan(
    _ query: FindQuery, _ selector: MangoSelector, indexes: [StoredIndex],
    explaining: Bool = false
  ) throws -> MangoPlan {
    try MangoPlan.plan(
      selector, indexes: indexes.compactMap(\.mango),
      sort: query.sort.map { (field: $0.path.components, descending: $0.descending) },
      useIndex: query.useIndexParts, allowFallback: query.allowFallback, explaining: explaining)
  }

  /// The read of the default dialect that finds every match of a CouchDB-dialect query
  /// (and others): the selector's candidates, in the index CouchDB reads (every column
  /// there, its partial filter), after the bookmark when the order is by id.
  static func candidateQuery(
    _ plan: MangoPlan, _ selector: MangoSelector, _ query: FindQuery,
    after position: CouchDBBookmark?
  ) -> FindQuery {
    let index = plan.index
    var candidates = [selector.candidates]
    // Only documents with every column are in the index (a column the selector requires
    // needs no test of its own).
    for column in index.columns where !index.isAllDocs && !MangoPlan.requires(selector, [column]) {
      candidates.append(.condition(FieldPath(components: column), .exists))
    }
    if let filter = index.partialFilter { candidates.append(filter.candidates) }
    if plan.ordersByID, let position {
      let after: Condition =
        plan.descending ? .lessThan(.string(position.id)) : .greaterThan(.string(position.id))
      candidates.append(.condition(FieldPath(components: ["_id"]), after))
    }
    let byID = FieldPath(components: ["_id"])
    var read = FindQuery(
      selector: .conjunction(candidates),
      sort: plan.ordersByID && plan.descending ? [.init(byID, descending: true)] : [])
    read.conflicts = query.conflicts
    return read
  }

  /// How a query in CouchDB's dialect runs: CouchDB's plan (what its `_explain` shows),
  /// and Settee's plan of the read that finds the candidates.
  package func couchDBExplanation(_ query: FindQuery) async throws -> (
    plan: MangoPlan, read: QueryPlan
  ) {
    let (name, database) = (self.name, self.database)
    return try await database.query { db in
      let selector = try query.mangoSelector()
      let cid = try database.collectionID(db, name)
      let indexes = try cid.map { try database.indexCatalog.indexes(db, cid: $0) } ?? []
      let plan = try DocumentCollection.couchDBPlan(
        query, selector, indexes: indexes, explaining: true)
      let read = DocumentCollection.candidateQuery(plan, selector, query, after: nil)
      return (
        plan,
        try DocumentCollection.plan(read, cid: cid ?? -1, catalog: database.indexCatalog, db: db)
      )
    }
  }

  /// How many documents (design documents too) `_all_docs` holds from after `after` (or
  /// the start of the plan's range of ids) through `through` (or the end of that range),
  /// in the plan's direction.
  static func idsExamined(
    _ db: SQLConnection, cid: Int64, plan: MangoPlan, after: String?, through: String?
  ) throws -> Int {
    var sql = "SELECT count(*) FROM documents WHERE cid = ? AND deleted = 0"
    var arguments: [any DatabaseValueConvertible] = [cid]
    func bound(_ comparison: String, _ id: String) {
      sql += " AND id \(comparison) ?"
      arguments.append(id)
    }
    let (forward, backward) = plan.descending ? ("<", ">=") : (">", "<=")
    if let after { bound(forward, after) }
    if let through { bound(backward, through) }
    if let range = plan.ranges.first {
      if case .value(.string(let low)) = range.low {
        bound(range.lowOperator == .gt ? ">" : ">=", low)
      }
      if case .value(.string(let high)) = range.high {
        bound(range.highOperator == .lt ? "<" : "<=", high)
      }
    }
    return try Int.fetchOne(db, sql: sql, arguments: StatementArguments(arguments)!) ?? 0
  }

}
