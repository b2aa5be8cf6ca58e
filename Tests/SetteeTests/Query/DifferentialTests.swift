import Foundation
import Settee
import SetteeCore
import SetteeTestSupport
import Testing

/// The SQL path against the reference matcher, on random documents and selectors.
@Suite("SQL path equals the matcher")
struct DifferentialTests {
  enum Indexing: String, CaseIterable, Sendable {
    case none, single, compound, scalarSort, partial
  }

  /// The filter of the partial indexes of the `.partial` runs.
  static let partialFilter = try! SelectorParser.parse(["pet.species": "cat"])

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
    let stored = try collection.find(FindQuery())
    #expect(stored.count == 200 - 15)

    var coveredQueries = 0
    var partialQueries = 0
    for round in 0..<300 {
      let selectorJSON = generator.selector()
      let text = JSONWriter.string(selectorJSON)
      let selector: Selector
      do {
        selector = try SelectorParser.parse(selectorJSON)
      } catch {
        Issue.record("generated an invalid selector \(text): \(error)")
        continue
      }
      var query = FindQuery(selector: selector)
      if indexing == .partial && round % 2 == 0 {
        query.selector = Selector.conjunction([DifferentialTests.partialFilter, selector])
      }
      if indexing == .scalarSort && round % 2 == 1 {
        // Selectors, sorts and projections within the indexed fields: covering queries.
        var object = JSONObject()
        object[generator.pick(["n", "m"])] = generator.condition(depth: 1)
        if generator.chance(40) {
          object[generator.pick(["n", "m"])] = generator.condition(depth: 1)
        }
        query.selector = try SelectorParser.parse(.object(object))
        query.fields = [generator.pick([["n"], ["m", "n"], ["n", "_id"], ["m"]])].flatMap { $0 }
        if generator.chance(50) { query.sort = [.init("n", descending: generator.chance(50))] }
        query.limit = Int(generator.random.next() % 5)
      }
      if indexing == .scalarSort && round % 4 == 0 {
        let descending = generator.chance(50)
        query.sort =
          generator.chance(50)
          ? [.init("n", descending: descending)]
          : [.init("n", descending: descending), .init("m", descending: descending)]
        query.skip = Int(generator.random.next() % 3)
        query.limit = Int(generator.random.next() % 20)
      } else if round % 3 == 0 {
        query.sort = try FindQuery.parseSort(generator.sort())
        query.skip = Int(generator.random.next() % 3)
        query.limit = Int(generator.random.next() % 20)
      }
      if indexing != .scalarSort && round % 5 == 2 {
        // Projections through arrays, numeric components and missing leaves, against a
        // model of the rules written separately.
        query.fields = (0...Int(generator.random.next() % 3)).map { _ in
          try! FieldPath(parsing: generator.pick(RandomQueries.paths))
        }
        let model = try Matcher.find(FindQuery(selector: query.selector), in: stored).map {
          ProjectionModel.project($0.body, query.fields!)
        }
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
      let expected = try Matcher.find(query, in: stored).map(\.id)
      if query.fields != nil {
        // Projected bodies must agree too.
        #expect(
          try collection.find(query).map(\.body) == Matcher.find(query, in: stored).map(\.body),
          "projection of \(text)")
      }
      let actual: [String]
      do {
        actual = try collection.find(query).map(\.id)
      } catch {
        Issue.record("SQL failed for \(text): \(error)")
        continue
      }
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
        other.selector = values.revalued(query.selector)
        if other.selector == query.selector { break }
        let found = try collection.find(other).map(\.id)
        let wanted = try Matcher.find(other, in: stored).map(\.id)
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
