/// An index as CouchDB 3.5's Mango planner sees it: `_all_docs`, or a JSON index with its
/// columns and partial filter.
package struct MangoIndex: Sendable, Hashable {
  /// The design document; `nil` for `_all_docs`.
  package var designDocument: String?
  /// The index name (`_all_docs` for the index of ids).
  package var name: String
  /// The indexed fields, each as path components, in order.
  package var columns: [[String]]
  /// Only documents that match it are in the index (CouchDB's `partial_filter_selector`).
  package var partialFilter: MangoSelector?

  /// The index CouchDB keeps of every document by id.
  package static let allDocs = MangoIndex(
    designDocument: nil, name: "_all_docs", columns: [["_id"]], partialFilter: nil)

  /// A JSON index.
  package init(
    designDocument: String?, name: String, columns: [[String]], partialFilter: MangoSelector?
  ) {
    self.designDocument = designDocument
    self.name = name
    self.columns = columns
    self.partialFilter = partialFilter
  }

  /// A Settee JSON index as CouchDB's planner sees it: its partial filter read as CouchDB
  /// reads it.
  package init(_ definition: IndexDefinition) throws {
    self.init(
      designDocument: definition.designDocumentID, name: definition.name,
      columns: definition.fields.map(\.components),
      partialFilter: try definition.partialFilter.map { try MangoSelector.parse($0.json) })
  }

  /// The document's key in this index (its columns' values; its id's for `_all_docs`),
  /// or `nil` when the index does not hold it: a column missing, or its partial filter
  /// not matched (CouchDB's `get_index_entries`).
  package func key(_ document: JSON) throws -> [JSON]? {
    var key: [JSON] = []
    for column in columns {
      guard case .found(let value) = MangoMatcher.lookup(document, column) else { return nil }
      key.append(value)
    }
    if let partialFilter, !(try MangoMatcher.matches(partialFilter, document)) { return nil }
    return key
  }

  /// Whether this is `_all_docs`.
  package var isAllDocs: Bool { designDocument == nil }
}

/// The range of one index column a selector allows (`mango_idx_view:range`): from a low
/// bound to a high bound, either of which may be open (`min`/`max`).
package struct MangoRange: Sendable, Hashable {
  /// A bound: below or above every value, or a value.
  package enum Bound: Sendable, Hashable {
    case min, max
    case value(JSON)
  }
  /// `$gt`, `$gte` or `$eq`.
  package var lowOperator: MangoSelector.Comparison
  package var low: Bound
  /// `$lt`, `$lte` or `$eq`.
  package var highOperator: MangoSelector.Comparison
  package var high: Bound

  /// Every value.
  package static let unbounded = MangoRange(
    lowOperator: .gt, low: .min, highOperator: .lt, high: .max)

  /// Whether the range holds one value (`$eq`).
  package var isEquality: Bool { lowOperator == .eq && highOperator == .eq }
}
