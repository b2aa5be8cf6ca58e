import SetteeCore

/// What CouchDB's `_find` response carries besides the documents.
public struct FindSummary: Sendable, Hashable {
  /// The token that continues the query after the last result (``FindQuery/bookmark``);
  /// the one given (or `"nil"`) when the page is empty.
  public var bookmark: String
  /// CouchDB's warnings: no index served the query, or the `use_index` was not used.
  public var warning: String?
  /// What the query read, when it asked (``FindQuery/executionStats``).
  public var executionStats: ExecutionStats?
  /// Whether CouchDB's response carries the bookmark: not when CouchDB reads nothing (a
  /// query in CouchDB's dialect whose range in its index is empty).
  public var showsBookmark = true

  init(bookmark: String, warning: String? = nil, executionStats: ExecutionStats? = nil) {
    self.bookmark = bookmark
    self.warning = warning
    self.executionStats = executionStats
  }
}

/// CouchDB's `execution_stats`.
public struct ExecutionStats: Sendable, Hashable {
  /// Index entries read (0 for a scan of the collection).
  public var totalKeysExamined = 0
  /// Documents read (0 when an index held everything the query needed).
  public var totalDocsExamined = 0
  /// Always 0: there is one copy of each document, no quorum to read.
  public var totalQuorumDocsExamined = 0
  /// Results returned.
  public var resultsReturned = 0
  /// Time from the start of the query to its last result, in milliseconds.
  public var executionTimeMs = 0.0

  /// CouchDB's JSON shape.
  public var json: JSON {
    [
      "total_keys_examined": .int(Int64(totalKeysExamined)),
      "total_docs_examined": .int(Int64(totalDocsExamined)),
      "total_quorum_docs_examined": .int(Int64(totalQuorumDocsExamined)),
      "results_returned": .int(Int64(resultsReturned)),
      "execution_time_ms": .double(executionTimeMs),
    ]
  }
}

/// A page of `_find` results: the documents and what CouchDB's response carries with them.
public struct FindResult: Sendable {
  /// The documents, in the query's order.
  public var documents: [Document]
  /// The token for the next page.
  public var bookmark: String
  /// CouchDB's warnings, if any.
  public var warning: String?
  /// What the query read, when it asked.
  public var executionStats: ExecutionStats?

  /// Whether ``json`` carries the bookmark (see `FindSummary`).
  var showsBookmark = true

  init(documents: [Document], summary: FindSummary) {
    self.documents = documents
    showsBookmark = summary.showsBookmark
    bookmark = summary.bookmark
    warning = summary.warning
    executionStats = summary.executionStats
  }

  /// CouchDB's `_find` response body: `docs`, `bookmark`, and `warning` and
  /// `execution_stats` when there are any.
  public var json: JSON {
    var object: JSONObject = ["docs": .array(documents.map { .object($0.json) })]
    if showsBookmark { object["bookmark"] = .string(bookmark) }
    if let warning { object["warning"] = .string(warning) }
    if let executionStats { object["execution_stats"] = executionStats.json }
    return .object(object)
  }
}
