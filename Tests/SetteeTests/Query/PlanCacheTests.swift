import Foundation
import SetteeCore
import SetteeTestSupport
import Testing

@testable import Settee

/// Plans kept by query shape: only comparison values change between queries of a shape,
/// and a template must give exactly the plan the planner makes for them.
@Suite("Plans kept by query shape")
struct PlanCacheTests {
  static func selector(_ json: JSON) throws -> Selector { try SelectorParser.parse(json) }

  static func shape(_ json: JSON, sort: [FindQuery.SortField] = [], limit: Int = 0) throws
    -> PlanCache.Shape
  {
    try #require(PlanCache.shape(FindQuery(selector: selector(json), sort: sort, limit: limit)))
  }

  /// Which queries share a shape: values of comparisons do not count; their kinds, every
  /// other value and every name do, byte for byte.
  @Test(arguments: [
    (#"{"a": 1}"#, #"{"a": 2}"#, true),
    (#"{"a": {"$gt": "x"}}"#, #"{"a": {"$gt": "y"}}"#, true),
    (#"{"a": 1, "b": {"$lte": 2.5}}"#, #"{"a": 7, "b": {"$lte": 0.5}}"#, true),
    (#"{"a": 1}"#, #"{"a": 1.5}"#, false),  // integer against other number
    (#"{"a": 1}"#, #"{"a": "1"}"#, false),
    (#"{"a": 1}"#, #"{"b": 1}"#, false),
    (#"{"a": {"$gt": 1}}"#, #"{"a": {"$gte": 1}}"#, false),
    (#"{"a": {"$in": [1, 2]}}"#, #"{"a": {"$in": [1, 3]}}"#, false),
    (#"{"a": true}"#, #"{"a": false}"#, false),
    (#"{"a": null}"#, #"{"a": 0}"#, false),
    (#"{"a": {"$elemMatch": {"$gt": 1}}}"#, #"{"a": {"$elemMatch": {"$gt": 2}}}"#, false),
    (#"{"a": "a\u0000"}"#, #"{"a": "a\u0000b"}"#, false),  // U+0000: not a slot
    (#"{"a": "a\u0000"}"#, #"{"a": "b"}"#, false),
    ("{\"caf\u{E9}\": 1}", "{\"cafe\u{301}\": 1}", false),  // two spellings of "é"
    ("{\"a\": {\"$in\": [\"caf\u{E9}\"]}}", "{\"a\": {\"$in\": [\"cafe\u{301}\"]}}", false),
  ])
  func shapes(_ first: String, _ second: String, same: Bool) throws {
    let one = try Self.shape(JSONParser.parse(first))
    let other = try Self.shape(JSONParser.parse(second))
    #expect((one.key.bytes == other.key.bytes) == same, "\(first) against \(second)")
  }

  @Test func slotsHoldTheComparedValues() throws {
    let shape = try Self.shape(["a": 1, "b": ["$gt": "x", "$lt": .double(2.5)], "c": "a\u{0}"])
    #expect(Set(shape.slots.map { JSONWriter.string($0) }) == ["1", "\"x\"", "2.5"])
  }

  @Test func everythingElseIsInTheShape() throws {
    let base = try Self.shape(["a": 1])
    #expect(try Self.shape(["a": 1], sort: [.init("a")]).key.bytes != base.key.bytes)
    #expect(try Self.shape(["a": 1], limit: 10).key.bytes != base.key.bytes)
    var query = FindQuery(selector: try Self.selector(["a": 1]))
    for change: (inout FindQuery) -> Void in [
      { $0.skip = 2 }, { $0.fields = ["a"] }, { $0.useIndex = "x" }, { $0.allowFallback = false },
      { $0.conflicts = true },
    ] {
      var changed = query
      change(&changed)
      #expect(try #require(PlanCache.shape(changed)).key.bytes != base.key.bytes)
    }
    query.executionStats = true
    #expect(PlanCache.shape(query) == nil)
    // CouchDB's dialect (`dialect`, `mango`, `returnsNothing`) is planned by CouchDB's rules.
    query.executionStats = false
    query.dialect = .couchDB
    #expect(PlanCache.shape(query) == nil)
    query.dialect = .cloudantSync
    query.useIndexPair = ["_design/d", "i"]
    #expect(PlanCache.shape(query) == nil)
    // Selectors too large to be worth keeping (an `$or` of thousands of equalities).
    let many = FindQuery(
      selector: .or(
        (0..<(PlanCache.maxSlots + 1)).map {
          .condition(FieldPath(components: ["n"]), .equal(.int(Int64($0))))
        }))
    #expect(PlanCache.shape(many) == nil)
    let long = FindQuery(
      selector: .condition(FieldPath(components: ["n"]), .in((0..<2_000).map { .int(Int64($0)) })))
    #expect(PlanCache.shape(long) == nil)
    // A property FindQuery gains must be given a place in the shape (or make queries with
    // it uncacheable) before this count is raised.
    #expect(Mirror(reflecting: FindQuery()).children.count == 15)
  }

  /// A collection with an index on `n` (one entry per document) and one on `tags` (an
  /// array field: several entries per document).
  func collection() throws -> (Database, DocumentCollection) {
    let database = try Database(inMemoryWith: .init())
    let items = database.collection("items")
    try items.putAll(
      (0..<60).map { number in
        [
          "_id": .string("i\(number)"), "n": .int(Int64(number % 20)),
          "s": .string(["x", "y", "z"][number % 3]),
          "tags": .array([.string("t\(number % 4)"), .string("u\(number % 5)")]),
          "free": .int(Int64(number % 7)),
        ]
      })
    try items.ensureIndexed(["n"], name: "n")
    try items.ensureIndexed(["tags"], name: "tags")
    return (database, items)
  }

  func entry(_ database: Database, _ items: DocumentCollection, _ query: FindQuery) throws
    -> PlanCache.Entry?
  {
    let shape = try #require(PlanCache.shape(query))
    return try database.read { db in
      let cid = try #require(try database.collectionID(db, items.name))
      let state = try database.indexCatalog.state(db, cid: cid)
      return database.planCache.entry(
        PlanCache.Key(
          cid: cid, catalogVersion: try #require(state.version),
          documentsHoldNUL: state.documentsHoldNUL, shape: shape.key.bytes))
    }
  }

  /// Queries of one shape, run until the template is trusted and then on, return what the
  /// reference finds.
  @Test(arguments: [
    #"{"n": {"$gt": 5}}"#, #"{"n": {"$gte": 3, "$lt": 9}}"#, #"{"n": 4}"#,
    #"{"n": {"$lte": 2.5}}"#, #"{"n": {"$gt": "a"}}"#,
  ])
  func templatesFindWhatTheReferenceFinds(_ text: String) throws {
    let (database, items) = try collection()
    let stored = try items.find(FindQuery())
    let json = try JSONParser.parse(text)
    let selector = try Self.selector(json)
    var values = RandomQueries(seed: 7)
    for round in 0..<12 {
      let revalued = round == 0 ? json : values.revalued(json: json)
      let query = FindQuery(selector: try Self.selector(revalued), sort: [.init("n")], limit: 7)
      #expect(
        try items.find(query).map(\.id)
          == ReferenceQuery.find(stored, selector: revalued, sort: ["n"], limit: 7),
        "round \(round): \(revalued)")
    }
    let query = FindQuery(selector: selector, sort: [.init("n")], limit: 7)
    guard case .template(_, let checks)? = try entry(database, items, query) else {
      Issue.record("no template for \(text)")
      return
    }
    #expect(checks >= PlanCache.verifiedUses)
  }

  /// Shapes whose plans depend on their values beyond index keys are planned every time.
  @Test(arguments: [
    // A condition on a field without an index is checked on the documents, in SQL.
    #"{"n": 3, "free": 2}"#,
    // An array field's index holds several entries per document: the condition is
    // checked again on the documents.
    #"{"tags": "t1"}"#,
    // Two indexes narrow the selector: entries are counted to choose.
    #"{"n": 3, "tags": "t1"}"#,
  ])
  func valueDependentPlansAreNotKept(_ text: String) throws {
    let (database, items) = try collection()
    let stored = try items.find(FindQuery())
    let json = try JSONParser.parse(text)
    let query = FindQuery(selector: try Self.selector(json))
    for _ in 0..<5 {
      #expect(
        Set(try items.find(query).map(\.id)) == Set(ReferenceQuery.find(stored, selector: json)))
    }
    guard case .uncacheable? = try entry(database, items, query) else {
      Issue.record("\(text) was kept")
      return
    }
  }

  /// Counts, and finds that one index both narrows and covers, keep their plans: the
  /// planner does not count that index's entries to weigh it against itself (it did, and a
  /// plan that counted entries is never kept), and a count plans like a find of only ids.
  @Test(arguments: [#"{"n": 4}"#, #"{"n": {"$in": [2, 3]}}"#])
  func countsAndCoveredFindsAreKept(_ text: String) throws {
    let (database, items) = try collection()
    let stored = try items.find(FindQuery())
    let json = try JSONParser.parse(text)
    let selector = try Self.selector(json)
    var values = RandomQueries(seed: 11)
    for round in 0..<8 {
      let revaluedJSON = round == 0 ? json : values.revalued(json: json)
      let revalued = try Self.selector(revaluedJSON)
      let expected = ReferenceQuery.find(stored, selector: revaluedJSON)
      #expect(try items.count(FindQuery(selector: revalued)) == expected.count, "\(revalued)")
      let covered = FindQuery(selector: revalued, fields: [FieldPath(components: ["n"])])
      #expect(try items.explain(covered).covering)
      #expect(Set(try items.find(covered).map(\.id)) == Set(expected), "\(revalued)")
    }
    for fields: [FieldPath] in [[], [FieldPath(components: ["n"])]] {
      let query = FindQuery(selector: selector, fields: fields)
      guard case .template(_, let checks)? = try entry(database, items, query) else {
        Issue.record("no template for \(text) with fields \(fields)")
        continue
      }
      #expect(checks >= PlanCache.verifiedUses)
    }
  }

  /// `explain` says why an index was chosen without claiming a count it did not make: a
  /// lone equality index is "the only one", indexes weighed against each other give the
  /// entries they select.
  @Test(arguments: [
    (#"{"n": 4}"#, "is the only one that narrows the selector"),
    (#"{"n": 3, "tags": "t1"}"#, "selects the fewest entries (3)"),
  ])
  func explanationsSayWhatWasCounted(_ text: String, _ reason: String) throws {
    let (_, items) = try collection()
    let plan = try items.explain(FindQuery(selector: try Self.selector(JSONParser.parse(text))))
    #expect(plan.reason.contains(reason), "\(plan.reason)")
  }

  /// A template belongs to the index catalog it was made with, and to whether documents
  /// may hold U+0000: a dropped index or a new kind of document is planned afresh.
  @Test func changesToTheCollectionReplan() throws {
    let (_, items) = try collection()
    func check(_ low: Int64) throws {
      let selector: JSON = ["n": ["$gt": .int(low)]]
      let query = FindQuery(selector: try Self.selector(selector), sort: [.init("n")], limit: 5)
      #expect(
        try items.find(query).map(\.id)
          == ReferenceQuery.find(
            try items.find(FindQuery()), selector: selector, sort: ["n"], limit: 5))
    }
    for low in 0..<6 { try check(Int64(low)) }
    try items.deleteIndex(named: "n")
    for low in 0..<6 { try check(Int64(low)) }
    try items.ensureIndexed(["n"], name: "n again")
    try items.put(["_id": "nul", "n": 19, "s": "a\u{0}b"])
    for low in 0..<6 { try check(Int64(low + 10)) }
  }
}
