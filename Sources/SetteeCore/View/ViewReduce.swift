/// A view's reduce function: CouchDB's built-ins or a Swift closure.
///
/// Rows are reduced in chunks, and the chunks' results are then reduced again with
/// `rereduce` set (as CouchDB does over its B-tree nodes), so a custom function must
/// accept its own results as input: a `_count`-like function sums them on rereduce.
public enum ViewReduce: Sendable {
  /// `_count`: how many rows.
  case count
  /// `_sum`: the sum of numbers; arrays of numbers sum element by element (a shorter
  /// array counts as zeros, and a number adds to an array's first element, as in
  /// CouchDB), objects member by member. A group holding a value of another kind reduces,
  /// as in CouchDB, to the object `{"error": "builtin_reduce_error", "reason": …,
  /// "caused_by": value}`, and the query's other groups are unaffected.
  case sum
  /// `_stats`: `{"sum", "count", "min", "max", "sumsqr"}` of numbers, or an array of
  /// those for arrays of numbers.
  case stats
  /// `_approx_count_distinct`: how many distinct keys (by their JSON text, as CouchDB's
  /// hashes its keys' terms). CouchDB estimates with HyperLogLog; Settee counts exactly,
  /// which is within any estimate's error.
  case approximateCountDistinct
  /// A Swift function. `keys` are the rows' `[key, documentID]` pairs (empty on
  /// rereduce), `values` their values (on rereduce: earlier results).
  case custom(@Sendable (_ keys: [JSON], _ values: [JSON], _ rereduce: Bool) throws -> JSON)

  /// The built-in named as CouchDB names it (`"_count"`, `"_sum"`, `"_stats"`).
  public init?(builtin name: String) {
    switch name {
    case "_count": self = .count
    case "_sum": self = .sum
    case "_stats": self = .stats
    case "_approx_count_distinct": self = .approximateCountDistinct
    default: return nil
    }
  }

  /// CouchDB's name for a built-in; `nil` for a custom function.
  public var builtinName: String? {
    switch self {
    case .count: "_count"
    case .sum: "_sum"
    case .stats: "_stats"
    case .approximateCountDistinct: "_approx_count_distinct"
    case .custom: nil
    }
  }

  /// How many rows one call reduces before the results are rereduced.
  package static let chunkSize = 512

  /// Reduces rows: `keys`, `ids` and `values` run in parallel.
  ///
  /// - Throws: ``SetteeError`` with code `invalidQuery` naming the document and key of a
  ///   value `_stats` cannot reduce, or what a custom function threw. (`_sum` answers
  ///   CouchDB's error object instead.)
  package func reduce(keys: [JSON], ids: [String], values: [JSON]) throws -> JSON {
    switch self {
    case .count:
      return .int(Int64(values.count))
    case .sum:
      return Self.sum(values)
    case .stats:
      var total: JSON? = nil
      for index in values.indices {
        let stats = try Self.stats(of: values[index]) {
          Self.badValue(
            "_stats", values[index], ids[index], keys[index], "a number or an array of numbers")
        }
        total = try total.map { try Self.combineStats($0, stats) } ?? stats
      }
      return total ?? .null
    case .approximateCountDistinct:
      // A partial result is the distinct keys' texts, sorted; ``finished(_:)`` counts them.
      return .array(Set(keys.map { JSONWriter.string($0) }).sorted().map(JSON.string))
    case .custom(let function):
      let pairs = zip(keys, ids).map { JSON.array([$0, .string($1)]) }
      return try Self.calling { try function(pairs, values, false) }
    }
  }

  /// Reduces earlier results of ``reduce(keys:ids:values:)`` (and of itself).
  package func rereduce(_ values: [JSON]) throws -> JSON {
    switch self {
    case .count:
      return try values.reduce(JSON.int(0)) { total, value in
        try Self.add(total, value) { _ in
          SetteeError(.invalidQuery, "_count: a partial count is not a number")
        }
      }
    case .sum:
      return Self.sum(values)
    case .stats:
      guard var total = values.first else { return .null }
      for value in values.dropFirst() { total = try Self.combineStats(total, value) }
      return total
    case .approximateCountDistinct:
      var keys = Set<String>()
      for value in values {
        for key in value.arrayValue ?? [] { keys.insert(key.stringValue ?? "") }
      }
      return .array(keys.sorted().map(JSON.string))
    case .custom(let function):
      return try Self.calling { try function([], values, true) }
    }
  }

  /// A group's value from its reduction: the count of `_approx_count_distinct`'s distinct
  /// keys; any other reduction's value as it is.
  package func finished(_ value: JSON) -> JSON {
    guard case .approximateCountDistinct = self else { return value }
    return .int(Int64(value.arrayValue?.count ?? 0))
  }

  /// Reduces any number of rows: in chunks of ``chunkSize``, then a rereduce of the
  /// chunks' results when there was more than one, as a view query does as rows stream.
  package func reduceAll(keys: [JSON], ids: [String], values: [JSON]) throws -> JSON {
    var group = GroupReducer(reduce: self)
    for index in values.indices {
      try group.add(key: keys[index], id: ids[index], value: values[index])
    }
    return try group.finish()
  }

  static func calling(_ body: () throws -> JSON) throws -> JSON {
    do { return try body() } catch let error as SetteeError { throw error } catch {
      throw SetteeError(.invalidQuery, "the view's reduce function threw: \(error)")
    }
  }

  static func badValue(
    _ function: String, _ value: JSON, _ id: String, _ key: JSON, _ expected: String
  ) -> SetteeError {
    SetteeError(
      .invalidQuery,
      "\(function) needs values that are \(expected), but document \(JSON.string(id)) emitted \(value) under key \(key)"
    )
  }

  /// The reason CouchDB gives for a `_sum` it cannot make (`couch_query_servers`).
  static let sumFailure =
    "The _sum function requires that map values be numbers, arrays of numbers, or objects. Objects cannot be mixed with other data structures. Objects can be arbitrarily nested, provided that the values for all fields are themselves numbers, arrays of numbers, or objects."

  /// `_sum` of values, or of earlier sums: CouchDB's `builtin_sum_rows`. The first value
  /// that cannot be added makes the result `{"error": "builtin_reduce_error", "reason",
  /// "caused_by"}`, and an earlier such result (a chunk's) is the result as it is.
  static func sum(_ values: [JSON]) -> JSON {
    var total: JSON = .int(0)
    for value in values {
      if case .object(let object) = value, object["error"] == "builtin_reduce_error" {
        return value
      }
      var culprit = value
      do {
        total = try add(total, value) { inner in
          culprit = inner
          return SetteeError(.invalidQuery, sumFailure)
        }
      } catch {
        return [
          "error": "builtin_reduce_error", "reason": .string(sumFailure), "caused_by": culprit,
        ]
      }
    }
    return total
  }

  /// `a + b` for `_sum`: numbers (integers stay integers while they fit), arrays element
  /// by element, objects member by member; a number with an array adds to its first
  /// element, as CouchDB's `sum_values` does (`[n]` summed with the array).
  static func add(_ a: JSON, _ b: JSON, error: (JSON) -> SetteeError) throws -> JSON {
    switch (a, b) {
    case (.int(let x), .int(let y)):
      let (sum, overflow) = x.addingReportingOverflow(y)
      return overflow ? .double(Double(x) + Double(y)) : .int(sum)
    case (.int, .double), (.double, .int), (.double, .double), (.largeInteger, .int),
      (.largeInteger, .double), (.int, .largeInteger), (.double, .largeInteger),
      (.largeInteger, .largeInteger):
      return .double((a.doubleValue ?? 0) + (b.doubleValue ?? 0))
    case (.int(0), .object):
      return try add(b, zero(like: b), error: error)
    case (.int, .array), (.double, .array), (.largeInteger, .array):
      return try add(.array([a]), b, error: error)
    case (.array, .int), (.array, .double), (.array, .largeInteger):
      return try add(a, .array([b]), error: error)
    case (.array(let x), .array(let y)):
      var result: [JSON] = []
      for index in 0..<max(x.count, y.count) {
        let left = index < x.count ? x[index] : .int(0)
        let right = index < y.count ? y[index] : .int(0)
        guard left.isNumber else { throw error(left) }
        guard right.isNumber else { throw error(right) }
        result.append(try add(left, right, error: error))
      }
      return .array(result)
    case (.object(let x), .object(let y)):
      var result = x
      for member in y {
        result[member.key] = try add(
          result[member.key] ?? zero(like: member.value), member.value, error: error)
      }
      return .object(result)
    default:
      throw error(b)
    }
  }

  /// Zero of the same shape as `value` (checking that it holds only numbers).
  static func zero(like value: JSON) -> JSON {
    switch value {
    case .array: .array([])
    case .object: .object([:])
    default: .int(0)
    }
  }

  static func stats(of value: JSON, error: () -> SetteeError) throws -> JSON {
    switch value {
    case .int, .double, .largeInteger:
      let number = value.doubleValue ?? 0
      return [
        "sum": value, "count": 1, "min": value, "max": value,
        "sumsqr": .double(number * number),
      ]
    case .array(let elements):
      return .array(
        try elements.map { element in
          guard element.isNumber else { throw error() }
          return try stats(of: element, error: error)
        })
    default:
      throw error()
    }
  }

  static func combineStats(_ a: JSON, _ b: JSON) throws -> JSON {
    let failure = { (_: JSON) in
      SetteeError(
        .invalidQuery, "_stats: partial results of different shapes (numbers and arrays mixed)")
    }
    switch (a, b) {
    case (.array(let x), .array(let y)):
      var result: [JSON] = []
      for index in 0..<max(x.count, y.count) {
        if index >= x.count {
          result.append(y[index])
        } else if index >= y.count {
          result.append(x[index])
        } else {
          result.append(try combineStats(x[index], y[index]))
        }
      }
      return .array(result)
    case (.object(let x), .object(let y)):
      func number(_ object: JSONObject, _ name: String) -> JSON { object[name] ?? .int(0) }
      let minimum =
        JSONCollation.compare(number(x, "min"), number(y, "min")) <= 0
        ? number(x, "min") : number(y, "min")
      let maximum =
        JSONCollation.compare(number(x, "max"), number(y, "max")) >= 0
        ? number(x, "max") : number(y, "max")
      return [
        "sum": try add(number(x, "sum"), number(y, "sum"), error: failure),
        "count": try add(number(x, "count"), number(y, "count"), error: failure),
        "min": minimum, "max": maximum,
        "sumsqr": .double(
          (number(x, "sumsqr").doubleValue ?? 0) + (number(y, "sumsqr").doubleValue ?? 0)),
      ]
    default:
      throw failure(b)
    }
  }
}

/// Reduces one group's rows as they stream: every ``ViewReduce/chunkSize`` rows become a
/// partial result, and the partials are rereduced at the end.
package struct GroupReducer {
  let reduce: ViewReduce
  var keys: [JSON] = []
  var ids: [String] = []
  var values: [JSON] = []
  var partials: [JSON] = []

  package init(reduce: ViewReduce) { self.reduce = reduce }

  /// Adds a row, reducing a chunk once it is full.
  package mutating func add(key: JSON, id: String, value: JSON) throws {
    keys.append(key)
    ids.append(id)
    values.append(value)
    if values.count == ViewReduce.chunkSize { try flush() }
  }

  private mutating func flush() throws {
    partials.append(try reduce.reduce(keys: keys, ids: ids, values: values))
    keys.removeAll(keepingCapacity: true)
    ids.removeAll(keepingCapacity: true)
    values.removeAll(keepingCapacity: true)
  }

  /// The group's reduced value.
  package mutating func finish() throws -> JSON {
    if partials.isEmpty {
      return reduce.finished(try reduce.reduce(keys: keys, ids: ids, values: values))
    }
    if !values.isEmpty { try flush() }
    return reduce.finished(partials.count == 1 ? partials[0] : try reduce.rereduce(partials))
  }
}

extension JSON {
  /// Whether this is a number (an integer or not).
  package var isNumber: Bool {
    switch self {
    case .int, .double, .largeInteger: true
    default: false
    }
  }
}
