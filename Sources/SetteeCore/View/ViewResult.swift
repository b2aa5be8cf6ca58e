/// One row of a view query: an emitted key and value and the document that emitted them,
/// or, in a reduce query, a group's key and reduced value (no document).
public struct ViewRow: Sendable, Hashable {
  /// The emitted key (in a grouped reduce, the group's key; `null` without grouping).
  public var key: JSON
  /// The emitted value, or the reduced value.
  public var value: JSON
  /// The id of the emitting document; `nil` in a reduce query.
  public var id: String?
  /// The emitting document when the query asked for it (`includeDocs`), or the document
  /// the row's value links to (a value with an `_id`, CouchDB's linked documents); a
  /// tombstone (`isDeleted`, printed `"doc": null`) when that document is gone.
  public var document: Document?
  /// For an all-documents query by `keys`: `"not_found"` for a key that names no document
  /// (the row then has only `key` and `error`, as in CouchDB).
  public var error: String?

  /// A row.
  package init(key: JSON, value: JSON, id: String? = nil, document: Document? = nil) {
    self.key = key
    self.value = value
    self.id = id
    self.document = document
  }

  /// The row in CouchDB's shape: `{"id": …, "key": …, "value": …, "doc": …}` (reduce rows
  /// without `id`).
  public var json: JSON {
    var members: [(String, JSON)] = []
    if let error { return ["key": key, "error": .string(error)] }
    if let id { members.append(("id", .string(id))) }
    members.append(("key", key))
    members.append(("value", value))
    if let document { members.append(("doc", document.isDeleted ? .null : .object(document.json))) }
    return .object(JSONObject(members))
  }
}

/// A document whose map function threw: it emits nothing until it changes (or the view's
/// version does), and the error is reported with every query of the view.
public struct ViewMapError: Sendable, Hashable {
  /// The document's id.
  public var documentID: String
  /// What the map function threw.
  public var message: String

  /// An error record.
  package init(documentID: String, message: String) {
    self.documentID = documentID
    self.message = message
  }
}

/// The answer to a view or all-documents query.
public struct ViewResult: Sendable, Hashable {
  /// The rows, in the query's order.
  public var rows: [ViewRow]
  /// How many rows the view holds (for all-documents: live documents), whatever the
  /// query's range.
  public var totalRows: Int
  /// How many rows come before the first one returned, in the query's direction; `nil`
  /// unless the query asked for it (``ViewQuery/includeOffset``) or reduced.
  public var offset: Int?
  /// The collection's change sequence number the view had caught up with.
  public var updateSeq: Int64
  /// Documents whose map function threw (they emit nothing), oldest first.
  public var errors: [ViewMapError]
  /// Whether the rows are reduced (groups, without document ids).
  public var isReduced: Bool
  /// Why the last background update of the view (a query with `stale: .updateAfter`)
  /// failed, reported once, with the next result; `nil` when it did not.
  public var updateError: SetteeError?

  /// A result.
  package init(
    rows: [ViewRow], totalRows: Int, offset: Int? = nil, updateSeq: Int64,
    errors: [ViewMapError] = [], isReduced: Bool = false
  ) {
    self.rows = rows
    self.totalRows = totalRows
    self.offset = offset
    self.updateSeq = updateSeq
    self.errors = errors
    self.isReduced = isReduced
  }

  /// The result in CouchDB's shape: `{"total_rows": N, "offset": K, "rows": […]}`; a
  /// reduce result is `{"rows": […]}`; map errors, if any, as `"errors": [{"id", "reason"}]`.
  public var json: JSON {
    var members: [(String, JSON)] = []
    if !isReduced {
      members.append(("total_rows", .int(Int64(totalRows))))
      members.append(("offset", .int(Int64(offset ?? 0))))
    }
    members.append(("rows", .array(rows.map(\.json))))
    if let updateError {
      members.append(
        (
          "update_error",
          ["error": .string(updateError.code.name), "reason": .string(updateError.reason)]
        ))
    }
    if !errors.isEmpty {
      members.append(
        (
          "errors",
          .array(
            errors.map { ["id": .string($0.documentID), "reason": .string($0.message)] })
        ))
    }
    return .object(JSONObject(members))
  }
}
