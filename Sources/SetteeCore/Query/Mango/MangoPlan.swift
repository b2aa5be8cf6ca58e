/// An index as CouchDB 3.5's Mango planner sees it: `_all_docs`, or a JSON index with its
/// columns and partial filter.
package struct MangoIndex: Sendable, Hashable {
  /// The design document; `nil` for `_all_docs`.
  package var designDocument: String?
  /// The index name (`_all_docs` for the index of ids).
  package var name: String
  /// The indexed fields, each as path components, in order.
  package var columns: [[String]]
  /// Only documents that match it are in the index (CouchDB's `partial_filter_selector`).
  package var partialFilter: MangoSelector?

  /// The index CouchDB keeps of every document by id.
  package static let allDocs = MangoIndex(
    designDocument: nil, name: "_all_docs", columns: [["_id"]], partialFilter: nil)

  /// A JSON index.
  package init(
    designDocument: String?, name: String, columns: [[String]], partialFilter: MangoSelector?
  ) {
    self.designDocument = designDocument
    self.name = name
    self.columns = columns
    self.partialFilter = partialFilter
  }

  /// A Settee JSON index as CouchDB's planner sees it: its partial filter read as CouchDB
  /// reads it.
  package init(_ definition: IndexDefinition) throws {
    self.init(
      designDocument: definition.designDocumentID, name: definition.name,
      columns: definition.fields.map(\.components),
      partialFilter: try definition.partialFilter.map { try MangoSelector.parse($0.json) })
  }

  /// Whether this is `_all_docs`.
  package var isAllDocs: Bool { designDocument == nil }
}

/// The range of one index column a selector allows (`mango_idx_view:range`): from a low
/// bound to a high bound, either of which may be open (`min`/`max`).
package struct MangoRange: Sendable, Hashable {
  /// A bound: below or above every value, or a value.
  package enum Bound: Sendable, Hashable {
    case min, max
    case value(JSON)
  }
  /// `$gt`, `$gte` or `$eq`.
  package var lowOperator: MangoSelector.Comparison
  package var low: Bound
  /// `$lt`, `$lte` or `$eq`.
  package var highOperator: MangoSelector.Comparison
  package var high: Bound

  /// Every value.
  package static let unbounded = MangoRange(lowOperator: .gt, low: .min, highOperator: .lt, high: .max)

  /// Whether the range holds one value (`$eq`).
  package var isEquality: Bool { lowOperator == .eq && highOperator == .eq }
}

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
  package var ordersByID: Bool { index.isAllDocs || (ranges.count == index.columns.count && ranges.allSatisfy(\.isEquality)) }
  /// The `use_index` warning, when the index named was not used.
  package var useIndexWarning: String?

  /// Plans a query.
  ///
  /// - Parameters:
  ///   - indexes: the collection's JSON indexes (`_all_docs` is added).
  ///   - sort: sort fields (as path components) with their direction.
  ///   - useIndex: `use_index` as CouchDB reads it: `[]`, `[ddoc]` or `[ddoc, name]`.
  ///   - allowFallback: `false` refuses a `use_index` that names no usable index
  ///     (`invalid_index`) instead of planning without it.
  /// - Throws: ``SetteeError`` `unsupported_mixed_sort`, or `no_usable_index` when no index
  ///   can give the sort.
  package static func plan(
    _ selector: MangoSelector, indexes: [MangoIndex], sort: [(field: [String], descending: Bool)],
    useIndex: [String], allowFallback: Bool = true
  ) throws -> MangoPlan {
    let descending = sort.first?.descending ?? false
    if sort.contains(where: { $0.descending != descending }) {
      throw SetteeError.couchDB(
        "unsupported_mixed_sort", "Sorts currently only support a single direction for all fields.")
    }
    let sortFields = sort.map(\.field)
    let all = [MangoIndex.allDocs] + indexes
    let global = all.filter { $0.partialFilter == nil }
    let named = filter(all, by: useIndex)
    var usable: [MangoIndex] = []
    for index in all where global.contains(index) || named.contains(index) {
      if isUsable(index, selector, sortFields) { usable.append(index) }
    }
    if usable.isEmpty {
      throw SetteeError.couchDB(
        "no_usable_index", "No index exists for this sort, try indexing by the sort fields.")
    }
    let preferred = filter(usable, by: useIndex)
    if preferred.isEmpty, !useIndex.isEmpty, !allowFallback {
      throw SetteeError.couchDB(
        "invalid_index",
        "\(designDocumentID(useIndex[0])) specified by `use_index` could not be found or it is not suitable."
      )
    }
    let chosenFrom = preferred.isEmpty ? usable : preferred
    // CouchDB reads with a JSON index when one is usable, `_all_docs` only otherwise.
    let views = chosenFrom.filter { !$0.isAllDocs }
    let (index, ranges) =
      views.isEmpty ? allDocsRanges(selector) : choose(views, fieldRanges(selector))
    var plan = MangoPlan(
      index: index, ranges: ranges, isEmpty: ranges == [nil], descending: descending,
      useIndexWarning: nil)
    if !useIndex.isEmpty, filter([index], by: useIndex).isEmpty {
      let ddoc = designDocumentID(useIndex[0]).dropFirst("_design/".count)
      plan.useIndexWarning =
        useIndex.count == 1
        ? "_design/\(ddoc) was not used because it does not contain a valid index for this query."
        : "_design/\(ddoc), \(useIndex[1]) was not used because it is not a valid index for this query."
    }
    if noop(selector) { plan.isEmpty = true }
    return plan
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

  static func isUsable(_ index: MangoIndex, _ selector: MangoSelector, _ sort: [[String]]) -> Bool
  {
    if index.isAllDocs {
      return sort.isEmpty || (indexableFields(selector).contains(["_id"]) && sort == [["_id"]])
    }
    var required = index.columns.filter { !sort.contains($0) && $0 != ["_id"] && $0 != ["_rev"] }
    required = unique(required)
    return requires(selector, required) && !isTextSearch(selector)
      && canUseSort(index.columns[...], sort, selector)
  }

  static func unique(_ fields: [[String]]) -> [[String]] {
    var seen: [[String]] = []
    for field in fields where !seen.contains(field) { seen.append(field) }
    return seen
  }

  /// `mango_selector:has_required_fields`: every document the selector matches has each
  /// field (seen through `$and`, and through `$or` when every branch requires it).
  static func requires(_ selector: MangoSelector, _ fields: [[String]]) -> Bool {
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
  static func canUseSort(_ columns: ArraySlice<[String]>, _ sort: [[String]], _ selector: MangoSelector)
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

  // MARK: - Ranges

  /// `mango_idx_view:indexable_fields`: fields under `$and` with `$lt`, `$lte`, `$eq`,
  /// `$gt` or `$gte`, sorted.
  static func indexableFields(_ selector: MangoSelector) -> [[String]] {
    var fields: [[String]] = []
    func collect(_ selector: MangoSelector) {
      switch selector {
      case .and(let parts): parts.forEach(collect)
      case .field(let path, .compare(let comparison, _)) where comparison != .ne:
        if !fields.contains(path) { fields.append(path) }
      default: break
      }
    }
    collect(selector)
    return fields.sorted { Array($0.joined(separator: ".").utf8).lexicographicallyPrecedes($1.joined(separator: ".").utf8) }
  }

  /// `mango_idx_view:field_ranges`: each indexable field's range, or only the first field
  /// whose range is empty (`nil`), as CouchDB stops there.
  static func fieldRanges(_ selector: MangoSelector) -> [(field: [String], range: MangoRange?)] {
    var result: [(field: [String], range: MangoRange?)] = []
    for field in indexableFields(selector) {
      let range = narrow(selector, field, MangoRange.unbounded)
      if range == nil { return [(field, nil)] }
      result.append((field, range))
    }
    return result
  }

  /// Narrows `range` by the selector's comparisons on `field` under `$and`.
  static func narrow(_ selector: MangoSelector, _ field: [String], _ range: MangoRange?)
    -> MangoRange?
  {
    guard let range else { return nil }
    switch selector {
    case .and(let parts):
      return parts.reduce(range) { narrow($1, field, $0) }
    case .field(let path, .compare(let comparison, let argument)) where path == field:
      return narrow(range, comparison, argument)
    default:
      return range
    }
  }

  /// Where `argument` falls against a range's bounds (`range_pos`).
  enum Position { case min, low, mid, high, max }

  static func position(_ low: MangoRange.Bound, _ argument: JSON, _ high: MangoRange.Bound)
    -> Position
  {
    func compare(_ value: JSON, _ bound: MangoRange.Bound) -> Int {
      switch bound {
      case .min: 1
      case .max: -1
      case .value(let other): (try? MangoMatcher.compare(value, other)) ?? 0
      }
    }
    let againstLow = compare(argument, low)
    if againstLow < 0 { return .min }
    if againstLow == 0 { return .low }
    let againstHigh = compare(argument, high)
    return againstHigh < 0 ? .mid : againstHigh == 0 ? .high : .max
  }

  /// `mango_idx_view:range/5`.
  static func narrow(_ range: MangoRange, _ comparison: MangoSelector.Comparison, _ argument: JSON)
    -> MangoRange?
  {
    let place = position(range.low, argument, range.high)
    let value = MangoRange.Bound.value(argument)
    let equal = MangoRange(lowOperator: .eq, low: value, highOperator: .eq, high: value)
    var narrowed = range
    switch comparison {
    case .lt:
      switch place {
      case .min, .low: return nil
      case .mid, .high: (narrowed.highOperator, narrowed.high) = (.lt, value)
      case .max: break
      }
    case .lte:
      switch place {
      case .min: return nil
      case .low: return range.lowOperator == .gte || range.lowOperator == .eq ? equal : nil
      case .mid: (narrowed.highOperator, narrowed.high) = (.lte, value)
      case .high, .max: break
      }
    case .eq:
      switch place {
      case .min, .max: return nil
      case .low: return range.lowOperator == .gte || range.lowOperator == .eq ? equal : nil
      case .mid: return equal
      case .high: return range.highOperator == .lte || range.highOperator == .eq ? equal : nil
      }
    case .gte:
      switch place {
      case .min, .low: break
      case .mid: (narrowed.lowOperator, narrowed.low) = (.gte, value)
      case .high: return range.highOperator == .lte || range.highOperator == .eq ? equal : nil
      case .max: return nil
      }
    case .gt:
      switch place {
      case .min: break
      case .low, .mid: (narrowed.lowOperator, narrowed.low) = (.gt, value)
      case .high, .max: return nil
      }
    case .ne:
      break
    }
    return narrowed
  }

  /// `_all_docs`'s range: the selector's range on `_id`, else every id
  /// (`mango_cursor_special`).
  static func allDocsRanges(_ selector: MangoSelector) -> (MangoIndex, [MangoRange?]) {
    let ranges = fieldRanges(selector)
    let range = ranges.first(where: { $0.field == ["_id"] }).map(\.range) ?? .unbounded
    return (.allDocs, [range])
  }

  /// `composite_indexes` and `choose_best_index`: the index whose leading columns the
  /// selector's ranges cover most closely, then the one with fewer columns, then by
  /// design document and name.
  static func choose(_ indexes: [MangoIndex], _ ranges: [(field: [String], range: MangoRange?)])
    -> (MangoIndex, [MangoRange?])
  {
    let composited = indexes.map { index -> (MangoIndex, [MangoRange?], Int) in
      var prefix: [MangoRange?] = []
      for column in index.columns {
        guard let found = ranges.first(where: { $0.field == column }) else { break }
        prefix.append(found.range)
      }
      return (index, prefix, ranges.count - prefix.count)
    }
    let best = composited.min { a, b in
      if a.2 != b.2 { return a.2 < b.2 }
      if a.0.columns.count != b.0.columns.count { return a.0.columns.count < b.0.columns.count }
      let (ddocA, ddocB) = (a.0.designDocument ?? "", b.0.designDocument ?? "")
      if ddocA != ddocB { return Array(ddocA.utf8).lexicographicallyPrecedes(ddocB.utf8) }
      return Array(a.0.name.utf8).lexicographicallyPrecedes(b.0.name.utf8)
    }!
    return (best.0, best.1)
  }
}
