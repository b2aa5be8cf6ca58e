import Foundation
import GRDB
import SetteeCore

/// Turns conditions into predicates on the key columns of a JSON index.
///
/// A predicate only has to hold for every entry of a matching document (a superset): the
/// full selector is checked again on the documents the index yields, so the index narrows
/// and the selector decides.
enum IndexPredicates {
  /// The most values of an `$in` an index reads by key.
  static let maxKeys = 1_000

  /// The predicate on key column `column` for `condition`, or `nil` when the index cannot
  /// narrow that condition.
  static func predicate(_ condition: Condition, column: SQLFragment) -> SQLFragment? {
    func blob(_ bytes: [UInt8]) -> SQLFragment { .value(Data(bytes)) }
    func key(_ value: JSON) -> SQLFragment { blob(CollationKey.encode(value)) }
    func between(_ low: [UInt8], _ high: [UInt8]) -> SQLFragment {
      SQLFragment("(") + column + SQLFragment(" >= ") + blob(low) + SQLFragment(" AND ") + column
        + SQLFragment(" < ") + blob(high) + SQLFragment(")")
    }
    func keys(_ value: JSON) -> [SQLFragment] {
      if case .array = value { return [key(value), blob(CollationKey.encodeWholeArray(value))] }
      return [key(value)]
    }
    let wholeArrays = CollationKey.wholeArrayTag
    switch condition {
    case .equal(let value):
      return column + SQLFragment(" IN (") + .joined(keys(value), separator: ", ")
        + SQLFragment(")")
    case .in(let values):
      guard !values.isEmpty else { return SQLFragment("0") }
      // One bound key per value: past this, SQLite's limit on variables (32,766 in most
      // builds) comes near, and a scan with the list looked up in SQL serves better.
      guard values.count <= maxKeys else { return nil }
      return column + SQLFragment(" IN (") + .joined(values.flatMap(keys), separator: ", ")
        + SQLFragment(")")
    case .greaterThan(let value), .greaterThanOrEqual(let value):
      let op = condition.isStrict ? SQLFragment(" > ") : SQLFragment(" >= ")
      switch value {
      case .null: return between([Tag.false], [wholeArrays])
      case .array: return column + op + key(value)
      default:
        return SQLFragment("(") + column + op + key(value) + SQLFragment(" AND ") + column
          + SQLFragment(" < ") + blob([wholeArrays]) + SQLFragment(")")
      }
    case .lessThan(let value), .lessThanOrEqual(let value):
      let op = condition.isStrict ? SQLFragment(" < ") : SQLFragment(" <= ")
      switch value {
      case .null: return SQLFragment("0")
      case .array: return column + SQLFragment(" >= ") + blob([Tag.false])
      default:
        return SQLFragment("(") + column + SQLFragment(" >= ") + blob([Tag.false])
          + SQLFragment(" AND ")
          + column + op + key(value) + SQLFragment(")")
      }
    case .beginsWith(let prefix):
      let low = CollationKey.stringPrefix(prefix)
      return between(low, low + [0xFF])
    case .exists:
      return column + SQLFragment(" > ") + blob(StoredIndex.missingKey)
    case .type(let type):
      return typePredicate(type, column: column)
    case .all(let values):
      guard let first = values.first else { return SQLFragment("0") }
      return column + SQLFragment(" = ") + key(first)
    case .regex: return between([Tag.string], [Tag.array])
    case .mod: return between([Tag.number], [Tag.string])
    case .size, .elementMatch, .allMatch, .keyMapMatch: return nil
    }
  }
}

extension IndexPredicates {
  /// Keys of values of a JSON type: by the key's tag (whole-array entries for arrays).
  static func typePredicate(_ type: JSONType, column: SQLFragment) -> SQLFragment {
    func blob(_ bytes: [UInt8]) -> SQLFragment { .value(Data(bytes)) }
    func between(_ low: UInt8, _ high: UInt8) -> SQLFragment {
      SQLFragment("(") + column + SQLFragment(" >= ") + blob([low]) + SQLFragment(" AND ") + column
        + SQLFragment(" < ") + blob([high]) + SQLFragment(")")
    }
    switch type {
    case .null: return column + SQLFragment(" = ") + blob([Tag.null])
    case .boolean: return between(Tag.false, Tag.number)
    case .number: return between(Tag.number, Tag.string)
    case .string: return between(Tag.string, Tag.array)
    case .object: return between(Tag.object, Tag.wholeArray)
    case .array: return column + SQLFragment(" >= ") + blob([Tag.wholeArray])
    }
  }
}

extension Condition {
  var isEquality: Bool {
    switch self {
    case .equal, .in: true
    default: false
    }
  }

  var isStrict: Bool {
    switch self {
    case .lessThan, .greaterThan: true
    default: false
    }
  }
}

/// The type tags of index keys (``CollationKey/Tag``).
typealias Tag = CollationKey.Tag
