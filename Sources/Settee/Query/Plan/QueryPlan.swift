import GRDB
import SetteeCore

/// How a query runs: the index, the SQL and the reasons, as `explain` reports them.
public struct QueryPlan: Sendable {
  /// The index the query reads through (several for an `$or` answered by a union); empty
  /// for a scan of the collection.
  public var indexes: [String]
  /// Whether an index gives the sort order, so no sorting step runs.
  public var sortedByIndex: Bool
  /// Whether the selector is checked in Swift, by the reference matcher, rather than in
  /// SQL: when its SQL nests deeper than SQLite's parser allows. Sorting, skip and limit
  /// then happen in Swift too.
  public var filteredInSwift = false
  /// Whether one index holds every field the query needs, so it is answered from the
  /// index entries without reading any document.
  public var covering: Bool { coveringIndex != nil }

  var coveringIndex: StoredIndex?
  /// One entry per index considered, with why it was or was not chosen.
  public var candidates: [Candidate]
  /// Why this plan.
  public var reason: String
  /// The SQL that runs, with `?` for bound values.
  public var sql: String { statement.text }
  /// The bound values: text and numbers as SQL literals, BLOBs (collation keys) in hex.
  public var arguments: [String] {
    statement.arguments.map { value in
      switch value.storage {
      case .blob(let data): "x'" + data.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined() + "'"
      default: value.description
      }
    }
  }

  var statement: SQLFragment
  let choice: QueryPlanner.Choice
  let collectionID: Int64

  /// An index that was considered.
  public struct Candidate: Sendable, Hashable {
    public var index: String
    public var usable: Bool
    /// For a usable index: how many entries its conditions select, counted up to a cap.
    public var estimatedEntries: Int?
    public var reason: String
  }

  /// The plan as JSON, for `settee explain`.
  public var json: JSON {
    [
      "index": indexes.isEmpty ? .null : (indexes.count == 1 ? .string(indexes[0]) : .array(indexes.map { .string($0) })),
      "scan": indexes.isEmpty ? "collection" : (indexes.count == 1 ? "index" : "index union"),
      "sorted_by_index": .bool(sortedByIndex),
      "filtered_in_swift": .bool(filteredInSwift),
      "covering": .bool(covering),
      "reason": .string(reason),
      "candidates": .array(candidates.map { candidate in
        var object: JSONObject = [
          "index": .string(candidate.index), "usable": .bool(candidate.usable), "reason": .string(candidate.reason),
        ]
        if let entries = candidate.estimatedEntries { object["estimated_entries"] = .int(Int64(entries)) }
        return .object(object)
      }),
      "sql": .string(sql),
      "arguments": .array(arguments.map { .string($0) }),
    ]
  }
}
