import Settee
import SetteeCore
import SetteeTestSupport
import Testing

/// An index over existing documents is built by one SQL statement, its entries read from
/// each stored body's text where that can be done exactly and from the parsed document
/// (``IndexKeys``) where not (arrays along a path, `_id`, partial filters); writes keep
/// entries with ``IndexKeys``. All must give the same entries: the same documents, in the
/// same order, with the same covered values.
@Suite("Index builds")
struct IndexBuildTests {
  /// An index built over scalar fields holds the same entries as one kept by writes.
  @Test func bulkBuildMatchesIncrementalMaintenance() throws {
    var random = SplitMix64(seed: 8)
    let built = try Database(inMemoryWith: .init()).collection()
    let maintained = try Database(inMemoryWith: .init()).collection()
    try maintained.ensureIndexed(["v", "w.x"], name: "i")
    let values: [JSON] = [
      .null, true, false, 0, -1, 7, .double(0.1), .double(-2.5e-8), "", "a", "é", "\n\"q\"",
      ["k": 1], ["k": ["n": 2]],
    ]
    let documents: [JSONObject] = (0..<400).map { number in
      var document: JSONObject = ["_id": .string("d\(number)")]
      if random.next() % 5 != 0 {
        document["v"] = values[Int(random.next() % UInt64(values.count))]
      }
      if random.next() % 3 != 0 {
        document["w"] = ["x": values[Int(random.next() % UInt64(values.count))]]
      }
      return document
    }
    try built.putAll(documents)
    try maintained.putAll(documents)
    try built.ensureIndexed(["v", "w.x"], name: "i")
    for value in values {
      for query in [
        FindQuery(selector: .condition("v", .equal(value)), fields: ["v"]),
        FindQuery(
          selector: .condition("w.x", .greaterThanOrEqual(value)), sort: [.init("v"), .init("w.x")]),
        FindQuery(selector: .not(.condition("v", .lessThan(value))), fields: ["v", "w"]),
      ] {
        #expect(try built.find(query) == maintained.find(query), "\(query.selector)")
      }
      // Answered from the built index's entries alone: keys and values both came from SQL.
      let covered = FindQuery(selector: .condition("v", .equal(value)), fields: ["v", "w.x"])
      #expect(try built.explain(covered).indexes == ["i"])
    }
  }

  /// Values that SQLite and Settee could read differently.
  static let documents: [JSONObject] = [
    ["_id": "nul", "t": "y\u{0}z", "n": ["m": "a\u{0}"]],
    ["_id": "exp", "t": .double(100), "n": ["m": .double(1.5)]],
    ["_id": "int", "t": 100, "n": ["m": .int(Int64.max)]],
    ["_id": "big", "t": .int(9_007_199_254_740_993), "n": ["m": -0.0]],
    ["_id": "obj", "t": ["x": [1, "é"]], "n": ["m": ["k": nil]]],
    ["_id": "null", "t": nil, "n": ["m": false]],
    ["_id": "bool", "t": true, "n": "not an object"],
    ["_id": "missing", "u": 1],
    ["_id": "unicode", "t": "日本", "n": ["m": "\u{1F600}"]],
    ["_id": "quote", "t": "a\"b\\c", "n": ["m": ""]],
  ]

  static let queries: [String] = [
    #"{"t": {"$gt": null}}"#, #"{"t": {"$gte": "y"}}"#, #"{"t": 100}"#,
    #"{"t": {"$exists": false}}"#,
    #"{"n.m": {"$lt": 2}}"#, #"{"n.m": {"$type": "string"}}"#,
    #"{"t": {"$in": [true, "日本", 9007199254740993]}}"#,
    #"{"t": {"$type": "object"}}"#, #"{"n.m": {"$exists": true}}"#,
  ]

  /// Where a condition not decided by the index meets a string holding U+0000, SQLite's
  /// JSON functions cut the string there (a known limit, docs/query-language.md): `"y"`
  /// then equals `"y\u0000z"`. Both builds must still agree with each other.
  static let nulQueries: [String] = [
    #"{"t": "y"}"#, #"{"t": "y\u0000z"}"#, #"{"n.m": {"$lt": "a\u0000!"}}"#,
  ]

  func collection(_ database: Database, _ name: String, parsed: Bool) throws
    -> DocumentCollection
  {
    let collection = database.collection(name)
    try collection.putAll(IndexBuildTests.documents)
    // An `_id` field has every document's entries made from the parsed document.
    try collection.ensureIndexed(parsed ? ["t", "n.m", "_id"] : ["t", "n.m"], name: "t")
    try collection.ensureIndexed(parsed ? ["n.m", "_id"] : ["n.m"], name: "m")
    return collection
  }

  /// Random documents with arrays along the indexed paths (arrays of scalars, of objects,
  /// nested, empty): a build reads them from the text or parses them, and must hold exactly the
  /// entries each document should have (`check` recomputes them with ``IndexKeys``), with the
  /// count of documents with several entries the planner reads.
  @Test(arguments: [1, 2, 3] as [UInt64])
  func buildsOverArraysHoldEveryEntry(seed: UInt64) throws {
    var random = RandomQueries(seed: seed)
    let database = try Database(inMemoryWith: .init())
    let built = database.collection("built")
    let maintained = database.collection("maintained")
    let definitions: [[String]] = [
      ["tags"], ["pets.species", "a"], ["pet.species", "tags", "b"], ["a.species", "pets.age"],
    ]
    for (number, fields) in definitions.enumerated() {
      try maintained.ensureIndexed(fields, name: "i\(number)")
    }
    let documents = (0..<300).map { random.document($0) }
    try built.putAll(documents)
    try maintained.putAll(documents)
    for (number, fields) in definitions.enumerated() {
      try built.ensureIndexed(fields, name: "i\(number)")
    }
    let report = try database.check()
    #expect(report.problemCount == 0, "\(report.problems.prefix(3))")
    #expect(report.indexEntries > 2 * 4 * 300)
    for (number, fields) in definitions.enumerated() {
      let paths = try fields.map { try FieldPath(parsing: $0) }
      var query = FindQuery(sort: paths.map { FindQuery.SortField($0) }, fields: paths)
      query.useIndex = "i\(number)"
      for selector in paths.map({ Selector.condition($0, .exists) }) {
        query.selector = selector
        #expect(try built.find(query) == maintained.find(query), "\(fields) \(selector)")
      }
    }
  }

  @Test func bothBuildsAnswerEveryQueryAlike() throws {
    let database = try Database(inMemoryWith: .init())
    let sql = try collection(database, "sql", parsed: false)
    let swift = try collection(database, "swift", parsed: true)
    let all = try sql.find(FindQuery())
    for text in IndexBuildTests.queries + IndexBuildTests.nulQueries {
      for (index, fields) in [("t", ["t", "n.m"]), ("m", ["n.m"])] {
        var query = FindQuery(selector: try SelectorParser.parse(text))
        query.useIndex = index
        query.sort = fields.map { FindQuery.SortField(try! FieldPath(parsing: $0)) }
        query.fields = try fields.map { try FieldPath(parsing: $0) }
        let fromSQL = try sql.find(query).map { JSONWriter.string(.object($0.json)) }
        let fromSwift = try swift.find(query).map { JSONWriter.string(.object($0.json)) }
        #expect(fromSQL == fromSwift, "\(text) through \(index)")
        if !IndexBuildTests.nulQueries.contains(text) {
          // The documentation's rules as the test support states them: ids in order, then
          // each body cut to the fields.
          let ids = ReferenceQuery.find(
            all.map(\.json), selector: try JSONParser.parse(text),
            sort: .array(fields.map { .string($0) }))
          let byID = Dictionary(uniqueKeysWithValues: all.map { ($0.id, $0.body) })
          let found = try sql.find(query)
          #expect(found.map(\.id) == ids, "\(text) through \(index)")
          #expect(
            found.map(\.body) == ids.map { ProjectionModel.project(byID[$0]!, query.fields!) },
            "\(text) through \(index)")
        }
      }
    }
  }

  /// Entries are deleted by their keys, computed again from the version being replaced:
  /// after every document of a SQL-built index changes, no old entry may be left. The
  /// index decides its conditions by itself (no arrays), so a stale entry would show.
  @Test func rewritingEveryDocumentLeavesNoStaleEntry() throws {
    var random = SplitMix64(seed: 21)
    let collection = try Database(inMemoryWith: .init()).collection()
    let values: [JSON] = [.null, true, 0, 7, .double(2.5), "", "a", "é", ["k": 1]]
    func pick() -> JSON { values[Int(random.next() % UInt64(values.count))] }
    try collection.putAll(
      (0..<300).map { ["_id": .string("d\($0)"), "v": pick(), "w": ["x": pick()]] })
    try collection.ensureIndexed(["v", "w.x"], name: "i")
    try collection.ensureIndexed(["_rev"], name: "rev")
    for round in 0..<2 {
      for document in try collection.find(FindQuery()) {
        var json = document.json
        if random.next() % 4 == 0 {
          try collection.delete(document.id, rev: document.rev!)
          continue
        }
        json["v"] = pick()
        json["w"] = round == 0 && random.next() % 3 == 0 ? ["x": [pick(), pick()]] : ["x": pick()]
        try collection.put(json)
      }
    }
    // Back to scalars only, so the index is exact again.
    for document in try collection.find(FindQuery()) {
      var json = document.json
      json["w"] = ["x": pick()]
      try collection.put(json)
    }
    let all = try collection.find(FindQuery())
    for value in values {
      for selector: JSON in [["v": ["$eq": value]], ["w.x": ["$gte": value]]] {
        let query = FindQuery(selector: try SelectorParser.parse(selector), useIndex: "i")
        #expect(
          Set(try collection.find(query).map(\.id))
            == Set(ReferenceQuery.find(all, selector: selector)),
          "\(selector)")
      }
    }
    // The _rev index holds the current revisions only.
    for document in all.prefix(20) {
      let query = FindQuery(
        selector: .condition("_rev", .equal(.string(document.rev!.description))), useIndex: "rev")
      #expect(try collection.find(query).map(\.id) == [document.id])
    }
    #expect(
      try collection.count(FindQuery(selector: .condition("_rev", .exists), useIndex: "rev"))
        == all.count)
  }
}

extension IndexBuildTests {
  /// A document whose fields would give more entries than one document may is refused by
  /// the build as writes refuse it: a typed error that names it, and no index left behind.
  @Test func aBuildRefusesADocumentWithTooManyEntries() throws {
    let collection = try Database(inMemoryWith: .init()).collection()
    let many = JSON.array((0..<40).map { .int($0) })
    try collection.putAll([
      ["_id": "fine", "a": 1, "b": 2], ["_id": "wide", "a": many, "b": many],
    ])
    #expect {
      try collection.ensureIndexed(["a", "b"], name: "ab")
    } throws: { error in
      guard let error = error as? SetteeError else { return false }
      return error.code == .invalidDocument && "\(error)".contains("wide")
    }
    #expect(try collection.indexes().map(\.name) == [])
    // The table the build used is gone and comes back for the next build.
    try collection.ensureIndexed(["a"], name: "a")
    #expect(try collection.count(FindQuery(selector: .condition("a", .exists), useIndex: "a")) == 2)
    #expect(try collection.database.check().problemCount == 0)
  }
}
