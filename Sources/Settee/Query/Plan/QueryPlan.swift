import GRDB
import SetteeCore

/// How a query runs: the SQL and the reasons for it, as `explain` reports them.
public struct QueryPlan: Sendable {
  /// The index the query reads through; `nil` for a scan of the collection.
  public var index: String?
  /// One line per index that was considered, with why it was or was not chosen.
  public var candidates: [String]
  /// Why this plan.
  public var reason: String
  /// The SQL that runs, with `?` for bound values.
  public var sql: String
  /// The bound values, for display.
  public var arguments: [String]

  let statement: SQLFragment
}

/// Turns a ``FindQuery`` into SQL over one collection.
///
/// A pure function of the query and the collection's index definitions.
enum QueryPlanner {
  static func plan(_ query: FindQuery, collectionID: Int64) throws -> QueryPlan {
    if query.selector.textClauseCount > 1 {
      throw SetteeError(.invalidQuery, "a query may hold one $text clause, not \(query.selector.textClauseCount)")
    }
    let selector = try SelectorCompiler.compile(query.selector)
    var statement = SQLFragment("SELECT d.id, d.rev, d.body FROM documents d WHERE d.cid = ")
      + .value(collectionID) + SQLFragment(" AND d.deleted = 0 AND ") + selector
    statement += orderBy(query.sort)
    statement += limit(query)
    return QueryPlan(
      index: nil, candidates: [], reason: "no index applies: the collection is scanned",
      sql: statement.text, arguments: statement.arguments.map(\.description), statement: statement)
  }

  /// `SELECT count(*)` over the same rows as `plan` (ignoring sort, skip and limit).
  static func count(_ query: FindQuery, collectionID: Int64) throws -> SQLFragment {
    SQLFragment("SELECT count(*) FROM documents d WHERE d.cid = ") + .value(collectionID)
      + SQLFragment(" AND d.deleted = 0 AND ") + (try SelectorCompiler.compile(query.selector))
  }

  static func orderBy(_ sort: [FindQuery.SortField]) -> SQLFragment {
    var keys: [SQLFragment] = sort.map { field in
      let path = JSONWriter.string(.array(field.path.components.map { .string($0) }))
      return SQLFragment("settee_sort_key(d.body, d.id, d.rev, ") + .value(path) + SQLFragment(", ")
        + .value(field.descending) + (field.descending ? SQLFragment(") DESC") : SQLFragment(")"))
    }
    keys.append(SQLFragment("d.id"))
    return SQLFragment(" ORDER BY ") + .joined(keys, separator: ", ")
  }

  static func limit(_ query: FindQuery) -> SQLFragment {
    SQLFragment(" LIMIT ") + .value(Int64(query.limit == 0 ? -1 : query.limit)) + SQLFragment(" OFFSET ")
      + .value(Int64(query.skip))
  }
}
