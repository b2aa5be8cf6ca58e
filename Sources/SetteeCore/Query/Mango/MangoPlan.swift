/// The index CouchDB 3.5 would read a `_find` with, and how (`mango_idx:get_usable_indexes`,
/// `mango_cursor_view:choose_best_index`).
package struct MangoPlan: Sendable {
  /// The index read.
  package var index: MangoIndex
  /// The ranges of its leading columns the selector allows (none: the whole index).
  package var ranges: [MangoRange]
  /// The selector allows nothing in the index's range (or is a top-level empty `$or`/
  /// `$and`): CouchDB answers no documents, and no bookmark or warning.
  package var isEmpty: Bool
  /// Results come largest first (a `desc` sort).
  package var descending: Bool
  /// Every column holds one value in every result: the index's order is the documents' ids'.
  package var ordersByID: Bool {
    index.isAllDocs || (ranges.count == index.columns.count && ranges.allSatisfy(\.isEquality))
  }
  /// The `use_index` warning, when the index named was not used.
  package var useIndexWarning: String?

  /// An index the planner did not choose, as CouchDB's `_explain` lists it
  /// (`index_candidates`): whether it could serve, CouchDB's first reason, and its rank.
  package struct Candidate: Sendable, Hashable {
    package var index: MangoIndex
    package var usable: Bool
    package var reason: String
    package var ranking: Int
  }

  /// The indexes not chosen, in CouchDB's order (by design document and name, from the
  /// last; `_all_docs` at the end); only when planned for `_explain`.
  package var candidates: [Candidate] = []
  /// No index can serve (only `_explain` plans such a query; `index` is then `_all_docs`
  /// and means nothing).
  package var hasIndex = true

  /// Plans a query.
  ///
  /// - Parameters:
  ///   - indexes: the collection's JSON indexes (`_all_docs` is added).
  ///   - sort: sort fields (as path components) with their direction.
  ///   - useIndex: `use_index` as CouchDB reads it: `[]`, `[ddoc]` or `[ddoc, name]`.
  ///   - allowFallback: `false` refuses a `use_index` that names no usable index
  ///     (`invalid_index`) instead of planning without it.
  ///   - explaining: plan even when no index can serve (`_explain` shows it).
  /// - Throws: ``SetteeError`` `unsupported_mixed_sort`, or `no_usable_index` when no index
  ///   can give the sort.
  package static func plan(
    _ selector: MangoSelector, indexes: [MangoIndex], sort: [(field: [String], descending: Bool)],
    useIndex: [String], allowFallback: Bool = true, explaining: Bool = false
  ) throws -> MangoPlan {
    let descending = sort.first?.descending ?? false
    if sort.contains(where: { $0.descending != descending }) {
      throw SetteeError.couchDB(
        "unsupported_mixed_sort", "Sorts currently only support a single direction for all fields.")
    }
    let sortFields = sort.map(\.field)
    let all = [MangoIndex.allDocs] + indexes
    let named = useIndex.isEmpty ? [] : filter(all, by: useIndex)
    // What CouchDB considers: every global index, and partial ones `use_index` names.
    let considered =
      indexes.allSatisfy({ $0.partialFilter == nil })
      ? all : all.filter { $0.partialFilter == nil || named.contains($0) }
    let reasons = considered.map { unusable($0, selector, sortFields) }
    let usable = considered.indices.filter { reasons[$0].isEmpty }.map { considered[$0] }
    if usable.isEmpty && !explaining {
      throw SetteeError.couchDB(
        "no_usable_index", "No index exists for this sort, try indexing by the sort fields.")
    }
    let preferred = useIndex.isEmpty ? [] : filter(usable, by: useIndex)
    if preferred.isEmpty, !useIndex.isEmpty, !allowFallback {
      throw SetteeError.couchDB(
        "invalid_index",
        "\(designDocumentID(useIndex[0])) specified by `use_index` could not be found or it is not suitable."
      )
    }
    let filtered = preferred.isEmpty ? usable : preferred
    // CouchDB reads with a JSON index when one is usable, `_all_docs` only otherwise.
    let views = filtered.filter { !$0.isAllDocs }
    let ofType = views.isEmpty ? filtered : views
    var ranked: [(index: MangoIndex, difference: Int)] = []
    let (index, ranges): (MangoIndex, [MangoRange?])
    if views.isEmpty {
      (index, ranges) = allDocsRanges(selector)
    } else {
      let fields = fieldRanges(selector)
      ranked = views.count == 1 ? [(views[0], 0)] : rank(views, fields)
      index = ranked[0].index
      ranges = prefix(index, fields)
    }
    var plan = MangoPlan(
      index: index, ranges: ranges, isEmpty: ranges == [nil], descending: descending,
      useIndexWarning: nil)
    plan.hasIndex = !usable.isEmpty
    if !useIndex.isEmpty, filter([index], by: useIndex).isEmpty {
      let ddoc = designDocumentID(useIndex[0]).dropFirst("_design/".count)
      plan.useIndexWarning =
        useIndex.count == 1
        ? "_design/\(ddoc) was not used because it does not contain a valid index for this query."
        : "_design/\(ddoc), \(useIndex[1]) was not used because it is not a valid index for this query."
    }
    if noop(selector) { plan.isEmpty = true }
    guard explaining else { return plan }

    // `mango_cursor:extract_candidate_indexes`: each stage's leftovers get a rank, each
    // stage after the first one higher when the one before it left any.
    let partial = all.filter { $0.partialFilter != nil }
    let unfavored = filtered.filter { !ofType.contains($0) }
    let excluded = usable.filter { !filtered.contains($0) }
    let notUsable = considered.filter { !usable.contains($0) }
    let unfavoredRank = max(1, ranked.count)
    let excludedRank = unfavoredRank + (unfavored.isEmpty ? 0 : 1)
    let notUsableRank = excludedRank + (excluded.isEmpty ? 0 : 1)
    let partialRank = notUsableRank + (notUsable.isEmpty ? 0 : 1)
    var tags: [MangoIndex: (usable: Bool?, reasons: [String], ranking: Int)] = [:]
    func tag(_ index: MangoIndex, usable: Bool?, _ reason: [String], _ ranking: Int) {
      var entry = tags[index] ?? (nil, [], 0)
      if let usable { entry.usable = (entry.usable ?? true) && usable }
      entry.reasons += reason
      entry.ranking += ranking
      tags[index] = entry
    }
    for index in partial { tag(index, usable: false, ["is_partial"], partialRank) }
    for index in notUsable {
      tag(index, usable: false, reasons[considered.firstIndex(of: index)!], notUsableRank)
    }
    for index in excluded { tag(index, usable: true, ["excluded_by_user"], excludedRank) }
    for index in unfavored { tag(index, usable: true, ["unfavored_type"], unfavoredRank) }
    for (position, entry) in ranked.enumerated() where position > 0 {
      let reason =
        entry.difference > 0
        ? "less_overlap"
        : entry.index.columns.count > index.columns.count
          ? "too_many_fields" : "alphabetically_comes_after"
      tag(entry.index, usable: true, [reason], position)
    }
    plan.candidates = all.filter { $0 != index || !plan.hasIndex }.compactMap { index in
      guard let entry = tags[index] else { return nil }
      return Candidate(
        index: index, usable: entry.usable ?? true, reason: entry.reasons.first ?? "",
        ranking: entry.ranking)
    }.sorted { a, b in
      // Erlang's map order, reversed as CouchDB lists it: `_all_docs` (no design
      // document, an atom) sorts first, so it comes last.
      guard let ddocA = a.index.designDocument else { return false }
      guard let ddocB = b.index.designDocument else { return true }
      if ddocA != ddocB { return precedes(ddocB, ddocA) }
      return precedes(b.index.name, a.index.name)
    }
    return plan
  }

  /// `mango_idx_view:covers`: a JSON index holds every one of `fields` (with `_id`), so
  /// CouchDB answers from the index without reading documents; never for all fields
  /// (`nil`) or `_all_docs`.
  package static func covers(_ index: MangoIndex, _ fields: [[String]]?) -> Bool {
    guard !index.isAllDocs, let fields else { return false }
    let available = index.columns + [["_id"]]
    return fields.allSatisfy { available.contains($0) }
  }

  /// -1, 0 or 1 as the index entry (`key`, `id`) comes before, with or after another in
  /// the order results come: the key in CouchDB's collation, then the id byte by byte;
  /// the reverse for a descending sort.
  package func order(_ key: [JSON], _ id: String, _ otherKey: [JSON], _ otherID: String) throws
    -> Int
  {
    var order = try MangoMatcher.compare(.array(key), .array(otherKey))
    if order == 0 { order = try MangoMatcher.compare(.string(id), .string(otherID), raw: true) }
    return descending ? -order : order
  }

  /// Byte order of two strings (Erlang's order of binaries).
  static func precedes(_ a: String, _ b: String) -> Bool {
    a.utf8.lexicographicallyPrecedes(b.utf8)
  }

  init(
    index: MangoIndex, ranges: [MangoRange?], isEmpty: Bool, descending: Bool,
    useIndexWarning: String?
  ) {
    self.index = index
    self.ranges = ranges.compactMap { $0 }
    self.isEmpty = isEmpty
    self.descending = descending
    self.useIndexWarning = useIndexWarning
  }

  /// `mango_cursor:maybe_noop_range`: a whole selector `{"$or": []}` or `{"$and": []}`.
  static func noop(_ selector: MangoSelector) -> Bool {
    switch selector {
    case .or([]), .and([]): true
    default: false
    }
  }

  static func designDocumentID(_ name: String) -> String {
    name.hasPrefix("_design/") ? name : "_design/" + name
  }

  /// The indexes `use_index` names (`mango_cursor:maybe_filter_indexes_by_ddoc`).
  static func filter(_ indexes: [MangoIndex], by useIndex: [String]) -> [MangoIndex] {
    guard let first = useIndex.first else { return [] }
    let ddoc = designDocumentID(first)
    return indexes.filter {
      $0.designDocument == ddoc && (useIndex.count < 2 || $0.name == useIndex[1])
    }
  }

  // MARK: - Usable indexes

  /// Why an index cannot serve the query (`is_usable`'s reasons); none when it can.
  static func unusable(_ index: MangoIndex, _ selector: MangoSelector, _ sort: [[String]])
    -> [String]
  {
    if index.isAllDocs {
      if sort.isEmpty { return [] }
      return (indexableFields(selector).contains(["_id"]) ? [] : ["field_mismatch"])
        + (sort == [["_id"]] ? [] : ["sort_order_mismatch"])
    }
    let required = unique(
      index.columns.filter { !sort.contains($0) && $0 != ["_id"] && $0 != ["_rev"] })
    return (requires(selector, required) ? [] : ["field_mismatch"])
      + (canUseSort(index.columns[...], sort, selector) ? [] : ["sort_order_mismatch"])
      + (isTextSearch(selector) ? ["needs_text_search"] : [])
  }

  static func unique(_ fields: [[String]]) -> [[String]] {
    var seen: [[String]] = []
    for field in fields where !seen.contains(field) { seen.append(field) }
    return seen
  }

  /// `mango_selector:has_required_fields`: every document the selector matches has each
  /// field (seen through `$and`, and through `$or` when every branch requires it).
  package static func requires(_ selector: MangoSelector, _ fields: [[String]]) -> Bool {
    remaining(selector, fields).isEmpty
  }

  static func remaining(_ selector: MangoSelector, _ fields: [[String]]) -> [[String]] {
    if fields.isEmpty { return [] }
    switch selector {
    case .everything, .text, .not: return fields
    case .and(let parts):
      return parts.reduce(fields) { remaining($1, $0) }
    case .or(let parts):
      var left: [[String]] = []
      for part in parts { left.append(contentsOf: remaining(part, fields)) }
      return unique(left).sorted { $0.joined(separator: ".") < $1.joined(separator: ".") }
    case .field(let path, let condition):
      if condition == .exists(false) { return fields }
      var left = fields
      if let position = left.firstIndex(of: path) { left.remove(at: position) }
      return left
    }
  }

  static func isTextSearch(_ selector: MangoSelector) -> Bool {
    switch selector {
    case .text: true
    case .and(let parts), .or(let parts): parts.contains(where: isTextSearch)
    default: false
    }
  }

  /// `mango_idx_view:can_use_sort`: the sort is a prefix of the columns, after columns the
  /// selector holds constant.
  static func canUseSort(
    _ columns: ArraySlice<[String]>, _ sort: [[String]], _ selector: MangoSelector
  )
    -> Bool
  {
    if sort.isEmpty { return true }
    guard let first = columns.first else { return false }
    if first == sort[0] { return columns.starts(with: sort) }
    return isConstant(selector, first) && canUseSort(columns.dropFirst(), sort, selector)
  }

  /// `mango_selector:is_constant_field`: an `$eq` on the field, seen through `$and`.
  static func isConstant(_ selector: MangoSelector, _ field: [String]) -> Bool {
    switch selector {
    case .and(let parts): parts.contains { isConstant($0, field) }
    case .field(let path, .compare(.eq, _)): path == field
    default: false
    }
  }
}
