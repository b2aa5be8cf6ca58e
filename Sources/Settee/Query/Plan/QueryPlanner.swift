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

  /// - Parameter documentsHoldNUL: whether a document of the collection may hold U+0000
  ///   in a string (``CollectionState``); `true` is always correct, `false` saves a byte
  ///   search of each body.
  static func plan(
    _ query: FindQuery, collectionID: Int64, indexes: [StoredIndex],
    documentsHoldNUL: Bool = true, probe: Probe
  ) throws -> QueryPlan {
    if query.selector.textClauseCount > 1 {
      throw SetteeError(
        .invalidQuery, "a query may hold one $text clause, not \(query.selector.textClauseCount)")
    }
    let conjuncts = conjunction(query.selector)
    var candidates: [QueryPlan.Candidate] = []
    // A partial index holds only the documents its filter matches: it can answer a query
    // only when the query asks for no document outside it.
    let allJSONIndexes = indexes.filter { $0.definition.kind == .json }
    let jsonIndexes = allJSONIndexes.filter { answersWithin($0, conjuncts) }
    for index in allJSONIndexes where !answersWithin(index, conjuncts) {
      candidates.append(
        .init(
          index: index.definition.name, usable: false, estimatedEntries: nil,
          why: .fixed("partial index: the selector does not include its partial_filter_selector")))
    }
    var best: (access: StoredIndexAccess, entries: Int)?
    let textIndex = indexes.first { $0.definition.kind == .text }.map(TextIndex.init)
    if query.sort.contains(where: { $0.isRelevance }) {
      guard conjuncts.contains(where: { if case .text = $0 { true } else { false } }) else {
        throw SetteeError(
          .invalidQuery, "sorting by \"$relevance\" needs a $text clause at the top of the selector"
        )
      }
    }
    // A top-level $text clause drives the query: the search finds the documents, and the
    // rest of the selector filters them.
    if let textIndex,
      let search = conjuncts.lazy.compactMap({ selector -> String? in
        if case .text(let search) = selector { search } else { nil }
      }).first
    {
      var choice = Choice(access: .text(search))
      choice.text = textIndex.query
      choice.textIndexName = textIndex.stored.definition.name
      return try finish(
        query, collectionID, choice, nulSafe: documentsHoldNUL,
        candidates: [
          .init(
            index: textIndex.stored.definition.name, usable: true, estimatedEntries: nil,
            why: .fixed("answers $text"))
        ], why: .textIndex(textIndex.stored.definition.name))
    }

    if let forced = query.useIndex {
      guard let index = namedIndex(forced, in: jsonIndexes) else {
        let message =
          namedIndex(forced, in: allJSONIndexes) != nil
          ? "use_index names \(JSONWriter.string(.string(forced))), a partial index whose partial_filter_selector the query's selector does not include, so it would miss documents"
          : unknownIndexMessage(forced)
        guard query.allowFallback else { throw SetteeError(.noUsableIndex, message) }
        // CouchDB's default: answer without it, and say so.
        var unforced = query
        unforced.useIndex = nil
        var plan = try self.plan(
          unforced, collectionID: collectionID, indexes: indexes,
          documentsHoldNUL: documentsHoldNUL, probe: probe)
        plan.warning = unusedIndexWarning(forced) + (plan.warning.map { "\n\($0)" } ?? "")
        return plan
      }
      let access = accessOrWhole(index, conjuncts)
      var choice = Choice(access: .index(access))
      if let order = sortOrder(query.sort, index) {
        choice.orderedBy = access
        choice.descending = order
        choice.sortFieldCount = query.sort.count
      }
      return try finish(
        query, collectionID, choice, nulSafe: documentsHoldNUL,
        candidates: [
          .init(
            index: forced, usable: true, estimatedEntries: nil, why: .fixed("forced by use_index"))
        ], why: .fixed("use_index named it"))
    }

    // An index that already orders the sort.
    var ordered: (index: StoredIndex, descending: Bool)?
    for index in jsonIndexes {
      if let descending = sortOrder(query.sort, index) {
        ordered = (index, descending)
        break
      }
    }

    // Each index's access, built once: nil where no condition narrows its first field.
    let accesses = jsonIndexes.map { access($0, conjuncts) }
    let usable = zip(jsonIndexes, accesses).compactMap { index, access in access.map { (index, $0) }
    }
    // With one usable index, an equality on its first field and no sort, $or or other
    // covering index to weigh it against, counting its entries would cost more than it
    // tells (and a plan that counted entries is not kept in the plan cache).
    let alone =
      usable.count == 1 && usable[0].1.leadingValues != nil && query.sort.isEmpty
      && !conjuncts.contains(where: { if case .or = $0 { true } else { false } })
      && !jsonIndexes.contains(where: {
        $0.xid != usable[0].0.xid && CoveringPlan.covers($0, query)
      })
    for (index, access) in zip(jsonIndexes, accesses) {
      guard let access else {
        candidates.append(
          .init(
            index: index.definition.name, usable: false, estimatedEntries: nil,
            why: .noConditionOnFirstField(index.definition.fields[0])))
        continue
      }
      // Reading an index in sort order stops after `limit` documents, however many its
      // conditions select: no need to count them.
      if let ordered, query.limit > 0, usable.count == 1,
        ordered.index.definition.name == index.definition.name
      {
        candidates.append(
          .init(
            index: index.definition.name, usable: true, estimatedEntries: nil,
            why: .fixed("gives the sort order, and reading in order stops after the limit")))
        continue
      }
      if alone {
        candidates.append(
          .init(
            index: index.definition.name, usable: true, estimatedEntries: nil,
            why: .fixed("the only index that narrows the selector, by equality on its first field"))
        )
        best = (access, 0)
        continue
      }
      let entries = estimate(access, index, counted: try probe(access.rids))
      candidates.append(
        .init(
          index: index.definition.name, usable: true, estimatedEntries: entries,
          why: .selects(entries: entries, estimated: entries >= probeCap)))
      if best == nil || entries < best!.entries { best = (access, entries) }
    }

    // An $or whose every branch an index narrows becomes a union of index reads.
    var union: (accesses: [StoredIndexAccess], entries: Int, decided: [Selector])?
    for conjunct in conjuncts {
      guard case .or(let branches) = conjunct else { continue }
      var accesses: [StoredIndexAccess] = []
      var entries = 0
      var exact = true
      for branch in branches {
        let options = jsonIndexes.compactMap { index in
          access(index, conjunction(branch)).map { (index, $0) }
        }
        var bestBranch: (StoredIndexAccess, Int)?
        if options.count == 1, options[0].1.leadingValues != nil {
          // A lone equality index for the branch: its statistics are estimate enough.
          let (index, option) = options[0]
          bestBranch = (option, estimate(option, index, counted: probeCap))
        }
        for (index, option) in options where bestBranch == nil || options.count > 1 {
          let count = estimate(option, index, counted: try probe(option.rids))
          if bestBranch == nil || count < bestBranch!.1 { bestBranch = (option, count) }
        }
        guard let chosen = bestBranch else {
          accesses = []
          break
        }
        accesses.append(chosen.0)
        entries += chosen.1
        exact = exact && conjunction(branch).allSatisfy { chosen.0.exactConjuncts.contains($0) }
      }
      if !accesses.isEmpty, union == nil || entries < union!.entries {
        union = (accesses, entries, exact ? [conjunct] : [])
      }
    }

    // An index that holds everything the query needs answers it without documents, unless
    // another index is far more selective.
    for index in jsonIndexes where CoveringPlan.covers(index, query) {
      // Its entries are counted only to weigh it against another index.
      if let best, best.access.name != index.definition.name {
        var entries = Int.max
        if let access = access(index, conjuncts) { entries = try probe(access.rids) }
        if best.entries * 4 < entries { continue }
      }
      guard let statement = CoveringPlan.sql(index, query) else { continue }
      var plan = QueryPlan(
        indexes: [index.definition.name], sortedByIndex: !query.sort.isEmpty,
        candidates: candidates,
        why: .covering(index.definition.name),
        statement: statement, choice: Choice(access: .scan), collectionID: collectionID)
      plan.coveringIndex = index
      return plan
    }

    var choice = Choice(access: .scan)
    if let textIndex {
      choice.text = textIndex.query
    }
    var reason: QueryPlan.Why = .fixed(
      jsonIndexes.isEmpty
        ? "the collection has no JSON index: it is scanned"
        : "no index narrows the selector: the collection is scanned")
    if conjuncts.contains(where: isIDLookup) {
      reason = .allDocs
    }
    let selective = min(best?.entries ?? Int.max, union?.entries ?? Int.max)
    if selective < probeCap || (ordered == nil && selective < Int.max) {
      if let union, union.entries < (best?.entries ?? Int.max) {
        choice.access = .union(union.accesses)
        choice.decidedByUnion = union.decided
        reason = .union(entries: union.entries)
      } else if let best {
        choice.access = .index(best.access)
        // A lone index's entries were not counted: its count of 0 means nothing.
        reason = alone ? .only(best.access.name) : .fewest(best.access.name, entries: best.entries)
      }
    } else if let ordered {
      // The access built above, or a read of the whole index.
      let built = zip(jsonIndexes, accesses).first { $0.0.xid == ordered.index.xid }?.1
      let access =
        built.flatMap { $0 }
        ?? StoredIndexAccess(
          name: ordered.index.definition.name, table: ordered.index.table, predicates: [])
      choice.access = .index(access)
      choice.orderedBy = access
      choice.descending = ordered.descending
      choice.sortFieldCount = query.sort.count
      reason = .sortOrder(access.name)
    } else if let best {
      choice.access = .index(best.access)
      reason = .narrowsLittle(best.access.name)
    }
    if case .index(let access) = choice.access, choice.orderedBy == nil,
      let ordered, ordered.index.definition.name == access.name
    {
      choice.orderedBy = access
      choice.descending = ordered.descending
      choice.sortFieldCount = query.sort.count
    }
    return try finish(
      query, collectionID, choice, nulSafe: documentsHoldNUL, candidates: candidates, why: reason)
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

  /// The SQL for a choice: a pure function.
  /// The condition that leaves design documents out, made once.
  private static let notDesignDocument = SQLFragment.notDesignID(SQLFragment("d.id"))

  static func sql(for choice: Choice, query: FindQuery, collectionID: Int64) throws -> SQLFragment {
    var selector = query.selector
    var textSource: SQLFragment?
    if case .text(let search) = choice.access, let text = choice.text {
      // The search drives; the other conjuncts filter.
      let table = text.table
      let rank =
        query.sort.first?.isRelevance == true
        ? SQLFragment(", settee_rank(matchinfo(") + table + SQLFragment(", 'pcnalx')) AS rank")
        : SQLFragment(", 0 AS rank")
      textSource =
        SQLFragment("SELECT docid AS rid") + rank + SQLFragment(" FROM ") + table
        + SQLFragment(" WHERE ")
        + table + SQLFragment(" MATCH ") + .value(try text.match(search))
      selector = Selector.conjunction(
        conjunction(selector).filter { if case .text = $0 { false } else { true } })
    }
    // What one index decides exactly is not checked again on the documents.
    let decided: [Selector]
    switch choice.access {
    case .index(let access): decided = access.exactConjuncts
    case .union: decided = choice.decidedByUnion
    default: decided = choice.orderedBy?.exactConjuncts ?? []
    }
    if !decided.isEmpty {
      selector = Selector.conjunction(conjunction(selector).filter { !decided.contains($0) })
    }
    var filter =
      notDesignDocument + SQLFragment(" AND ")
      + (try SelectorCompiler.compile(selector, textIndex: choice.text, nulSafe: choice.nulSafe))
    if let position = query.position {
      filter += SQLFragment(" AND ") + after(position, sort: query.sort)
    }
    if let textSource {
      let relevanceFirst = query.sort.first?.isRelevance == true
      var order = orderBy(query.sort.filter { !$0.isRelevance })
      if relevanceFirst {
        order =
          SQLFragment(" ORDER BY r.rank")
          + (query.sort[0].descending ? SQLFragment(" DESC, ") : SQLFragment(", "))
          + order.dropFirst(" ORDER BY ")
      }
      return SQLFragment("SELECT d.id, d.rev, d.body FROM (") + textSource
        + SQLFragment(") AS r CROSS JOIN documents d ON d.rid = r.rid WHERE d.deleted = 0 AND ")
        + filter + order
        + limit(query)
    }
    var statement: SQLFragment
    if let ordered = choice.orderedBy {
      statement =
        SQLFragment("SELECT d.id, d.rev, d.body FROM ") + ordered.table
        + SQLFragment(" x CROSS JOIN documents d ON d.rid = x.rid WHERE ")
        + .and(ordered.predicates)
        + SQLFragment(" AND d.deleted = 0 AND ") + filter
      let direction = choice.descending ? SQLFragment(" DESC") : SQLFragment("")
      var keys = (0..<choice.sortFieldCount).map { StoredIndex.entryKeyColumn($0) + direction }
      keys.append(SQLFragment("x.id") + direction)
      statement += SQLFragment(" ORDER BY ") + .joined(keys, separator: ", ")
    } else {
      // Through an index, the entries come first and documents are looked up by rowid
      // (CROSS JOIN fixes that order: left alone, SQLite may prefer walking the id index
      // for the ORDER BY and testing every document against the entries).
      let rids: SQLFragment?
      switch choice.access {
      case .scan: rids = nil
      case .index(let access): rids = access.rids(distinct: access.multiEntry)
      case .union(let accesses): rids = .joined(accesses.map { $0.rids }, separator: " UNION ")
      case .text: rids = nil  // handled above
      }
      if let rids {
        statement =
          SQLFragment("SELECT d.id, d.rev, d.body FROM (") + rids
          + SQLFragment(") AS r CROSS JOIN documents d ON d.rid = r.rid WHERE d.deleted = 0")
      } else {
        statement =
          SQLFragment("SELECT d.id, d.rev, d.body FROM ")
          + .liveDocuments(cid: collectionID)
      }
      statement += SQLFragment(" AND ") + filter + orderBy(query.sort)
    }
    return statement + limit(query)
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

  static func orderBy(_ sort: [FindQuery.SortField]) -> SQLFragment {
    let sort = sort.filter { !$0.isRelevance }
    var keys: [SQLFragment] = sort.map { field in
      let path = JSONWriter.string(.array(field.path.components.map { .string($0) }))
      return SQLFragment("settee_sort_key(d.body, d.id, d.rev, ") + .value(path) + SQLFragment(", ")
        + .value(field.descending) + (field.descending ? SQLFragment(") DESC") : SQLFragment(")"))
    }
    keys.append(
      SQLFragment("d.id") + (sort.last?.descending == true ? SQLFragment(" DESC") : SQLFragment(""))
    )
    return SQLFragment(" ORDER BY ") + .joined(keys, separator: ", ")
  }

  /// Documents that come after a bookmark's position in the order of `sort`: each sort
  /// key in turn (as ``orderBy(_:)`` computes it; NULL for a missing field, which sorts
  /// first ascending and last descending), then the id.
  static func after(_ position: FindBookmark, sort: [FindQuery.SortField]) -> SQLFragment {
    guard case .after(let keys, let id) = position else { return SQLFragment("1") }
    let sort = sort.filter { !$0.isRelevance }
    var branches: [SQLFragment] = []
    var equal: [SQLFragment] = []
    for (field, value) in zip(sort, keys) {
      let path = JSONWriter.string(.array(field.path.components.map { .string($0) }))
      let key =
        SQLFragment("settee_sort_key(d.body, d.id, d.rev, ") + .value(path) + SQLFragment(", ")
        + .value(field.descending) + SQLFragment(")")
      let bound: SQLFragment =
        value.map { .value(Data(CollationKey.encode($0))) } ?? SQLFragment("NULL")
      let later: SQLFragment
      switch (field.descending, value) {
      case (false, nil): later = key + SQLFragment(" IS NOT NULL")
      case (false, _?): later = key + SQLFragment(" > ") + bound
      case (true, nil): later = SQLFragment("0")
      case (true, _?):
        later =
          SQLFragment("(") + key + SQLFragment(" < ") + bound + SQLFragment(" OR ") + key
          + SQLFragment(" IS NULL)")
      }
      branches.append(.and(equal + [later]))
      equal.append(key + SQLFragment(" IS ") + bound)
    }
    let idLater =
      SQLFragment("d.id")
      + (sort.last?.descending == true ? SQLFragment(" < ") : SQLFragment(" > "))
      + .value(id)
    branches.append(.and(equal + [idLater]))
    return .or(branches)
  }

  /// The statement's `LIMIT` and `OFFSET`; none for a query that takes every result: with
  /// one, SQLite sorts a small result through a temporary B-tree (for its top-N shortcut)
  /// instead of its sorter, which cost an indexed query of nine documents 2 µs of 14.
  static func limit(_ query: FindQuery) -> SQLFragment {
    if query.limit == 0 && query.skip == 0 { return SQLFragment("") }
    return SQLFragment(" LIMIT ") + .value(Int64(query.limit == 0 ? -1 : query.limit))
      + SQLFragment(" OFFSET ") + .value(Int64(query.skip))
  }
}
