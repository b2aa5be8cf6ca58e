import Foundation
import Settee
import SetteeCore
import SetteeTestSupport
import Testing

/// The SQL path against an independent reference (`ReferenceQuery`, written from the
/// documentation alone, and `ProjectionModel`), on random documents and selectors. The
/// engine's own in-memory matcher is not the reference: the SQL path calls it.
@Suite("SQL path equals the reference")
struct DifferentialTests {
  enum Indexing: String, CaseIterable, Sendable {
    case none, single, compound, scalarSort, partial
  }

  /// The filter of the partial indexes of the `.partial` runs.
  static let partialFilterJSON: JSON = ["pet.species": "cat"]
  static let partialFilter = try! SelectorParser.parse(partialFilterJSON)

  /// The stored documents as the reference reads them (made once: they do not change
  /// while the queries run).
  struct Stored {
    var documents: [JSONObject]
    var bodies: [String: JSONObject]

    init(_ stored: [Document]) {
      documents = stored.map(\.json)
      bodies = Dictionary(uniqueKeysWithValues: stored.map { ($0.id, $0.body) })
    }
  }

  /// What the reference expects: ids in order, and (with `fields`) the projected bodies.
  static func expected(
    _ stored: Stored, selector: JSON, sort: JSON?, skip: Int, limit: Int,
    fields: [FieldPath]?
  ) -> (ids: [String], bodies: [JSONObject]) {
    let ids = ReferenceQuery.find(
      stored.documents, selector: selector, sort: sort, skip: skip, limit: limit)
    let bodies = ids.map { id in
      let body = stored.bodies[id]!
      return fields.map { ProjectionModel.project(body, $0) } ?? body
    }
    return (ids, bodies)
  }

  /// A sort of single-name fields as `_find` takes it, for the reference.
  static func sortJSON(_ fields: [(String, Bool)]) -> JSON {
    .array(fields.map { [$0.0: $0.1 ? "desc" : "asc"] })
  }

  @Test(arguments: [1, 2, 3, 4] as [UInt64], Indexing.allCases)
  func randomSelectorsAgree(seed: UInt64, indexing: Indexing) throws {
    var generator = RandomQueries(seed: seed)
    let collection = try Database(inMemoryWith: .init()).collection("random")
    let documents = (0..<200).map { generator.document($0) }
    // Half the documents before the indexes exist (built at creation), half after
    // (maintained by writes).
    try collection.putAll(Array(documents[..<100]))
    switch indexing {
    case .none: break
    case .single:
      for field in [
        "a", "b", "tags", "pet.species", "pets.species", "tags.0", "_id", "we\"ird\\.key",
      ] {
        try collection.ensureIndexed([field], name: "by \(field)")
      }
    case .compound:
      try collection.ensureIndexed(["a", "b"], name: "a+b")
      try collection.ensureIndexed(["pet.species", "pet.age"], name: "pet")
      try collection.ensureIndexed(["pets.species", "tags"], name: "pets+tags")
    case .scalarSort:
      try collection.ensureIndexed(["n"], name: "n")
      try collection.ensureIndexed(["n", "m"], name: "n+m")
    case .partial:
      // Partial indexes hold only the documents their filter matches; the planner may use
      // them only for selectors that include the filter.
      for (name, fields) in [("a.cats", ["a"]), ("b+tags.cats", ["b", "tags"])] {
        var definition = try IndexDefinition(name: name, fields: fields)
        definition.partialFilter = DifferentialTests.partialFilter
        try collection.ensureIndexed(definition)
      }
      try collection.ensureIndexed(["b"], name: "b")
    }
    try collection.putAll(Array(documents[100...]))
    // Updates and deletes must leave no stale index entries.
    for number in stride(from: 0, to: 200, by: 7) {
      let id = "d\(number)"
      let current = try #require(try collection.get(id))
      if number % 2 == 0 {
        try collection.delete(id, rev: current.rev!)
      } else {
        var changed = generator.document(number)
        changed["_rev"] = .string(current.rev!.description)
        try collection.put(changed)
      }
    }
    if indexing == .scalarSort {
      // Scalar fields only, so the indexes can give the sort order themselves.
      for document in try collection.find(FindQuery()) {
        var json = document.json
        json["n"] = generator.scalar()
        json["m"] = generator.pick([1, 2, "x", ["o": 1], .double(2.5)])
        try collection.put(json)
      }
      // Built over existing scalar values: the SQL bulk build, checked by the same queries.
      try collection.ensureIndexed(["m", "n"], name: "m+n")
      try collection.ensureIndexed(["pet.age"], name: "pet.age")
    }
    let found = try collection.find(FindQuery())
    #expect(found.count == 200 - 15)
    let stored = Stored(found)

    var coveredQueries = 0
    var partialQueries = 0
    for round in 0..<300 {
      var selectorJSON = generator.selector()
      if indexing == .partial && round % 2 == 0 {
        selectorJSON = ["$and": [DifferentialTests.partialFilterJSON, selectorJSON]]
      }
      let text = JSONWriter.string(selectorJSON)
      let selector: Selector
      do {
        selector = try SelectorParser.parse(selectorJSON)
      } catch {
        Issue.record("generated an invalid selector \(text): \(error)")
        continue
      }
      var query = FindQuery(selector: selector)
      var sortJSON: JSON?
      if indexing == .scalarSort && round % 2 == 1 {
        // Selectors, sorts and projections within the indexed fields: covering queries.
        var object = JSONObject()
        object[generator.pick(["n", "m"])] = generator.condition(depth: 1)
        if generator.chance(40) {
          object[generator.pick(["n", "m"])] = generator.condition(depth: 1)
        }
        selectorJSON = .object(object)
        query.selector = try SelectorParser.parse(selectorJSON)
        query.fields = [generator.pick([["n"], ["m", "n"], ["n", "_id"], ["m"]])].flatMap { $0 }
        if generator.chance(50) {
          let descending = generator.chance(50)
          query.sort = [.init("n", descending: descending)]
          sortJSON = DifferentialTests.sortJSON([("n", descending)])
        }
        query.limit = Int(generator.random.next() % 5)
      }
      if indexing == .scalarSort && round % 4 == 0 {
        let descending = generator.chance(50)
        let fields = generator.chance(50) ? ["n"] : ["n", "m"]
        query.sort = fields.map { .init(FieldPath(components: [$0]), descending: descending) }
        sortJSON = DifferentialTests.sortJSON(fields.map { ($0, descending) })
        query.skip = Int(generator.random.next() % 3)
        query.limit = Int(generator.random.next() % 20)
      } else if round % 3 == 0 {
        sortJSON = generator.sort()
        query.sort = try FindQuery.parseSort(sortJSON!)
        query.skip = Int(generator.random.next() % 3)
        query.limit = Int(generator.random.next() % 20)
      }
      if indexing != .scalarSort && round % 5 == 2 {
        // Projections through arrays, numeric components and missing leaves, against a
        // model of the rules written separately.
        query.fields = (0...Int(generator.random.next() % 3)).map { _ in
          try! FieldPath(parsing: generator.pick(RandomQueries.paths))
        }
        let model = DifferentialTests.expected(
          stored, selector: selectorJSON, sort: nil, skip: 0, limit: 0, fields: query.fields
        ).bodies
        var unsorted = query
        (unsorted.sort, unsorted.skip, unsorted.limit) = ([], 0, 0)
        let projected = try collection.find(unsorted)
        let differing = zip(projected, model).first { $0.0.body != $0.1 }
        #expect(
          projected.count == model.count && differing == nil,
          "fields \(query.fields!) of \(text): \(differing.map { "\($0.0.id): \(JSONWriter.string(.object($0.0.body))) vs model \(JSONWriter.string(.object($0.1)))" } ?? "counts")"
        )
      }
      if indexing != .none && round % 10 == 0 {
        query.useIndex = generator.pick(try collection.indexes().map(\.name))
      }
      let plan = try collection.explain(query)
      if plan.covering { coveredQueries += 1 }
      if plan.indexes.contains(where: { $0.hasSuffix(".cats") }) { partialQueries += 1 }
      let reference = DifferentialTests.expected(
        stored, selector: selectorJSON, sort: sortJSON,
        skip: query.skip, limit: query.limit, fields: query.fields)
      let expected = reference.ids
      let results: [Document]
      do {
        results = try collection.find(query)
      } catch {
        Issue.record("SQL failed for \(text): \(error)")
        continue
      }
      if query.fields != nil {
        // Projected bodies must agree too.
        #expect(results.map(\.body) == reference.bodies, "projection of \(text)")
      }
      let actual = results.map(\.id)
      if query.sort.isEmpty && query.limit == 0 && query.skip == 0 {
        #expect(Set(actual) == Set(expected), "selector \(text)")
        let counted = try collection.count(query)
        #expect(counted == expected.count, "count \(text): \(counted), expected \(expected.count)")
        if counted != expected.count {
          var out: [UInt8] = []
          try collection.exportDocuments { out += $0 }
          try String(decoding: out, as: UTF8.self).write(
            toFile: "/tmp/mismatch.ndjson", atomically: false, encoding: .utf8)
          try text.write(toFile: "/tmp/mismatch.selector", atomically: false, encoding: .utf8)
        }
      } else {
        #expect(actual == expected, "selector \(text) sort \(query.sort)")
      }
      // Every fifth round, the same shape with other values (from a generator of their
      // own, so the rounds stay as they were): three more queries of a new shape make the
      // plan cache trust its template (two are compared with full plans), and the third
      // is checked against the matcher like every other.
      var values = RandomQueries(seed: seed &* 1_000 &+ UInt64(round))
      for _ in 0..<(round % 5 == 0 ? 3 : 0) {
        var other = query
        let otherJSON = values.revalued(json: selectorJSON)
        other.selector = try SelectorParser.parse(otherJSON)
        if other.selector == query.selector { break }
        let found = try collection.find(other).map(\.id)
        let wanted = DifferentialTests.expected(
          stored, selector: otherJSON, sort: sortJSON,
          skip: other.skip, limit: other.limit, fields: nil
        ).ids
        if other.sort.isEmpty && other.limit == 0 && other.skip == 0 {
          #expect(Set(found) == Set(wanted), "revalued selector \(other.selector) of \(text)")
        } else {
          #expect(found == wanted, "revalued selector \(other.selector) sort \(other.sort)")
        }
      }
    }
    if indexing == .partial {
      #expect(partialQueries > 10, "partial indexes were used \(partialQueries) times")
    }
    if indexing == .scalarSort {
      #expect(coveredQueries > 50, "covering indexes were used \(coveredQueries) times")
    }
  }
}
