import Foundation
import GRDB
import SetteeCore

/// Chooses how to run a ``FindQuery`` on one collection and writes its SQL.
///
/// Choosing reads statistics (``Probe``); writing the SQL from the choice is a pure
/// function (``sql(for:query:collectionID:)``), tested without a database.
enum QueryPlanner {
  /// Counts index entries for a candidate access, up to ``probeCap``.
  typealias Probe = (SQLFragment) throws -> Int

  /// Above this many entries an index is not selective; the count stops there.
  static let probeCap = 256

  /// How the documents are reached.
  enum Access: Equatable {
    /// Every document of the collection.
    case scan
    /// The documents whose entries in one index satisfy `predicates`.
    case index(StoredIndexAccess)
    /// The union of several index accesses (an `$or`).
    case union([StoredIndexAccess])
    /// The documents a full-text search finds (a top-level `$text` clause).
    case text(String)
  }

  /// One index and the predicates on its key columns.
  struct StoredIndexAccess: Equatable {
    var name: String
    var table: SQLFragment
    var predicates: [SQLFragment]
    /// How many values an equality (`$eq`, `$in`) on the first field names; nil for ranges.
    var leadingValues: Int? = nil
    /// Conjuncts of the selector that the predicates decide exactly, so the documents the
    /// index yields need not be checked for them again.
    var exactConjuncts: [Selector] = []
    /// Whether a document may have several entries (so reads need DISTINCT).
    var multiEntry = true

    var rids: SQLFragment { rids(distinct: false) }

    func rids(distinct: Bool) -> SQLFragment {
      (distinct ? SQLFragment("SELECT DISTINCT x.rid FROM ") : SQLFragment("SELECT x.rid FROM "))
        + table
        + SQLFragment(" x WHERE ") + .and(predicates)
    }
  }

  /// The decision `sql(for:…)` turns into SQL.
  struct Choice: Equatable {
    var access: Access
    /// The collection's TEXT index, if it has one, and its name.
    var text: TextIndex.Query?
    var textIndexName: String?
    /// The `$or` conjunct a union decides exactly (every branch decided by its index), so
    /// the documents it yields need not be checked against it again.
    var decidedByUnion: [Selector] = []
    /// An index (with no multi-entry documents) whose key order is the sort order.
    var orderedBy: StoredIndexAccess?
    var descending = false
    var sortFieldCount = 0
    /// Whether a document of the collection may hold U+0000 in a string, so the SQL sends
    /// such documents to the matcher (see ``SelectorCompiler/nulSafe(_:_:_:)``).
    var nulSafe = true
  }

  /// Plans a query: each strategy below is tried in turn, and the first that decides
  /// gives the plan (``Planning`` holds what they share).
  ///
  /// 1. ``textSearch(_:)``: a top-level `$text` clause drives the query.
  /// 2. ``forcedIndex(_:)``: `use_index` names the index.
  /// 3. ``weighIndexes(_:)``: each JSON index whose first field the selector narrows is
  ///    weighed by counting its entries (unless it is alone, or gives the sort order).
  /// 4. ``orUnion(_:)``: an `$or` whose every branch an index narrows, as a union.
  /// 5. ``covering(_:best:)``: an index that holds everything the query needs.
  /// 6. ``decide(_:_:union:)``: the fewest entries, the sort order, or a scan.
  ///
  /// - Parameter documentsHoldNUL: whether a document of the collection may hold U+0000
  ///   in a string (``CollectionState``); `true` is always correct, `false` saves a byte
  ///   search of each body.
  static func plan(
    _ query: FindQuery, collectionID: Int64, indexes: [StoredIndex],
    documentsHoldNUL: Bool = true, probe: Probe
  ) throws -> QueryPlan {
    // The probe is only used while planning.
    try withoutActuallyEscaping(probe) { probe in
      // An index of no fields (CouchDB's) has no entries to read: CouchDB's dialect plans
      // with it, Settee's planner does not.
      var planning = try Planning(
        query, collectionID: collectionID, indexes: indexes.filter(\.hasEntries),
        documentsHoldNUL: documentsHoldNUL, probe: probe)
      if let plan = try textSearch(planning) { return plan }
      if let plan = try forcedIndex(planning) { return plan }
      let weighed = try weighIndexes(&planning)
      let union = try orUnion(planning)
      if let plan = try covering(planning, best: weighed.best) { return plan }
      return try decide(planning, weighed, union: union)
    }
  }

  static func finish(
    _ query: FindQuery, _ collectionID: Int64, _ choice: Choice, nulSafe: Bool,
    candidates: [QueryPlan.Candidate], why: QueryPlan.Why
  ) throws -> QueryPlan {
    var choice = choice
    choice.nulSafe = nulSafe
    let statement = try sql(for: choice, query: query, collectionID: collectionID)
    let indexes: [String] =
      switch choice.access {
      // A lookup by _id reads the built-in id index, as CouchDB's `_all_docs` (no warning).
      case .scan: why == .allDocs ? [allDocsIndexName] : []
      case .index(let access): [access.name]
      case .union(let accesses): accesses.map { $0.name }
      case .text: choice.textIndexName.map { [$0] } ?? []
      }
    var plan = QueryPlan(
      indexes: indexes, sortedByIndex: choice.orderedBy != nil && !query.sort.isEmpty,
      candidates: candidates, why: why, statement: statement, choice: choice,
      collectionID: collectionID)
    if case .scan = choice.access, why != .allDocs { plan.warning = noIndexWarning }
    return plan
  }

  /// The name CouchDB gives the built-in index of document ids.
  static let allDocsIndexName = "_all_docs"

  /// The error for a `use_index` that names no index of the collection.
  static func unknownIndexMessage(_ forced: String) -> String {
    "use_index names \(JSONWriter.string(.string(forced))), which is not a JSON index of this collection"
  }

  /// CouchDB's warning for a `use_index` that the query ran without.
  static func unusedIndexWarning(_ forced: String) -> String {
    "\(IndexDefinition.designDocumentID(forced)) was not used because it does not contain a valid index for this query."
  }

  /// CouchDB's warning for a query that reads every document.
  static let noIndexWarning = "No matching index found, create an index to optimize query time."

  /// The plan for a selector whose SQL SQLite cannot parse: the same documents are read
  /// (through the same index), and the matcher filters, sorts and pages them in Swift.
  static func swiftFiltered(
    _ plan: QueryPlan, _ query: FindQuery, _ choice: Choice, collectionID: Int64,
    reason: BeyondSQL
  ) -> QueryPlan {
    let unsorted = everyCandidate(query)
    var bare = choice
    bare.orderedBy = nil
    // The selector is `{}` here, which always compiles.
    let statement =
      (try? sql(for: bare, query: unsorted, collectionID: collectionID)) ?? plan.statement
    var fallback = plan
    fallback.filteredInSwift = true
    fallback.sortedByIndex = false
    fallback.why = .filteredInSwift(plan.why, because: reason.text)
    fallback.statement = statement
    return fallback
  }

  /// The query with no selector, sort, skip or limit: what a plan filtered in Swift reads
  /// (the matcher then filters, sorts and pages in Swift).
  static func everyCandidate(_ query: FindQuery) -> FindQuery {
    var unsorted = query
    unsorted.selector = .all
    unsorted.position = nil  // the matcher places the bookmark, with the sort
    unsorted.sort = []
    unsorted.skip = 0
    unsorted.limit = 0
    return unsorted
  }

  /// The plan for a selector the SQL path cannot check (``BeyondSQL``): every document of
  /// the collection is read, and the matcher filters, sorts and pages them in Swift.
  static func swiftFilteredScan(_ query: FindQuery, collectionID: Int64, reason: BeyondSQL)
    throws -> QueryPlan
  {
    let unsorted = everyCandidate(query)
    let choice = Choice(access: .scan)
    var plan = QueryPlan(
      indexes: [], sortedByIndex: false, warning: noIndexWarning, candidates: [],
      why: .filteredInSwift(.fixed("no index is read"), because: reason.text),
      statement: try sql(for: choice, query: unsorted, collectionID: collectionID),
      choice: choice, collectionID: collectionID)
    plan.filteredInSwift = true
    return plan
  }

  /// Whether every document the query can return is in the index: always, unless the
  /// index is partial, when the query's conditions must include each of its filter's
  /// (the same conditions, at the top level of the selector).
  static func answersWithin(_ index: StoredIndex, _ conjuncts: [Selector]) -> Bool {
    guard let filter = index.definition.partialFilter else { return true }
    return conjunction(filter).allSatisfy { conjuncts.contains($0) }
  }

  /// The index `use_index` names: by name, or by its design document's id (`_design/x`,
  /// or `x` for it; ``IndexDefinition/designDocumentID``).
  static func namedIndex(_ name: String, in indexes: [StoredIndex]) -> StoredIndex? {
    if let index = indexes.first(where: { $0.definition.name.utf8.elementsEqual(name.utf8) }) {
      return index
    }
    let design = IndexDefinition.designDocumentID(name)
    return indexes.first { $0.definition.designDocumentID.utf8.elementsEqual(design.utf8) }
  }

  /// `_id` equal to a string, or in a list of strings: SQLite answers it from the
  /// `documents_by_id` index, which every collection has.
  static func isIDLookup(_ selector: Selector) -> Bool {
    guard case .condition(let path, let condition) = selector, path.components == ["_id"] else {
      return false
    }
    switch condition {
    case .equal(.string): return true
    case .in(let values): return !values.isEmpty && values.allSatisfy { $0.stringValue != nil }
    default: return false
    }
  }

  /// The entries an access selects: the probe's count, or past its cap an estimate from
  /// the statistics counted when the index was built (entries per key for an equality, a
  /// third of all for a range).
  static func estimate(_ access: StoredIndexAccess, _ index: StoredIndex, counted: Int) -> Int {
    guard counted >= probeCap, index.entries > 0 else { return counted }
    if let values = access.leadingValues, index.entriesPerKey > 0 {
      return max(probeCap, Int(index.entriesPerKey) * values / max(access.predicates.count, 1))
    }
    return max(probeCap, Int(index.entries) / 3)
  }

  /// The top-level conjuncts of a selector.
  static func conjunction(_ selector: Selector) -> [Selector] {
    if case .and(let parts) = selector { return parts }
    return [selector]
  }

  /// The predicates an index can apply for the conjuncts; `nil` when none narrows its
  /// first field.
  static func access(_ index: StoredIndex, _ conjuncts: [Selector]) -> StoredIndexAccess? {
    var predicates: [SQLFragment] = []
    var leadingValues: Int?
    var exact: [Selector] = []
    for (position, field) in index.definition.fields.enumerated() {
      let onField = conjuncts.filter { conjunct in
        if case .condition(let path, _) = conjunct { path == field } else { false }
      }
      let conditions = onField.map { conjunct -> Condition in
        guard case .condition(_, let condition) = conjunct else { preconditionFailure() }
        return condition
      }
      let column = StoredIndex.entryKeyColumn(position)
      // With one entry per document (no array values), key predicates are exact: every
      // condition on the field applies to the entry, and the documents need no second look.
      if index.multiDocuments == 0, !conditions.isEmpty,
        case let exactPredicates = conditions.compactMap({ CoveringPlan.exact($0, column: column) }),
        exactPredicates.count == conditions.count
      {
        predicates += exactPredicates
        exact += onField
      } else {
        // One predicate per column: an array field has an entry per element, and two
        // conditions on the field may be met by different elements, so they cannot both be
        // required of one entry. Equality narrows best; otherwise the first condition.
        let ranked = conditions.filter { $0.isEquality } + conditions.filter { !$0.isEquality }
        if let chosen = ranked.first(where: { IndexPredicates.predicate($0, column: column) != nil }
        ) {
          predicates.append(IndexPredicates.predicate(chosen, column: column)!)
        } else if position == 0 {
          return nil
        }
      }
      if position == 0 {
        let ranked = conditions.filter { $0.isEquality }
        switch ranked.first {
        case .equal: leadingValues = 1
        case .in(let values): leadingValues = values.count
        default: break
        }
      }
    }
    return StoredIndexAccess(
      name: index.definition.name, table: index.table, predicates: predicates,
      leadingValues: leadingValues,
      exactConjuncts: exact, multiEntry: index.multiDocuments > 0)
  }

  /// The index's access for the conjuncts, or, when none narrows it, a read of all its entries
  /// (every live document has at least one).
  static func accessOrWhole(_ index: StoredIndex, _ conjuncts: [Selector]) -> StoredIndexAccess {
    access(index, conjuncts)
      ?? StoredIndexAccess(name: index.definition.name, table: index.table, predicates: [])
  }

  /// Whether the index's key order is the sort order: the sort fields are its fields, in
  /// order and all in one direction (ties then fall to `_id`, the entries' last key), and no
  /// document has several entries. Returns the
  /// direction (`true` for descending).
  static func sortOrder(_ sort: [FindQuery.SortField], _ index: StoredIndex) -> Bool? {
    guard let first = sort.first, index.multiDocuments == 0,
      sort.count == index.definition.fields.count,
      sort.allSatisfy({ $0.descending == first.descending }),
      zip(sort, index.definition.fields).allSatisfy({ $0.path == $1 })
    else { return nil }
    return first.descending
  }
}
