import Settee
import SetteeCore
import SetteeTestSupport
import Testing

/// The planner's strategies one by one (``QueryPlanner``'s `textSearch`, `forcedIndex`,
/// `weighIndexes`, `orUnion`, `covering` and `decide`): for each, a query it decides,
/// what `explain` says of it, and that the plan's answer is the reference's (`ReferenceQuery`).
@Suite("Planner strategies")
struct PlanStrategyTests {
  static func collection() throws -> DocumentCollection {
    let db = try Database(inMemoryWith: .init())
    let items = db.collection("items")
    var documents: [JSONObject] = []
    for number in 0..<400 {
      var document: JSONObject = ["_id": .string("d\(number)"), "n": .int(Int64(number % 40))]
      document["tags"] = .array([.string("t\(number % 7)"), .string("u\(number % 3)")])
      document["s"] = .string(number % 10 == 0 ? "alpha beta" : "gamma")
      document["kind"] = .string(number % 2 == 0 ? "even" : "odd")
      documents.append(document)
    }
    try items.putAll(documents)
    try items.ensureIndexed(["n"], name: "n")
    try items.ensureIndexed(["tags"], name: "tags")
    try items.ensureIndexed(["s"], name: "s", type: .text)
    try items.ensureIndexed(
      ["n"], name: "even n", partialFilter: Field("kind") == "even")
    return items
  }

  @Test(arguments: [
    // textSearch: a top-level $text drives the query.
    (
      #"{"selector": {"$text": {"$search": "alpha"}, "n": {"$lt": 20}}}"#,
      "the TEXT index \"s\" finds"
    ),
    // forcedIndex: use_index names the index, even one that narrows nothing.
    (#"{"selector": {"tags": "t1"}, "use_index": "n"}"#, "use_index named it"),
    // forcedIndex: an unknown name falls back to planning without it.
    (#"{"selector": {"n": 4}, "use_index": "nope"}"#, "is the only one that narrows"),
    // weighIndexes: a lone equality index is not counted.
    (#"{"selector": {"n": 4}}"#, "is the only one that narrows the selector"),
    // weighIndexes: two indexes are weighed by their entries.
    (#"{"selector": {"n": 3, "tags": "t1"}}"#, "selects the fewest entries"),
    // orUnion: each branch of an $or narrowed by an index.
    (#"{"selector": {"$or": [{"n": 1}, {"tags": "t2"}]}}"#, "each branch of $or"),
    // covering: the index holds every field the query needs.
    (#"{"selector": {"n": 4}, "fields": ["n"]}"#, "holds every field"),
    // decide: the index that gives the sort order, under a limit.
    (#"{"selector": {"n": {"$gt": 0}}, "sort": ["n"], "limit": 5}"#, "gives the sort order"),
    // decide: no index narrows the selector.
    (#"{"selector": {"kind": "odd"}}"#, "no index narrows the selector"),
    // decide: a lookup by _id reads the built-in id index.
    (#"{"selector": {"_id": "d7"}}"#, "built-in _id index"),
  ])
  func eachStrategyDecidesItsQuery(_ request: String, _ reason: String) throws {
    let items = try Self.collection()
    let query = try FindQuery(json: JSONParser.parse(request))
    let plan = try items.explain(query)
    #expect(plan.reason.contains(reason), "\(request): \(plan.reason)")
    var everything = FindQuery()
    everything.limit = 0
    // The reference has no $text: the same documents by a $regex.
    let body = try JSONParser.parse(
      request.contains("$text")
        ? #"{"selector": {"s": {"$regex": "alpha"}, "n": {"$lt": 20}}}"# : request)
    let expected = ReferenceQuery.find(
      try items.find(everything), selector: body["selector"] ?? [:], sort: body["sort"],
      skip: Int(body["skip"]?.intValue ?? 0), limit: Int(body["limit"]?.intValue ?? 0))
    let found = try items.find(query).map(\.id)
    #expect(request.contains("$text") ? Set(found) == Set(expected) : found == expected)
    #expect(!found.isEmpty, "\(request)")
  }

  /// A partial index whose filter the selector does not include is listed, unusable, and
  /// not chosen; with its filter in the selector it answers.
  @Test func partialIndexesAnswerOnlyWithinTheirFilter() throws {
    let items = try Self.collection()
    let outside = try items.explain(FindQuery(json: JSONParser.parse(#"{"selector": {"n": 4}}"#)))
    let listed = try #require(outside.candidates.first { $0.index == "even n" })
    #expect(!listed.usable && listed.reason.contains("partial index"))
    #expect(outside.indexes == ["n"])
    let inside = try items.explain(
      FindQuery(
        json: JSONParser.parse(#"{"selector": {"n": 4, "kind": "even"}, "use_index": "even n"}"#)))
    #expect(inside.indexes == ["even n"])
  }
}
