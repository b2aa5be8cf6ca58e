import Foundation
import Settee
import SetteeCore
import SetteeTestSupport
import Testing

/// CouchDB's dialect: the engine (SQL candidates, then CouchDB's matcher, in the order of
/// the index CouchDB would read) against ``ReferenceMango``, a second statement of CouchDB's
/// `_find` that runs the request body over every document in memory, on random documents
/// and queries.
@Suite("CouchDB dialect: the SQL path equals the CouchDB reference")
struct CouchDBDialectDifferentialTests {
  enum Indexing: String, CaseIterable, Sendable {
    case none, single, compound, partial
  }

  /// Strings whose order or equality in ICU's collation is not their code points': a
  /// trailing U+0000 and a leading control are ignorable ("a\0" equals "a"), "e" with a
  /// combining acute equals "é", the Kelvin sign equals "K", case sorts lower first.
  static let collated: [JSON] = [
    "a", "a\u{0}", "\u{1}a", "A", "b", "B", "ab", "Ab", "e\u{301}", "é", "K", "\u{212A}", "",
    " a", "\u{7F}a", "\u{200B}a", "z", "Z", "中",
  ]

  /// Async, and yielding between rounds: a synchronous test this long would hold a thread
  /// of the cooperative pool that the suite's observers wait for.
  @Test(arguments: [1, 2] as [UInt64], Indexing.allCases)
  func randomQueriesAgree(seed: UInt64, indexing: Indexing) async throws {
    var generator = RandomQueries(seed: seed)
    let collection = try Database(inMemoryWith: .init()).collection("random")
    var documents = (0..<200).map { generator.document($0) }
    for number in documents.indices where generator.chance(70) {
      documents[number]["c"] =
        generator.chance(80)
        ? generator.pick(Self.collated)
        : generator.pick([.array([generator.pick(Self.collated)]), 3, .null, ["k": "a"]])
    }
    try await collection.putAll(Array(documents[..<100]))
    // Each index: its name, fields and partial filter, the engine's and the reference's.
    let specified: [(name: String, fields: [String], partialFilter: JSON?)] =
      switch indexing {
      case .none: []
      case .single:
        ["a", "b", "c", "tags", "pet.species", "_id"].map { ("by \($0)", [$0], nil) }
      case .compound: [("c+a", ["c", "a"], nil), ("a+b", ["a", "b"], nil), ("c", ["c"], nil)]
      case .partial: [("c.cats", ["c"], ["pet.species": "cat"]), ("b", ["b"], nil)]
      }
    for index in specified {
      var definition = try IndexDefinition(name: index.name, fields: index.fields)
      definition.partialFilter = try index.partialFilter.map(SelectorParser.parse)
      try await collection.ensureIndexed(definition)
    }
    try await collection.putAll(Array(documents[100...]))
    let stored = try await collection.find(FindQuery()).map(\.json)
    let listed = try await collection.indexes()
    let indexes = specified.map { index in
      ReferenceMango.Index(
        designDocument: listed.first { $0.name == index.name }!.designDocumentID,
        name: index.name, fields: index.fields, partialFilter: index.partialFilter)
    }
    let names = indexes.map { [$0.designDocument!, $0.name] }

    var compared = 0
    var paged = 0
    for round in 0..<160 {
      await Task.yield()
      var body: JSONObject = [:]
      if generator.chance(30) {
        body["selector"] = [
          "c": generator.pick([
            ["$eq": generator.pick(Self.collated)], ["$lt": generator.pick(Self.collated)],
            ["$gte": generator.pick(Self.collated)], ["$in": [generator.pick(Self.collated), 3]],
            ["$ne": generator.pick(Self.collated)], ["$gt": .null], generator.pick(Self.collated),
          ])
        ]
      } else {
        body["selector"] = generator.selector()
      }
      if generator.chance(30) {
        let field = generator.pick(["a", "b", "c", "_id", "tags"])
        body["sort"] = [[field: generator.chance(50) ? "asc" : "desc"]]
      }
      if generator.chance(60) { body["limit"] = .int(Int64(generator.random.next() % 12)) }
      if generator.chance(30) { body["skip"] = .int(Int64(generator.random.next() % 4)) }
      if generator.chance(25) {
        body["fields"] = .array(
          (0...Int(generator.random.next() % 2)).map { _ in
            .string(generator.pick(["a", "c", "tags.0", "pet.species", "_id", "pets.species"]))
          })
      }
      if !names.isEmpty, generator.chance(15) {
        let name = generator.pick(names)
        body["use_index"] =
          generator.chance(50) ? .string(name[0]) : [.string(name[0]), .string(name[1])]
      }
      let text = JSONWriter.string(.object(body))
      let query: FindQuery
      do { query = try FindQuery(json: .object(body), dialect: .couchDB) } catch {
        continue  // CouchDB refuses it too (the parse is shared): nothing to compare
      }
      let expected: [JSONObject]
      do { expected = try ReferenceMango.find(body, indexes: indexes, in: stored) } catch {
        // A refusal (a sort no index gives, an argument CouchDB refuses) must be the engine's too.
        await #expect(throws: (any Error).self, "\(text): \(error)") {
          try await collection.findPage(query)
        }
        continue
      }
      let page = try await collection.findPage(query)
      compared += 1
      if page.documents.map(\.json) != expected {
        // Which side is wrong: the SQL candidates must hold every match.
        let candidates = Set(
          try await collection.find(FindQuery(selector: query.selector)).map(\.id))
        var everything = body
        everything["limit"] = 1_000
        everything["skip"] = nil
        everything["fields"] = nil
        let reference = try ReferenceMango.find(everything, indexes: indexes, in: stored)
          .compactMap { $0["_id"]?.stringValue }
        Issue.record(
          "round \(round), \(text): \(page.documents.map(\.id)) vs \(expected.map { $0["_id"] ?? .null }); candidates lack \(reference.filter { !candidates.contains($0) })"
        )
      }
      if round % 3 == 0, query.limit > 0, page.documents.count == query.limit,
        let last = page.documents.last
      {
        // The next page, from the engine's bookmark; the reference continues after the last
        // document.
        var next = query
        next.bookmark = page.bookmark
        let following = try await collection.findPage(next).documents.map(\.json)
        #expect(
          following
            == (try ReferenceMango.find(body, indexes: indexes, in: stored, after: last.id)),
          "next page of \(text)")
        paged += 1
      }
      if query.skip == 0, round % 4 == 0 {
        var all = query
        all.limit = 0
        all.returnsNothing = false
        var everything = body
        everything["limit"] = 1_000
        everything["fields"] = nil
        #expect(
          try await collection.count(all)
            == (try ReferenceMango.find(everything, indexes: indexes, in: stored).count),
          "count of \(text)")
      }
    }
    #expect(compared > 100, "compared \(compared) queries")
    #expect(paged > 3, "followed \(paged) bookmarks")
  }
}
