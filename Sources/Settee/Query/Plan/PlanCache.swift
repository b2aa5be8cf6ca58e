import Foundation
import GRDB
import SetteeCore

/// The plans of recent query shapes, so that a query shaped like one planned before (the
/// same query with other values) is not planned again: planning is a third of a small
/// indexed query.
///
/// A query's *shape* is the query with the values of its comparisons taken out (`$eq`,
/// `$gt`, `$gte`, `$lt` and `$lte` on a number or a string without U+0000, outside
/// `$elemMatch`, `$allMatch` and `$keyMapMatch`), each leaving a *slot* marked with its
/// JSON type. Everything else is the shape, compared byte for byte (Swift's `String`
/// equality would make two spellings of "é" one shape, while they are different fields and
/// values): paths, operators, other values, sort, projection, `skip`, `limit`,
/// `use_index`. With the collection, its index catalog version and whether its documents
/// may hold U+0000, the shape is the cache key.
///
/// A shape's *template* is made by planning the query again with a sentinel value in each
/// slot, and finding each sentinel's index key among the statement's arguments: that
/// argument is the slot's key for every query of the shape, and the other arguments are
/// the same for all. A shape gets no template (it is planned in full each time) when its
/// plan may depend on the values otherwise:
/// - the planner counted index entries to choose between indexes (the counts depend on
///   the values);
/// - a sentinel reaches the statement in any other form (a condition checked on the
///   documents in SQL, the selector given to the matcher, text in the SQL);
/// - the template, given the query's own values, does not give the plan the planner made
///   for them, argument for argument; the next ``verifiedUses`` queries of the shape are
///   planned in full too and compared the same way, and one difference drops the shape.
///
/// A cached plan's statement is the template's; the rest of the plan (its `choice` among
/// them) is that of the shape's first query. Queries that use more of the plan than its
/// statement (`execution_stats`, explanations, bookmarks' positions) are never cached.
final class PlanCache: Sendable {
  /// How many queries of a shape are planned in full and compared with the template
  /// before the template alone is trusted.
  static let verifiedUses = 3
  /// The most shapes kept; past it, the cache starts again empty.
  static let capacity = 256
  /// The most slots a kept shape has: a selector with more (an `$or` of thousands of
  /// equalities) is planned each time, rather than matched against sentinels one by one.
  static let maxSlots = 32
  /// The longest shape kept: a larger selector (long `$in` lists) costs more to plan twice
  /// and to hash than a cached plan saves.
  static let maxShapeBytes = 4_096

  struct Key: Hashable, Sendable {
    var cid: Int64
    var catalogVersion: Int64
    var documentsHoldNUL: Bool
    var shape: [UInt8]
  }

  enum Entry: Sendable {
    case template(Template, checks: Int)
    case uncacheable
  }

  private let entries = Locked<[Key: Entry]>([:])

  func entry(_ key: Key) -> Entry? { entries.withLock { $0[key] } }

  func store(_ entry: Entry, _ key: Key) {
    entries.withLock {
      if $0.count >= Self.capacity, $0[key] == nil { $0.removeAll(keepingCapacity: true) }
      $0[key] = entry
    }
  }

  /// Records one more full plan that matched the template (or drops the shape).
  func checked(_ key: Key, matched: Bool) {
    entries.withLock { entries in
      guard case .template(let template, let checks)? = entries[key] else { return }
      entries[key] = matched ? .template(template, checks: checks + 1) : .uncacheable
    }
  }
}

// MARK: - Shapes

extension PlanCache {
  /// A query's shape (as bytes) and the values of its slots, in order.
  struct Shape {
    var key = Bytes()
    var slots: [JSON] = []
  }

  /// The query's shape; `nil` for queries whose use of the plan goes beyond its statement.
  static func shape(_ query: FindQuery) -> Shape? {
    // CouchDB's dialect plans with CouchDB's rules and reads through queries of the
    // default dialect, which are cached; its own selector (`mango`, `returnsNothing`) is
    // not planned here (nor `useIndexPair`, which only CouchDB's `use_index` sets).
    guard query.position == nil, !query.executionStats, query.dialect == .cloudantSync,
      query.useIndexPair == nil
    else {
      return nil
    }
    var shape = Shape()
    shape.key.bytes.reserveCapacity(128)
    _ = walk(query.selector, &shape, slotsAllowed: true, replace: nil)
    guard shape.slots.count <= maxSlots, shape.key.bytes.count <= maxShapeBytes else {
      return nil
    }
    shape.key.int(Int64(query.sort.count))
    for field in query.sort {
      shape.key.path(field.path)
      shape.key.tag(field.descending ? 1 : 0)
    }
    if let fields = query.fields {
      shape.key.int(Int64(fields.count))
      for field in fields { shape.key.path(field) }
    } else {
      shape.key.int(-1)
    }
    shape.key.int(Int64(query.skip))
    shape.key.int(Int64(query.limit))
    if let name = query.useIndex {
      shape.key.tag(1)
      shape.key.string(name)
    } else {
      shape.key.tag(0)
    }
    shape.key.tag(query.allowFallback ? 1 : 0)
    shape.key.tag(query.conflicts ? 1 : 0)
    return shape
  }

  /// The query with a sentinel in each slot, and the sentinels, slot by slot.
  static func sentinelQuery(_ query: FindQuery) -> (query: FindQuery, sentinels: [JSON]) {
    var shape = Shape()
    var sentinels: [JSON] = []
    var sentinelQuery = query
    if let selector = walk(
      query.selector, &shape, slotsAllowed: true,
      replace: { index, value in
        let sentinel = Self.sentinel(index, like: value)
        sentinels.append(sentinel)
        return sentinel
      })
    {
      sentinelQuery.selector = selector
    }
    return (sentinelQuery, sentinels)
  }

  /// A value of `value`'s type that no query writes by chance, different for each slot.
  static func sentinel(_ index: Int, like value: JSON) -> JSON {
    switch value {
    case .int: .int(-0x3A5E_77EE_5107_0000 - Int64(index))
    case .double: .double(-1.234_567_891_234_5e-250 * Double(index + 1))
    default: .string("\u{F8FF}settee slot \(index)\u{F8FF}")
    }
  }

  /// The condition's value when it is a slot.
  private static func slotValue(_ condition: Condition) -> JSON? {
    switch condition {
    case .equal(let value), .lessThan(let value), .lessThanOrEqual(let value),
      .greaterThan(let value), .greaterThanOrEqual(let value):
      switch value {
      case .int, .double: return value
      // (`JSON` is a nil literal too: no `?:` here, where `nil` would become `null`.)
      case .string(let text) where !text.utf8.contains(0): return value
      default: return Optional.none
      }
    default: return nil
    }
  }

  private static func replacing(_ condition: Condition, with value: JSON) -> Condition {
    switch condition {
    case .equal: .equal(value)
    case .lessThan: .lessThan(value)
    case .lessThanOrEqual: .lessThanOrEqual(value)
    case .greaterThan: .greaterThan(value)
    case .greaterThanOrEqual: .greaterThanOrEqual(value)
    default: condition
    }
  }

  /// Appends the selector's shape and its slots' values; with `replace`, also returns the
  /// selector with each slot's value replaced (slots numbered in the order they are met).
  private static func walk(
    _ selector: Selector, _ shape: inout Shape, slotsAllowed: Bool,
    replace: ((Int, JSON) -> JSON)?
  ) -> Selector? {
    func each(_ parts: [Selector]) -> [Selector]? {
      shape.key.int(Int64(parts.count))
      var replaced: [Selector] = []
      for part in parts {
        if let new = walk(part, &shape, slotsAllowed: slotsAllowed, replace: replace) {
          replaced.append(new)
        }
      }
      return replace == nil ? nil : replaced
    }
    switch selector {
    case .all:
      shape.key.tag(1)
      return selector
    case .and(let parts):
      shape.key.tag(2)
      return each(parts).map(Selector.and)
    case .or(let parts):
      shape.key.tag(3)
      return each(parts).map(Selector.or)
    case .not(let inner):
      shape.key.tag(4)
      return walk(inner, &shape, slotsAllowed: slotsAllowed, replace: replace).map(Selector.not)
    case .text(let search):
      shape.key.tag(5)
      shape.key.string(search)
      return selector
    case .condition(let path, let condition):
      shape.key.tag(6)
      shape.key.path(path)
      shape.key.tag(conditionTag(condition))
      if slotsAllowed, let value = slotValue(condition) {
        shape.key.tag(value.slotTypeTag)
        let index = shape.slots.count
        shape.slots.append(value)
        guard let replace else { return nil }
        return .condition(path, replacing(condition, with: replace(index, value)))
      }
      shape.key.tag(0)
      switch condition {
      case .equal(let value), .lessThan(let value), .lessThanOrEqual(let value),
        .greaterThan(let value), .greaterThanOrEqual(let value):
        shape.key.json(value)
      case .exists: break
      case .type(let type): shape.key.string(type.rawValue)
      case .in(let values), .all(let values): shape.key.json(.array(values))
      case .size(let count): shape.key.int(Int64(count))
      case .mod(let divisor, let remainder):
        shape.key.int(divisor)
        shape.key.int(remainder)
      case .regex(let text), .beginsWith(let text): shape.key.string(text)
      case .elementMatch(let inner), .allMatch(let inner), .keyMapMatch(let inner):
        _ = walk(inner, &shape, slotsAllowed: false, replace: nil)
      }
      return selector
    }
  }

  private static func conditionTag(_ condition: Condition) -> UInt8 {
    switch condition {
    case .equal: 1
    case .lessThan: 2
    case .lessThanOrEqual: 3
    case .greaterThan: 4
    case .greaterThanOrEqual: 5
    case .exists: 6
    case .type: 7
    case .in: 8
    case .all: 9
    case .size: 10
    case .mod: 11
    case .regex: 12
    case .beginsWith: 13
    case .elementMatch: 14
    case .allMatch: 15
    case .keyMapMatch: 16
    }
  }

  /// A shape's bytes: every part tagged or counted, so that no two shapes share bytes.
  struct Bytes {
    var bytes: [UInt8] = []

    mutating func tag(_ tag: UInt8) { bytes.append(tag) }

    mutating func int(_ number: Int64) {
      withUnsafeBytes(of: number.littleEndian) { bytes.append(contentsOf: $0) }
    }

    mutating func string(_ text: String) {
      int(Int64(text.utf8.count))
      bytes.append(contentsOf: text.utf8)
    }

    mutating func path(_ path: FieldPath) {
      int(Int64(path.components.count))
      for component in path.components { string(component) }
    }

    mutating func json(_ value: JSON) {
      switch value {
      case .null: tag(1)
      case .bool(let flag): tag(flag ? 3 : 2)
      case .int(let number):
        tag(4)
        int(number)
      case .double(let number):
        tag(5)
        int(Int64(bitPattern: number.bitPattern))
      case .largeInteger(let digits):
        tag(9)
        string(digits)
      case .string(let text):
        tag(6)
        string(text)
      case .array(let values):
        tag(7)
        int(Int64(values.count))
        for value in values { json(value) }
      case .object(let object):
        tag(8)
        int(Int64(object.count))
        for member in object {
          string(member.key)
          json(member.value)
        }
      }
    }
  }
}

extension JSON {
  /// The JSON type of a slot's value, as part of a shape (integers apart from other
  /// numbers).
  fileprivate var slotTypeTag: UInt8 {
    switch self {
    case .int: 1
    case .double: 2
    default: 3
    }
  }
}

// MARK: - Templates

extension PlanCache {
  /// A plan whose statement takes each slot's value as an index key.
  struct Template: Sendable {
    enum Argument: Sendable {
      case constant(DatabaseValue)
      /// The index key of slot `n` (``CollationKey/encode(_:)``).
      case key(Int)
    }

    var plan: QueryPlan
    var text: String
    var arguments: [Argument]

    /// The template for a shape, from the plan of a query made with sentinels; `nil` when
    /// a sentinel reaches the statement other than as a whole index key argument.
    init?(sentinelPlan plan: QueryPlan, sentinels: [JSON]) {
      let keys = sentinels.map { CollationKey.encode($0) }
      let marks = Self.marks(sentinels, keys: keys)
      if Self.holds(Array(plan.statement.text.utf8), marks) { return nil }
      var arguments: [Argument] = []
      for value in plan.statement.arguments {
        if case .blob(let data) = value.storage,
          let slot = keys.firstIndex(where: { $0.elementsEqual(data) })
        {
          arguments.append(.key(slot))
          continue
        }
        switch value.storage {
        case .null: break
        case .int64(let number):
          if sentinels.contains(.int(number)) { return nil }
        case .double(let number):
          if sentinels.contains(where: { $0 == .double(number) }) { return nil }
        case .string(let text):
          if Self.holds(Array(text.utf8), marks) { return nil }
        case .blob(let data):
          if Self.holds(Array(data), marks) { return nil }
        }
        arguments.append(.constant(value))
      }
      self.plan = plan
      self.text = plan.statement.text
      self.arguments = arguments
    }

    /// The byte strings that show a sentinel: its index key, and its text as JSON and
    /// as Swift prints it.
    private static func marks(_ sentinels: [JSON], keys: [[UInt8]]) -> [[UInt8]] {
      var marks = keys.filter { $0.count > 2 }
      marks.append(Array("settee slot".utf8))
      for sentinel in sentinels {
        switch sentinel {
        case .int(let number): marks.append(Array(String(number).utf8))
        case .double(let number):
          marks.append(Array(String(number).utf8))
          marks.append(Array(JSONWriter.string(.double(number)).utf8))
        default: break
        }
      }
      return marks
    }

    /// Whether `bytes` contains one of `marks`: `memchr` to each place the mark's first
    /// byte is, `memcmp` there (a statement's text runs to kilobytes, and comparing slices
    /// at every offset cost a debug build most of a new shape's planning).
    private static func holds(_ bytes: [UInt8], _ marks: [[UInt8]]) -> Bool {
      bytes.withUnsafeBytes { haystack in
        marks.contains { mark in
          guard let first = mark.first, haystack.count >= mark.count else { return false }
          return mark.withUnsafeBytes { needle in
            let end = haystack.baseAddress! + (haystack.count - mark.count + 1)
            var from = haystack.baseAddress!
            while from < end,
              let found = memchr(from, Int32(first), end - from).map(UnsafeRawPointer.init)
            {
              if memcmp(found, needle.baseAddress!, mark.count) == 0 { return true }
              from = found + 1
            }
            return false
          }
        }
      }
    }

    /// The plan for a query of the shape with these slot values.
    func plan(_ slots: [JSON]) -> QueryPlan {
      var plan = self.plan
      plan.statement = plan.statement.replacingArguments(
        arguments.map { argument in
          switch argument {
          case .constant(let value): value
          case .key(let slot): Data(CollationKey.encode(slots[slot])).databaseValue
          }
        })
      return plan
    }
  }
}
