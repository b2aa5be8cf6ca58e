import Foundation
import GRDB
import SetteeCore

/// Answers a query from a JSON index alone (SPEC section 3, "covering indexes"): its
/// entries hold each field's collation key and value, the document id and revision, so
/// when the index holds every field of the selector, the sort and the projection, no
/// document is read.
///
/// Only an index with one entry per document qualifies (no array values), so its key
/// predicates are exact rather than a superset; the projection must name top-level fields.
enum CoveringPlan {
  /// Whether `index` can answer `query` by itself.
  static func covers(_ index: StoredIndex, _ query: FindQuery) -> Bool {
    guard index.multiDocuments == 0, let fields = query.fields else { return false }
    let indexed = index.definition.fields
    let projectionCovered = fields.allSatisfy { field in
      field.components == ["_id"] || field.components == ["_rev"]
        || (field.components.count == 1 && indexed.contains(field))
    }
    return projectionCovered && query.sort.allSatisfy { indexed.contains($0.path) }
      && filter(query.selector, indexed) != nil
  }

  /// The exact predicate on the entry table `x` for a selector, or `nil` when some
  /// condition is not on an indexed field or cannot be decided from keys.
  static func filter(_ selector: Selector, _ fields: [FieldPath]) -> SQLFragment? {
    switch selector {
    case .all: return SQLFragment("1")
    case .and(let parts):
      let compiled = parts.compactMap { filter($0, fields) }
      return compiled.count == parts.count ? .and(compiled) : nil
    case .or(let parts):
      let compiled = parts.compactMap { filter($0, fields) }
      return compiled.count == parts.count ? .or(compiled) : nil
    case .not(let inner):
      return filter(inner, fields).map { $0.grouped + SQLFragment(" IS NOT 1") }
    case .text: return nil
    case .condition(let path, let condition):
      guard let position = fields.firstIndex(of: path) else { return nil }
      return exact(condition, column: StoredIndex.entryKeyColumn(position))
    }
  }

  /// A condition on a key column whose values are never arrays.
  static func exact(_ condition: Condition, column: SQLFragment) -> SQLFragment? {
    func blob(_ bytes: [UInt8]) -> SQLFragment { .value(Data(bytes)) }
    func range(_ low: [UInt8], _ high: [UInt8]) -> SQLFragment {
      SQLFragment("(") + column + SQLFragment(" >= ") + blob(low) + SQLFragment(" AND ") + column
        + SQLFragment(" < ") + blob(high) + SQLFragment(")")
    }
    func isArray(_ value: JSON) -> Bool { if case .array = value { true } else { false } }
    let objects: [UInt8] = [Tag.object]
    let end: [UInt8] = [Tag.wholeArray]
    switch condition {
    case .equal(let value):
      return isArray(value)
        ? SQLFragment("0") : column + SQLFragment(" = ") + blob(CollationKey.encode(value))
    case .in(let values):
      let scalars = values.filter { !isArray($0) }
      guard !scalars.isEmpty else { return SQLFragment("0") }
      return column + SQLFragment(" IN (")
        + .joined(scalars.map { blob(CollationKey.encode($0)) }, separator: ", ") + SQLFragment(")")
    case .greaterThan(let value), .greaterThanOrEqual(let value):
      switch value {
      case .null: return range([Tag.false], end)
      case .array: return range(objects, end)  // only objects sort after an array
      default:
        return SQLFragment("(") + column
          + (condition.isStrict ? SQLFragment(" > ") : SQLFragment(" >= "))
          + blob(CollationKey.encode(value)) + SQLFragment(" AND ") + column + SQLFragment(" < ")
          + blob(end)
          + SQLFragment(")")
      }
    case .lessThan(let value), .lessThanOrEqual(let value):
      switch value {
      case .null: return SQLFragment("0")
      case .array: return range([Tag.false], [Tag.array])  // every non-null value that is not an object
      default:
        return SQLFragment("(") + column + SQLFragment(" >= ") + blob([Tag.false])
          + SQLFragment(" AND ")
          + column
          + (condition.isStrict ? SQLFragment(" < ") : SQLFragment(" <= "))
          + blob(CollationKey.encode(value))
          + SQLFragment(")")
      }
    case .exists:
      return column + SQLFragment(" > ") + blob(StoredIndex.missingKey)
    case .type(let type):
      // Covered fields hold no arrays.
      return type == .array ? SQLFragment("0") : IndexPredicates.typePredicate(type, column: column)
    case .beginsWith(let prefix):
      let low = CollationKey.stringPrefix(prefix)
      return range(low, low + [0xFF])
    case .size, .all, .elementMatch, .allMatch:
      return SQLFragment("0")  // they need an array, and covered fields hold none
    case .regex, .mod, .keyMapMatch:
      return nil
    }
  }

  /// The SQL that reads the answer from the entry table: id, rev, then each projected
  /// field's value.
  static func sql(_ index: StoredIndex, _ query: FindQuery) -> SQLFragment? {
    guard var filter = filter(query.selector, index.definition.fields), let fields = query.fields
    else {
      return nil
    }
    if let position = query.position {
      filter += SQLFragment(" AND ") + after(position, query.sort, index)
    }
    let projected = projectedFields(index, fields).compactMap {
      index.definition.fields.firstIndex(of: $0)
    }
    var columns = [SQLFragment("x.id"), SQLFragment("x.rev")]
    columns += projected.map { SQLFragment("x.") + StoredIndex.valueColumn($0) }
    return SQLFragment("SELECT ") + .joined(columns, separator: ", ") + SQLFragment(" FROM ")
      + index.table
      + SQLFragment(" x WHERE ") + SQLFragment.notDesignID(SQLFragment("x.id"))
      + SQLFragment(" AND ")
      + filter + orderBy(query.sort, index)
      + QueryPlanner.limit(query)
  }

  /// Entries that come after a bookmark's position in the order of `sort`, on their key
  /// columns: ``QueryPlanner/after(_:sort:)`` for documents, where an index with one entry
  /// a document holds each sort field's key as the document's sort key, and a missing
  /// field's key (``StoredIndex/missingKey``) sorts before every other, as a missing sort
  /// key does.
  static func after(_ position: FindBookmark, _ sort: [FindQuery.SortField], _ index: StoredIndex)
    -> SQLFragment
  {
    guard case .after(let keys, let id) = position else { return SQLFragment("1") }
    var branches: [SQLFragment] = []
    var equal: [SQLFragment] = []
    for (field, value) in zip(sort.filter { !$0.isRelevance }, keys) {
      guard let column = index.definition.fields.firstIndex(of: field.path) else {
        return SQLFragment("0")  // not covered: ``covers(_:_:)`` refuses such a sort
      }
      let key = StoredIndex.entryKeyColumn(column)
      let bound = SQLFragment.value(Data(value.map(CollationKey.encode) ?? StoredIndex.missingKey))
      branches.append(
        .and(equal + [key + (field.descending ? SQLFragment(" < ") : SQLFragment(" > ")) + bound]))
      equal.append(key + SQLFragment(" = ") + bound)
    }
    let idLater =
      SQLFragment("x.id")
      + (sort.last?.descending == true ? SQLFragment(" < ") : SQLFragment(" > ")) + .value(id)
    branches.append(.and(equal + [idLater]))
    return .or(branches)
  }

  /// ` ORDER BY …` of the entries: the sort's key columns (every sort field is indexed,
  /// see ``covers(_:_:)``), then the document id.
  static func orderBy(_ sort: [FindQuery.SortField], _ index: StoredIndex) -> SQLFragment {
    var keys = sort.map { field -> SQLFragment in
      let position = index.definition.fields.firstIndex(of: field.path)!
      return StoredIndex.entryKeyColumn(position)
        + (field.descending ? SQLFragment(" DESC") : SQLFragment(""))
    }
    keys.append(
      SQLFragment("x.id")
        + (sort.last?.descending == true ? SQLFragment(" DESC") : SQLFragment("")))
    return SQLFragment(" ORDER BY ") + .joined(keys, separator: ", ")
  }

  /// The projected fields that come from value columns (`_id` and `_rev` come anyway).
  static func projectedFields(_ index: StoredIndex, _ fields: [FieldPath]) -> [FieldPath] {
    fields.filter { field in
      field.components != ["_id"] && field.components != ["_rev"]
        && index.definition.fields.contains(field)
    }
  }

  /// A result row as a document: `_id`, `_rev` and the projected fields, in `fields` order.
  static func document(_ row: Row, _ index: StoredIndex, _ query: FindQuery) throws -> Document {
    var body = JSONObject()
    var column = 2
    let id: String = try row.value(0)
    for field in projectedFields(index, query.fields ?? []) {
      if let text: String = try row.value(column), body[field.components[0]] == nil {
        do {
          body[field.components[0]] = try JSONParser.parse(text)
        } catch {
          throw DocumentReader.damaged(
            id, "its entry in index \(quoted(index.definition.name)) holds a value that is not JSON"
          )
        }
      }
      column += 1
    }
    return Document(
      id: id, rev: try DocumentReader.storedRevision(try row.value(1), documentID: id), body: body)
  }
}
