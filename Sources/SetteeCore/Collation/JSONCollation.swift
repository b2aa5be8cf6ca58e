/// The one total order over JSON values that queries and sorting use (SPEC section 2):
/// null < false < true < numbers < strings < arrays < objects.
///
/// Numbers compare by value (`1 == 1.0`, and 64-bit integers exactly against doubles;
/// larger integers as their nearest double);
/// strings by Unicode code point (byte order of UTF-8, as SQLite's BINARY collation);
/// arrays element by element; objects member by member, name before value.
package enum JSONCollation {
  /// The type's place in the order: null 0, false 1, true 2, numbers 3, strings 4,
  /// arrays 5, objects 6.
  package static func rank(_ value: JSON) -> Int {
    switch value {
    case .null: 0
    case .bool(false): 1
    case .bool(true): 2
    case .int, .double, .largeInteger: 3
    case .string: 4
    case .array: 5
    case .object: 6
    }
  }

  /// -1, 0 or 1 as `lhs` sorts before, with, or after `rhs`.
  package static func compare(_ lhs: JSON, _ rhs: JSON) -> Int {
    let (left, right) = (rank(lhs), rank(rhs))
    if left != right { return left < right ? -1 : 1 }
    switch (lhs, rhs) {
    // An integer past 64 bits compares as its nearest double, as SQLite reads it.
    case (.largeInteger, _): return compare(.double(lhs.doubleValue ?? 0), rhs)
    case (_, .largeInteger): return compare(lhs, .double(rhs.doubleValue ?? 0))
    case (.int(let a), .int(let b)): return a == b ? 0 : (a < b ? -1 : 1)
    case (.double(let a), .double(let b)): return a == b ? 0 : (a < b ? -1 : 1)
    case (.int(let a), .double(let b)): return compare(a, b)
    case (.double(let a), .int(let b)): return -compare(b, a)
    case (.string(let a), .string(let b)): return compareUTF8(a, b)
    case (.array(let a), .array(let b)):
      for (x, y) in zip(a, b) {
        let order = compare(x, y)
        if order != 0 { return order }
      }
      return a.count == b.count ? 0 : (a.count < b.count ? -1 : 1)
    case (.object(let a), .object(let b)):
      for (x, y) in zip(a, b) {
        let names = compareUTF8(x.key, y.key)
        if names != 0 { return names }
        let values = compare(x.value, y.value)
        if values != 0 { return values }
      }
      return a.count == b.count ? 0 : (a.count < b.count ? -1 : 1)
    default: return 0  // same rank: null, false, true
    }
  }

  /// Whether two values are equal in this order (`1` equals `1.0`).
  package static func equal(_ lhs: JSON, _ rhs: JSON) -> Bool { compare(lhs, rhs) == 0 }

  /// Compares an integer with a double exactly, without rounding the integer.
  static func compare(_ integer: Int64, _ double: Double) -> Int {
    if double >= 9_223_372_036_854_775_808.0 { return -1 }
    if double < -9_223_372_036_854_775_808.0 { return 1 }
    let floor = double.rounded(.down)
    let whole = Int64(floor)
    if integer != whole { return integer < whole ? -1 : 1 }
    return double > floor ? -1 : 0
  }

  /// Code-point order, which is UTF-8 byte order.
  static func compareUTF8(_ lhs: String, _ rhs: String) -> Int {
    var left = lhs.utf8.makeIterator()
    var right = rhs.utf8.makeIterator()
    while true {
      switch (left.next(), right.next()) {
      case (nil, nil): return 0
      case (nil, _): return -1
      case (_, nil): return 1
      case (let a?, let b?) where a != b: return a < b ? -1 : 1
      default: continue
      }
    }
  }
}
