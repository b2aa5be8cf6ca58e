extension Matcher {
  /// Runs a whole query over documents in memory: filter, sort, skip, limit, project.
  ///
  /// - Complexity: O(n log n) in the number of documents.
  ///
  /// - Throws: ``SetteeError`` with code `limitExceeded` when a `$regex` runs too long.
  public static func find(_ query: FindQuery, in documents: [Document]) throws -> [Document] {
    var matching = try documents.filter {
      try !$0.isDeleted && matches(query.selector, .object($0.json))
    }
    matching.sort { sortsBefore($0, $1, by: query.sort) }
    var result = matching.dropFirst(query.skip)
    if query.limit > 0 { result = result.prefix(query.limit) }
    guard let fields = query.fields else { return Array(result) }
    return result.map { project($0, fields) }
  }

  /// The sort key of one document for one sort field; `nil` when the field is missing
  /// (which sorts before everything, `null` included).
  public static func sortKey(_ document: JSON, _ field: FindQuery.SortField) -> JSON? {
    let values = PathResolver.sortValues(document, field.path)
    guard var best = values.first else { return nil }
    for value in values.dropFirst() {
      let order = JSONCollation.compare(value, best)
      if field.descending ? order > 0 : order < 0 { best = value }
    }
    return best
  }

  /// The order of results: each sort field in turn, then `_id` in the direction of the last
  /// sort field (ascending without a sort), as an index that holds `_id` last orders them.
  static func sortsBefore(_ lhs: Document, _ rhs: Document, by sort: [FindQuery.SortField]) -> Bool
  {
    let (left, right) = (JSON.object(lhs.json), JSON.object(rhs.json))
    for field in sort {
      let order = compareKeys(sortKey(left, field), sortKey(right, field))
      if order != 0 { return field.descending ? order > 0 : order < 0 }
    }
    let order = JSONCollation.compareUTF8(lhs.id, rhs.id)
    return sort.last?.descending == true ? order > 0 : order < 0
  }

  static func compareKeys(_ lhs: JSON?, _ rhs: JSON?) -> Int {
    switch (lhs, rhs) {
    case (nil, nil): 0
    case (nil, _): -1
    case (_, nil): 1
    case (let a?, let b?): JSONCollation.compare(a, b)
    }
  }

  /// The document with only `fields` (and `_id`, `_rev`), members in the order of `fields`
  /// (CouchDB's rule; a covering index can answer it without the document).
  public static func project(_ document: Document, _ fields: [FieldPath]) -> Document {
    var projected = document
    projected.body =
      project(.object(document.body), fields.map { $0.components[...] })?.objectValue ?? [:]
    return projected
  }

  static func project(_ value: JSON, _ paths: [ArraySlice<String>]) -> JSON? {
    if paths.contains(where: \.isEmpty) { return value }
    switch value {
    case .object(let object):
      var result = JSONObject()
      var done = Set<[UInt8]>()  // names compare byte for byte, as object lookups do
      for path in paths {
        let name = path.first!
        guard done.insert(Array(name.utf8)).inserted, let member = object[name] else { continue }
        let below = paths.filter { $0.first!.utf8.elementsEqual(name.utf8) }.map { $0.dropFirst() }
        if let projected = project(member, below) { result[name] = projected }
      }
      return .object(result)
    case .array(let elements):
      // A path through an array of objects keeps each object's projection.
      return .array(
        elements.compactMap { element in
          if case .object = element { return project(element, paths) }
          return nil
        })
    default:
      return nil
    }
  }
}
