extension Matcher {
  /// Runs a whole query over documents in memory: filter, sort, skip, limit, project.
  /// Deleted documents and design documents (`_design/…`) are never results, as in
  /// CouchDB's `_find`.
  ///
  /// - Complexity: O(n log n) in the number of documents.
  ///
  /// - Throws: ``SetteeError`` with code `limitExceeded` when a `$regex` runs too long.
  package static func find(_ query: FindQuery, in documents: [Document]) throws -> [Document] {
    // Each matching document with its sort keys, read once (not once per comparison).
    var matching: [(document: Document, keys: [JSON?])] = []
    for document in documents where !document.isDeleted && !Document.isDesignID(document.id) {
      let json = JSON.object(document.json)
      guard try matches(query.selector, json) else { continue }
      matching.append((document, query.sort.map { sortKey(json, $0) }))
    }
    matching.sort { sortsBefore($0, $1, by: query.sort) }
    var sorted = matching.map(\.document)
    if let position = query.position {
      sorted.removeAll { !position.precedes($0, sort: query.sort) }
    }
    var result = sorted.dropFirst(query.skip)
    if query.limit > 0 { result = result.prefix(query.limit) }
    guard let fields = query.fields else { return Array(result) }
    return result.map { project($0, fields) }
  }

  /// The sort key of one document for one sort field; `nil` when the field is missing
  /// (which sorts before everything, `null` included).
  package static func sortKey(_ document: JSON, _ field: FindQuery.SortField) -> JSON? {
    let values = PathResolver.sortValues(document, field.path)
    guard var best = values.first else { return nil }
    for value in values.dropFirst() {
      let order = JSONCollation.compare(value, best)
      if field.descending ? order > 0 : order < 0 { best = value }
    }
    return best
  }

  /// The order of results: each sort field in turn (`keys`: a document's ``sortKey(_:_:)``
  /// for each), then `_id` in the direction of the last sort field (ascending without a
  /// sort), as an index that holds `_id` last orders them.
  static func sortsBefore(
    _ lhs: (document: Document, keys: [JSON?]), _ rhs: (document: Document, keys: [JSON?]),
    by sort: [FindQuery.SortField]
  ) -> Bool {
    for (index, field) in sort.enumerated() {
      let order = compareKeys(lhs.keys[index], rhs.keys[index])
      if order != 0 { return field.descending ? order > 0 : order < 0 }
    }
    let order = JSONCollation.compareUTF8(lhs.document.id, rhs.document.id)
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
  ///
  /// A path reads the document as a selector does: a field the document lacks is left out
  /// (its parent too, when nothing else of it is asked for); a numeric component picks an
  /// array element, kept under its index as CouchDB's projection keeps it
  /// (`tags.0` → `{"tags": {"0": "pilot"}}`); any other name reaches into each object of
  /// an array (`pets.name` → `{"pets": [{"name": …}, …]}`), unless element numbers at the
  /// same array picked something.
  package static func project(_ document: Document, _ fields: [FieldPath]) -> Document {
    var projected = document
    projected.body =
      project(.object(document.body), fields.map { $0.components[...] })?.objectValue ?? [:]
    return projected
  }

  static func project(_ value: JSON, _ paths: [ArraySlice<String>]) -> JSON? {
    if paths.contains(where: \.isEmpty) { return value }
    switch value {
    case .object(let object):
      let members = projectMembers(paths) { object[$0] }
      return members.isEmpty ? nil : .object(members)
    case .array(let elements):
      // Element numbers pick elements; when they pick something, other names at the same
      // array are left out (one value cannot be both an object and an array).
      let indexed = paths.filter { FieldPath.arrayIndexOf($0.first!) != nil }
      let members = projectMembers(indexed) { name -> JSON? in
        // (JSON is ExpressibleByNilLiteral: a bare nil here would be JSON's null.)
        guard let index = FieldPath.arrayIndexOf(name), index < elements.count else {
          return Optional<JSON>.none
        }
        return elements[index]
      }
      if !members.isEmpty { return .object(members) }
      let named = paths.filter { FieldPath.arrayIndexOf($0.first!) == nil }
      guard !named.isEmpty else { return nil }
      let projected = elements.compactMap { element -> JSON? in
        if case .object = element { return project(element, named) }
        return nil
      }
      return projected.isEmpty ? nil : .array(projected)
    default:
      return nil
    }
  }

  /// The projections below each first component, in CouchDB's order: a member comes
  /// where the first path under it that finds something on its own comes (`a.0`, `b`, `a`
  /// on an `a` without element 0: `b` before `a`). `member` reads a component's value.
  private static func projectMembers(
    _ paths: [ArraySlice<String>], member: (String) -> JSON?
  ) -> JSONObject {
    var found: [(position: Int, name: String, value: JSON)] = []
    var done = Set<[UInt8]>()  // names compare byte for byte, as object lookups do
    for (index, path) in paths.enumerated() {
      let name = path.first!
      guard done.insert(Array(name.utf8)).inserted, let value = member(name) else { continue }
      let under = paths.indices.filter { paths[$0].first!.utf8.elementsEqual(name.utf8) }
      guard let projected = project(value, under.map { paths[$0].dropFirst() }) else { continue }
      let position =
        under.count == 1
        ? index
        : under.first { project(value, [paths[$0].dropFirst()]) != nil } ?? index
      found.append((position, name, projected))
    }
    var result = JSONObject()
    if found.count > 1 { found.sort { $0.position < $1.position } }
    for member in found { result[member.name] = member.value }
    return result
  }
}
