extension MangoPlan {
  /// `mango_idx_view:indexable_fields`: fields under `$and` with `$lt`, `$lte`, `$eq`,
  /// `$gt`, `$gte`, `$beginsWith` or `$exists: true`, sorted.
  package static func indexableFields(_ selector: MangoSelector) -> [[String]] {
    var fields: [[String]] = []
    func collect(_ selector: MangoSelector) {
      switch selector {
      case .and(let parts): parts.forEach(collect)
      case .field(let path, .compare(let comparison, _)) where comparison != .ne:
        if !fields.contains(path) { fields.append(path) }
      // CouchDB 3.5 reads a range for `$beginsWith`, and counts `$exists: true` in.
      case .field(let path, .beginsWith), .field(let path, .exists(true)):
        if !fields.contains(path) { fields.append(path) }
      default: break
      }
    }
    collect(selector)
    return fields.sorted {
      Array($0.joined(separator: ".").utf8).lexicographicallyPrecedes(
        $1.joined(separator: ".").utf8)
    }
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
    case .field(let path, .beginsWith(let prefix)) where path == field:
      // The strings from the prefix to the prefix followed by the last code point.
      return narrow(range, .gte, .string(prefix)).flatMap {
        narrow($0, .lte, .string(prefix + "\u{10FFFF}"))
      }
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

  /// The ranges of an index's leading columns the selector allows (`composite_prefix`).
  static func prefix(_ index: MangoIndex, _ ranges: [(field: [String], range: MangoRange?)])
    -> [MangoRange?]
  {
    var prefix: [MangoRange?] = []
    for column in index.columns {
      guard let found = ranges.first(where: { $0.field == column }) else { break }
      prefix.append(found.range)
    }
    return prefix
  }

  /// `composite_indexes` and `choose_best_index`: the indexes best first, with how many of
  /// the selector's ranged fields each leaves out: the one whose leading columns the ranges
  /// cover most closely, then the one with fewer columns, then by design document and name.
  static func rank(_ indexes: [MangoIndex], _ ranges: [(field: [String], range: MangoRange?)])
    -> [(index: MangoIndex, difference: Int)]
  {
    indexes.map { (index: $0, difference: ranges.count - prefix($0, ranges).count) }.sorted {
      a, b in
      if a.difference != b.difference { return a.difference < b.difference }
      if a.index.columns.count != b.index.columns.count {
        return a.index.columns.count < b.index.columns.count
      }
      let (ddocA, ddocB) = (a.index.designDocument ?? "", b.index.designDocument ?? "")
      if ddocA != ddocB { return precedes(ddocA, ddocB) }
      return precedes(a.index.name, b.index.name)
    }
  }
}
