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
  /// What CouchDB's `_find` response would warn about: a `use_index` that could not be
  /// used (the query ran without it), or a query that no index serves.
  public var warning: String?
  /// One entry per index considered, with why it was or was not chosen.
  public var candidates: [Candidate]
  /// Why this plan.
  public var reason: String { why.text }
  var why: Why
  /// The SQL that runs, with `?` for bound values.
  public var sql: String { statement.text }
  /// The bound values: text and numbers as SQL literals, BLOBs (collation keys) in hex.
  public var arguments: [String] {
    statement.arguments.map { value in
      switch value.storage {
      case .blob(let data):
        "x'"
          + data.map {
            String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16)
          }.joined() + "'"
      default: value.description
      }
    }
  }

  var statement: SQLFragment
  let choice: QueryPlanner.Choice
  let collectionID: Int64

  /// An index that was considered.
  public struct Candidate: Sendable, Hashable {
    /// The index name.
    public var index: String
    /// Whether the index can serve the query.
    public var usable: Bool
    /// For a usable index: how many entries its conditions select, counted up to a cap.
    public var estimatedEntries: Int?
    /// Why it was or was not chosen.
    public var reason: String { why.text }
    var why: Why
  }

  /// A reason, kept as data and written out only when asked for (`explain`): every query
  /// is planned, few are explained, and the text cost a tenth of a small query.
  indirect enum Why: Sendable, Hashable {
    /// Fixed text (a literal, which costs nothing to keep).
    case fixed(String)
    /// Documents looked up by `_id` through the built-in id index (CouchDB's `_all_docs`).
    case allDocs
    case textIndex(String)
    case noConditionOnFirstField(FieldPath)
    case selects(entries: Int, estimated: Bool)
    case covering(String)
    case union(entries: Int)
    case fewest(String, entries: Int)
    /// The one index that narrows the selector, by equality: its entries were not counted.
    case only(String)
    case sortOrder(String)
    case narrowsLittle(String)
    /// The plan it would have run, and why SQL cannot check the selector.
    case filteredInSwift(Why, because: String)

    var text: String {
      func quoted(_ name: String) -> String { JSONWriter.string(.string(name)) }
      switch self {
      case .fixed(let text): return text
      case .allDocs: return "the built-in _id index (CouchDB's _all_docs) finds the documents by id"
      case .textIndex(let name):
        return
          "the TEXT index \(quoted(name)) finds the documents that match $text; the rest of the selector filters them"
      case .noConditionOnFirstField(let field):
        return "no condition of the selector narrows its first field \(quoted(field.description))"
      case .selects(let entries, let estimated):
        return estimated
          ? "selects about \(entries) entries (by the statistics counted when it was built)"
          : "selects \(entries) entries"
      case .covering(let name):
        return
          "index \(quoted(name)) holds every field of the selector, sort and projection: the query reads only its entries"
      case .union(let entries):
        return "each branch of $or is narrowed by an index (\(entries) entries in all)"
      case .fewest(let name, let entries):
        return "index \(quoted(name)) selects the fewest entries (\(entries))"
      case .only(let name):
        return
          "index \(quoted(name)) is the only one that narrows the selector, by equality on its first field"
      case .sortOrder(let name):
        return
          "index \(quoted(name)) gives the sort order, so results stream in order without a sort"
      case .narrowsLittle(let name):
        return "index \(quoted(name)) narrows the selector, though not much"
      case .filteredInSwift(let base, let reason):
        return base.text + "; \(reason), so the matcher checks the selector in Swift"
      }
    }
  }

  /// The plan as JSON, for `settee explain`.
  public var json: JSON {
    [
      "index": indexes.isEmpty
        ? .null : (indexes.count == 1 ? .string(indexes[0]) : .array(indexes.map { .string($0) })),
      "scan": indexes.isEmpty ? "collection" : (indexes.count == 1 ? "index" : "index union"),
      "sorted_by_index": .bool(sortedByIndex),
      "filtered_in_swift": .bool(filteredInSwift),
      "covering": .bool(covering),
      "reason": .string(reason),
      "candidates": .array(
        candidates.map { candidate in
          var object: JSONObject = [
            "index": .string(candidate.index), "usable": .bool(candidate.usable),
            "reason": .string(candidate.reason),
          ]
          if let entries = candidate.estimatedEntries {
            object["estimated_entries"] = .int(Int64(entries))
          }
          return .object(object)
        }),
      "sql": .string(sql),
      "arguments": .array(arguments.map { .string($0) }),
      "warning": warning.map(JSON.string) ?? .null,
    ]
  }
}
