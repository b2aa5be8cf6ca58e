import SetteeCore

// The planner's strategies, each a function of what planning shares (``Planning``),
// tried in turn by ``QueryPlanner/plan(_:collectionID:indexes:documentsHoldNUL:probe:)``.
extension QueryPlanner {
  /// What the strategies share: the query, its conjuncts, the collection's indexes split
  /// by what they can answer, and the candidates `explain` lists.
  struct Planning {
    let query: FindQuery
    let collectionID: Int64
    let indexes: [StoredIndex]
    let documentsHoldNUL: Bool
    let probe: Probe
    /// The selector's top-level conjuncts.
    let conjuncts: [Selector]
    /// Every JSON index, and those that can answer the query (a partial index holds only
    /// the documents its filter matches: it can answer only a query that asks for no
    /// document outside it).
    let allJSONIndexes: [StoredIndex]
    let jsonIndexes: [StoredIndex]
    /// The collection's TEXT index, if any.
    let textIndex: TextIndex?
    /// What `explain` lists of each index considered.
    var candidates: [QueryPlan.Candidate] = []

    init(
      _ query: FindQuery, collectionID: Int64, indexes: [StoredIndex], documentsHoldNUL: Bool,
      probe: @escaping Probe
    ) throws {
      if query.selector.textClauseCount > 1 {
        throw SetteeError(
          .invalidQuery, "a query may hold one $text clause, not \(query.selector.textClauseCount)")
      }
      (self.query, self.collectionID, self.indexes) = (query, collectionID, indexes)
      (self.documentsHoldNUL, self.probe) = (documentsHoldNUL, probe)
      let conjuncts = QueryPlanner.conjunction(query.selector)
      self.conjuncts = conjuncts
      allJSONIndexes = indexes.filter { $0.definition.kind == .json }
      jsonIndexes = allJSONIndexes.filter { QueryPlanner.answersWithin($0, conjuncts) }
      for index in allJSONIndexes where !QueryPlanner.answersWithin(index, conjuncts) {
        candidates.append(
          .init(
            index: index.definition.name, usable: false, estimatedEntries: nil,
            why: .fixed("partial index: the selector does not include its partial_filter_selector"))
        )
      }
      textIndex = indexes.first { $0.definition.kind == .text }.map(TextIndex.init)
      if query.sort.contains(where: { $0.isRelevance }) {
        guard conjuncts.contains(where: { if case .text = $0 { true } else { false } }) else {
          throw SetteeError(
            .invalidQuery,
            "sorting by \"$relevance\" needs a $text clause at the top of the selector")
        }
      }
    }

    /// The plan for a choice (``QueryPlanner/finish(_:_:_:nulSafe:candidates:why:)``).
    func finish(_ choice: Choice, candidates: [QueryPlan.Candidate]? = nil, why: QueryPlan.Why)
      throws -> QueryPlan
    {
      try QueryPlanner.finish(
        query, collectionID, choice, nulSafe: documentsHoldNUL,
        candidates: candidates ?? self.candidates, why: why)
    }
  }

  /// What ``weighIndexes(_:)`` found.
  struct Weighed {
    /// An index that already gives the sort order, and in which direction.
    var ordered: (index: StoredIndex, descending: Bool)?
    /// Each usable JSON index's access, in the order of ``Planning/jsonIndexes`` (nil where
    /// no condition narrows its first field).
    var accesses: [StoredIndexAccess?]
    /// The index with the fewest entries, and how many.
    var best: (access: StoredIndexAccess, entries: Int)?
    /// The best index is the only one that narrows the selector, by equality, and was not
    /// counted.
    var alone: Bool
  }

  /// A top-level `$text` clause drives the query: the search finds the documents, and the
  /// rest of the selector filters them.
  static func textSearch(_ planning: Planning) throws -> QueryPlan? {
    guard let textIndex = planning.textIndex,
      let search = planning.conjuncts.lazy.compactMap({ selector -> String? in
        if case .text(let search) = selector { search } else { nil }
      }).first
    else { return nil }
    var choice = Choice(access: .text(search))
    choice.text = textIndex.query
    choice.textIndexName = textIndex.stored.definition.name
    return try planning.finish(
      choice,
      candidates: [
        .init(
          index: textIndex.stored.definition.name, usable: true, estimatedEntries: nil,
          why: .fixed("answers $text"))
      ], why: .textIndex(textIndex.stored.definition.name))
  }

  /// `use_index` names the index: it is read (in sort order when it gives it), or, when
  /// it cannot answer and the query allows it, the query is planned without it and warns.
  static func forcedIndex(_ planning: Planning) throws -> QueryPlan? {
    let query = planning.query
    guard let forced = query.useIndex else { return nil }
    guard let index = namedIndex(forced, in: planning.jsonIndexes) else {
      let message =
        namedIndex(forced, in: planning.allJSONIndexes) != nil
        ? "use_index names \(JSONWriter.string(.string(forced))), a partial index whose partial_filter_selector the query's selector does not include, so it would miss documents"
        : unknownIndexMessage(forced)
      guard query.allowFallback else { throw SetteeError(.noUsableIndex, message) }
      // CouchDB's default: answer without it, and say so.
      var unforced = query
      unforced.useIndex = nil
      var plan = try self.plan(
        unforced, collectionID: planning.collectionID, indexes: planning.indexes,
        documentsHoldNUL: planning.documentsHoldNUL, probe: planning.probe)
      plan.warning = unusedIndexWarning(forced) + (plan.warning.map { "\n\($0)" } ?? "")
      return plan
    }
    let access = accessOrWhole(index, planning.conjuncts)
    var choice = Choice(access: .index(access))
    if let order = sortOrder(query.sort, index) {
      choice.orderedBy = access
      choice.descending = order
      choice.sortFieldCount = query.sort.count
    }
    return try planning.finish(
      choice,
      candidates: [
        .init(
          index: forced, usable: true, estimatedEntries: nil, why: .fixed("forced by use_index"))
      ], why: .fixed("use_index named it"))
  }

  /// Weighs each JSON index whose first field the selector narrows by counting its
  /// entries (up to ``probeCap``), except one that gives the sort order under a limit
  /// (reading in order stops after the limit) and a lone equality index (counting would
  /// cost more than it tells, and a plan that counted entries is not kept in the plan
  /// cache). Adds each to the candidates.
  static func weighIndexes(_ planning: inout Planning) throws -> Weighed {
    let (query, conjuncts, jsonIndexes) = (planning.query, planning.conjuncts, planning.jsonIndexes)
    var ordered: (index: StoredIndex, descending: Bool)?
    for index in jsonIndexes {
      if let descending = sortOrder(query.sort, index) {
        ordered = (index, descending)
        break
      }
    }
    let accesses = jsonIndexes.map { access($0, conjuncts) }
    let usable = zip(jsonIndexes, accesses).compactMap { index, access in access.map { (index, $0) }
    }
    let alone =
      usable.count == 1 && usable[0].1.leadingValues != nil && query.sort.isEmpty
      && !conjuncts.contains(where: { if case .or = $0 { true } else { false } })
      && !jsonIndexes.contains(where: {
        $0.xid != usable[0].0.xid && CoveringPlan.covers($0, query)
      })
    var best: (access: StoredIndexAccess, entries: Int)?
    for (index, access) in zip(jsonIndexes, accesses) {
      guard let access else {
        planning.candidates.append(
          .init(
            index: index.definition.name, usable: false, estimatedEntries: nil,
            why: .noConditionOnFirstField(index.definition.fields[0])))
        continue
      }
      if let ordered, query.limit > 0, usable.count == 1,
        ordered.index.definition.name == index.definition.name
      {
        planning.candidates.append(
          .init(
            index: index.definition.name, usable: true, estimatedEntries: nil,
            why: .fixed("gives the sort order, and reading in order stops after the limit")))
        continue
      }
      if alone {
        planning.candidates.append(
          .init(
            index: index.definition.name, usable: true, estimatedEntries: nil,
            why: .fixed("the only index that narrows the selector, by equality on its first field"))
        )
        best = (access, 0)
        continue
      }
      let entries = estimate(access, index, counted: try planning.probe(access.rids))
      planning.candidates.append(
        .init(
          index: index.definition.name, usable: true, estimatedEntries: entries,
          why: .selects(entries: entries, estimated: entries >= probeCap)))
      if best == nil || entries < best!.entries { best = (access, entries) }
    }
    return Weighed(ordered: ordered, accesses: accesses, best: best, alone: alone)
  }

  /// An `$or` whose every branch an index narrows becomes a union of index reads: the
  /// cheapest such `$or`, with the entries it reads and the conjunct it decides exactly
  /// (every branch decided by its index).
  static func orUnion(_ planning: Planning) throws -> (
    accesses: [StoredIndexAccess], entries: Int, decided: [Selector]
  )? {
    var union: (accesses: [StoredIndexAccess], entries: Int, decided: [Selector])?
    for conjunct in planning.conjuncts {
      guard case .or(let branches) = conjunct else { continue }
      var accesses: [StoredIndexAccess] = []
      var entries = 0
      var exact = true
      for branch in branches {
        let options = planning.jsonIndexes.compactMap { index in
          access(index, conjunction(branch)).map { (index, $0) }
        }
        var bestBranch: (StoredIndexAccess, Int)?
        if options.count == 1, options[0].1.leadingValues != nil {
          // A lone equality index for the branch: its statistics are estimate enough.
          let (index, option) = options[0]
          bestBranch = (option, estimate(option, index, counted: probeCap))
        }
        for (index, option) in options where bestBranch == nil || options.count > 1 {
          let count = estimate(option, index, counted: try planning.probe(option.rids))
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
    return union
  }

  /// An index that holds everything the query needs answers it without reading documents,
  /// unless another index is far more selective (its entries are counted only to weigh it
  /// against another index).
  static func covering(
    _ planning: Planning, best: (access: StoredIndexAccess, entries: Int)?
  ) throws -> QueryPlan? {
    let query = planning.query
    for index in planning.jsonIndexes where CoveringPlan.covers(index, query) {
      if let best, best.access.name != index.definition.name {
        var entries = Int.max
        if let access = access(index, planning.conjuncts) {
          entries = try planning.probe(access.rids)
        }
        if best.entries * 4 < entries { continue }
      }
      guard let statement = CoveringPlan.sql(index, query) else { continue }
      var plan = QueryPlan(
        indexes: [index.definition.name], sortedByIndex: !query.sort.isEmpty,
        candidates: planning.candidates,
        why: .covering(index.definition.name),
        statement: statement, choice: Choice(access: .scan), collectionID: planning.collectionID)
      plan.coveringIndex = index
      return plan
    }
    return nil
  }

  /// The last decision: the union or the index with the fewest entries when they select
  /// few documents (or nothing gives the sort order), else the index that gives the sort
  /// order, else the index that narrows a little, else a scan.
  static func decide(
    _ planning: Planning, _ weighed: Weighed,
    union: (accesses: [StoredIndexAccess], entries: Int, decided: [Selector])?
  ) throws -> QueryPlan {
    let (query, jsonIndexes) = (planning.query, planning.jsonIndexes)
    let (ordered, best) = (weighed.ordered, weighed.best)
    var choice = Choice(access: .scan)
    if let textIndex = planning.textIndex {
      choice.text = textIndex.query
    }
    var reason: QueryPlan.Why = .fixed(
      jsonIndexes.isEmpty
        ? "the collection has no JSON index: it is scanned"
        : "no index narrows the selector: the collection is scanned")
    if planning.conjuncts.contains(where: isIDLookup) {
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
        reason =
          weighed.alone ? .only(best.access.name) : .fewest(best.access.name, entries: best.entries)
      }
    } else if let ordered {
      // The access built while weighing, or a read of the whole index.
      let built = zip(jsonIndexes, weighed.accesses).first { $0.0.xid == ordered.index.xid }?.1
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
    return try planning.finish(choice, why: reason)
  }
}
