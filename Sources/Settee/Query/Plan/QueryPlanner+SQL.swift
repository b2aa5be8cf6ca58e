import Foundation
import GRDB
import SetteeCore

// Writing a plan's SQL from its choice: pure functions, tested without a database.
extension QueryPlanner {
  /// The condition that leaves design documents out, made once.
  private static let notDesignDocument = SQLFragment.notDesignID(SQLFragment("d.id"))

  /// The SQL for a choice: a pure function.
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

  /// A sort by `_id` is the id column's own order (UTF-8 bytes, the order of its key):
  /// SQLite can walk the id index for it and stop at the limit, where the key function
  /// parsed every matching body.
  static func orderBy(_ sort: [FindQuery.SortField]) -> SQLFragment {
    let sort = sort.filter { !$0.isRelevance }
    var keys: [SQLFragment] = sort.map { field in
      if field.path.components == ["_id"] {
        return SQLFragment("d.id") + (field.descending ? SQLFragment(" DESC") : SQLFragment(""))
      }
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
