import Foundation
import Settee
import SetteeCore
import SetteeTestSupport
import Testing

/// Views option by option, reduces, updating, persistence and errors.
@Suite("Views: options, reduce, updates")
struct ViewBehaviourTests {
  let db: Database
  let numbers: DocumentCollection

  /// Documents n0…n19 with `n` = 0…19, emitted under key `n` with value `n`.
  init() throws {
    db = try Database(inMemoryWith: .init())
    numbers = db.collection("numbers")
    try numbers.putAll((0..<20).map { ["_id": .string("n\($0)"), "n": .int(Int64($0))] })
  }

  func byN(reduce: ViewReduce? = nil) throws -> View {
    try numbers.view("byN", version: "1", reduce: reduce) { doc, emit in
      emit(doc["n"] ?? nil, doc["n"] ?? nil)
    }
  }

  func keys(_ view: View, _ query: ViewQuery) throws -> [JSON] {
    try view.query(query).rows.map(\.key)
  }

  @Test func rangesSkipLimitAndDescending() throws {
    let view = try byN()
    #expect(try keys(view, ViewQuery(startKey: 3, endKey: 6)) == [3, 4, 5, 6])
    #expect(try keys(view, ViewQuery(startKey: 3, endKey: 6, inclusiveEnd: false)) == [3, 4, 5])
    #expect(try keys(view, ViewQuery(startKey: 6, endKey: 3, descending: true)) == [6, 5, 4, 3])
    #expect(
      try keys(view, ViewQuery(startKey: 6, endKey: 3, inclusiveEnd: false, descending: true)) == [
        6, 5, 4,
      ])
    #expect(try keys(view, ViewQuery(startKey: 17)) == [17, 18, 19])
    #expect(try keys(view, ViewQuery(endKey: 2)) == [0, 1, 2])
    #expect(try keys(view, ViewQuery(descending: true, skip: 2, limit: 3)) == [17, 16, 15])
    #expect(try keys(view, ViewQuery(limit: 0)).isEmpty)
    #expect(try keys(view, ViewQuery(key: 7)) == [7])
    #expect(try keys(view, ViewQuery(keys: [9, 2, 42, 2])) == [9, 2, 2])
    #expect(try keys(view, ViewQuery(keys: [9, 2, 2], skip: 1, limit: 1)) == [2])
    // Offsets: how many rows come before, in the query's direction.
    #expect(try view.query(ViewQuery(startKey: 5, skip: 1, includeOffset: true)).offset == 6)
    #expect(
      try view.query(ViewQuery(startKey: 15, descending: true, includeOffset: true)).offset == 4)
    #expect(try view.query(ViewQuery(startKey: 5)).offset == nil)
    // Reversed ranges are CouchDB's query_parse_error.
    expectError(.invalidQuery) { _ = try view.query(ViewQuery(startKey: 6, endKey: 3)) }
    expectError(.invalidQuery) {
      _ = try view.query(ViewQuery(startKey: 3, endKey: 6, descending: true))
    }
  }

  @Test func documentIDsBoundRowsOfEqualKeys() throws {
    let tags = db.collection("tags")
    try tags.putAll((0..<6).map { ["_id": .string("t\($0)"), "tag": $0 < 3 ? "a" : "b"] })
    let view = try tags.defineView(json: ["name": "byTag", "key": "tag"])
    func ids(_ query: ViewQuery) throws -> [String] { try view.query(query).rows.compactMap(\.id) }
    #expect(
      try ids(ViewQuery(startKey: "a", startKeyDocID: "t1")) == ["t1", "t2", "t3", "t4", "t5"])
    #expect(try ids(ViewQuery(endKey: "b", endKeyDocID: "t4")) == ["t0", "t1", "t2", "t3", "t4"])
    #expect(
      try ids(ViewQuery(endKey: "b", endKeyDocID: "t4", inclusiveEnd: false)) == [
        "t0", "t1", "t2", "t3",
      ])
    #expect(
      try ids(
        ViewQuery(
          startKey: "b", endKey: "a", startKeyDocID: "t4", endKeyDocID: "t1", descending: true))
        == ["t4", "t3", "t2", "t1"])
  }

  @Test func prefixMatchingAndTheObjectMaximum() throws {
    let words = db.collection("words")
    try words.putAll(
      ["foo", "fool", "foolish", "fop", "fo", "Foo"].enumerated().map {
        [
          "_id": .string("w\($0.offset)"), "word": .string($0.element),
          "pair": [.string(String($0.element.prefix(2))), .string($0.element)],
        ]
      })
    let byWord = try words.defineView(json: ["name": "byWord", "key": "word"])
    func keys(_ query: ViewQuery) throws -> [JSON] { try byWord.query(query).rows.map(\.key) }
    #expect(
      try keys(ViewQuery(startKey: "foo", endKey: "foo", prefixMatchLevel: 1)) == [
        "foo", "Foo", "fool", "foolish",
      ])
    #expect(try keys(ViewQuery(key: "fool", prefixMatchLevel: 1)) == ["fool", "foolish"])
    // "Foo" differs from "foo" at the third level (case): another key.
    #expect(try keys(ViewQuery(startKey: "foo", endKey: "foo")) == ["foo"])
    let byPair = try words.defineView(json: ["name": "byPair", "key": "pair"])
    func pairs(_ query: ViewQuery) throws -> [JSON] {
      try byPair.query(query).rows.map { $0.key[1] ?? nil }
    }
    #expect(
      try pairs(ViewQuery(startKey: ["fo"], endKey: ["fo", [:]])) == [
        "fo", "foo", "fool", "foolish", "fop",
      ])
    #expect(
      try pairs(ViewQuery(startKey: ["fo"], endKey: ["fo"], prefixMatchLevel: 1)) == [
        "fo", "foo", "fool", "foolish", "fop",
      ])
    #expect(
      try pairs(ViewQuery(startKey: ["fo", "foo"], endKey: ["fo", "foo"], prefixMatchLevel: 2)) == [
        "foo", "fool", "foolish",
      ])
  }

  @Test func builtInReduces() throws {
    let counted = try numbers.view("count", version: "1", reduce: .count) { doc, emit in
      emit([.bool((doc["n"]?.intValue ?? 0) % 2 == 0), doc["n"] ?? nil], doc["n"] ?? nil)
    }
    #expect(try counted.query().rows == [ViewRow(key: nil, value: 20)])
    #expect(try counted.query(ViewQuery(groupLevel: 1)).rows.map(\.value) == [10, 10])
    #expect(try counted.query(ViewQuery(groupLevel: 1)).rows.map(\.key) == [[false], [true]])
    #expect(try counted.query(ViewQuery(group: true)).rows.count == 20)
    #expect(try counted.query(ViewQuery(skip: 1, groupLevel: 1)).rows.map(\.key) == [[true]])
    #expect(try counted.query(ViewQuery(limit: 2, reduce: false)).rows.map(\.id) == ["n1", "n3"])
    let summed = try numbers.view("sum", version: "1", reduce: .sum) { doc, emit in
      let n = doc["n"]?.intValue ?? 0
      emit(doc["n"] ?? nil, n % 5 == 0 ? [.int(Int64(n)), 1] : .int(Int64(n)))
    }
    // Numbers and arrays of numbers mixed: arrays sum element by element, and a number
    // adds to an array's first element (CouchDB's sum_values), in either order.
    #expect(try summed.query().rows.map(\.value) == [[190, 4]])
    #expect(try summed.query(ViewQuery(descending: true)).rows.map(\.value) == [[190, 4]])
    #expect(try summed.query(ViewQuery(startKey: 4, endKey: 5)).rows.map(\.value) == [[9, 1]])
    let strings = try numbers.view("sum strings", version: "1", reduce: .sum) { doc, emit in
      emit(doc["n"] ?? nil, (doc["n"]?.intValue ?? 0) == 7 ? "seven" : [1])
    }
    // Anything else makes its group's value CouchDB's error object, naming the value;
    // the other groups reduce as before, and the query succeeds.
    let failed = try strings.query().rows
    #expect(failed.count == 1)
    #expect(failed[0].value["error"] == "builtin_reduce_error")
    #expect(failed[0].value["caused_by"] == "seven")
    #expect(failed[0].value["reason"]?.stringValue?.hasPrefix("The _sum function requires") == true)
    let grouped = try strings.query(ViewQuery(startKey: 6, endKey: 8, group: true)).rows
    #expect(grouped.map(\.value) == [[1], failed[0].value, [1]])
    // Past a chunk (512 rows), the chunk's error is the rereduce's result too.
    let many = try numbers.view("sum many", version: "1", reduce: .sum) { doc, emit in
      for index in 0..<60 {
        emit(.int(Int64(index)), (doc["n"]?.intValue ?? 0) == 3 && index == 59 ? "x" : 1)
      }
    }
    #expect(try many.query().rows.map { $0.value["caused_by"] } == ["x"])
    #expect(try many.query(ViewQuery(endKey: 2)).rows.map(\.value) == [60])
    #expect(try summed.query(ViewQuery(startKey: 1, endKey: 4)).rows[0].value == 10)
    #expect(
      try summed.query(ViewQuery(keys: [5, 10], group: true)).rows.map(\.value) == [
        [5, 1], [10, 1],
      ])
    let stats = try numbers.view("stats", version: "1", reduce: .stats) { doc, emit in
      emit(nil, doc["n"] ?? nil)
    }
    #expect(
      try stats.query().rows[0].value
        == ["sum": 190, "count": 20, "min": 0, "max": 19, "sumsqr": .double(2470)])
  }

  /// Group levels are found by seeking group to group, then (past 64 groups) by SQLite's
  /// GROUP BY: skip and limit across that boundary, in both directions.
  @Test(arguments: [false, true])
  func manyGroupsAtALevel(descending: Bool) throws {
    let pairs = db.collection("pairs")
    try pairs.putAll(
      (0..<300).map {
        ["_id": .string("p\($0)"), "g": .int(Int64($0 % 100)), "n": .int(Int64($0))]
      })
    let counted = try pairs.defineView(json: [
      "name": "byG", "key": ["g", "n"], "value": "n", "reduce": "_sum",
    ])
    let all = try counted.query(ViewQuery(descending: descending, groupLevel: 1)).rows
    let groups = (0..<100).map { g in
      ViewRow(key: [.int(Int64(g))], value: .int(Int64(3 * g + 300)))
    }
    #expect(all == (descending ? groups.reversed() : groups))
    let page = try counted.query(
      ViewQuery(descending: descending, skip: 60, limit: 10, groupLevel: 1)
    ).rows
    #expect(page == Array(all[60..<70]))
    #expect(
      try counted.query(ViewQuery(startKey: [10], endKey: [12, [:]], groupLevel: 1)).rows
        == Array(groups[10...12]))
  }

  @Test func customReducesRereduceOverChunks() throws {
    let many = db.collection("many")
    try many.putAll(
      (0..<1300).map {
        ["_id": .string(String(format: "m%04d", $0)), "group": .int(Int64($0 % 2))]
      })
    let calls = Guarded<[Bool]>([])
    let view = try many.view(
      "perGroup", version: "1",
      reduce: .custom { keys, values, rereduce in
        calls.mutate { $0.append(rereduce) }
        if rereduce { return .int(values.reduce(0) { $0 + ($1.int64Value ?? 0) }) }
        #expect(keys.count == values.count && keys.first?.arrayValue?.count == 2)
        return .int(Int64(values.count))
      }
    ) { doc, emit in emit(doc["group"] ?? nil, 1) }
    #expect(try view.query().rows == [ViewRow(key: nil, value: 1300)])
    #expect(calls.value.filter { $0 }.count == 1 && calls.value.filter { !$0 }.count == 3)
    #expect(try view.query(ViewQuery(group: true)).rows.map(\.value) == [650, 650])
  }

  @Test func keysOfEveryTypeSortAsCouchDBs() throws {
    let mixed = db.collection("mixed")
    let values: [JSON] = [
      ["b": 2, "c": 2], ["b": 2, "a": 1], ["a": 1], ["b", "c"], ["a"], "b", "B", "a", "A", 2, 1,
      true, false, nil,
    ]
    try mixed.putAll(
      values.enumerated().map { ["_id": .string("k\($0.offset)"), "k": $0.element] })
    let view = try mixed.defineView(json: ["name": "byK", "key": "k"])
    #expect(
      try view.query().rows.map(\.key)
        == [
          nil, false, true, 1, 2, "a", "A", "b", "B", ["a"], ["b", "c"], ["a": 1],
          ["b": 2, "a": 1], ["b": 2, "c": 2],
        ])
    let raw = try mixed.defineView(json: ["name": "raw", "key": "k", "collation": "raw"])
    #expect(
      try raw.query().rows.map(\.key)
        == [
          1, 2, false, nil, true, ["a": 1], ["b": 2, "a": 1], ["b": 2, "c": 2], ["a"], ["b", "c"],
          "A", "B", "a", "b",
        ])
  }

  @Test func viewsCatchUpWithEveryWrite() throws {
    let view = try byN()
    #expect(try view.query().totalRows == 20)
    try numbers.put(["_id": "n20", "n": 20])  // create
    try numbers.upsert(["_id": "n0", "n": 100])  // update moves the row
    try numbers.delete(try #require(try numbers.get("n1")))  // delete drops it
    #expect(try keys(view, ViewQuery(startKey: 18)) == [18, 19, 20, 100])
    #expect(try keys(view, ViewQuery(endKey: 2)) == [2])
    try numbers.put(["_id": "n1", "n": 1])  // re-create
    let result = try view.query(ViewQuery(endKey: 2))
    #expect(result.rows.map(\.key) == [1, 2] && result.totalRows == 21)
    #expect(result.updateSeq == (try numbers.changes().last?.seq))
  }

  @Test func staleOkAnswersFromStoredRowsAndUpdateAfterCatchesUp() throws {
    let view = try byN()
    _ = try view.query()
    try numbers.put(["_id": "n20", "n": 20])
    #expect(try view.query(ViewQuery(stale: .ok)).totalRows == 20)
    #expect(try view.query(ViewQuery(stale: .updateAfter)).totalRows == 20)
    // The update runs after the answer; wait for it.
    for _ in 0..<200 where try view.query(ViewQuery(stale: .ok)).totalRows == 20 {
      Thread.sleep(forTimeInterval: 0.01)
    }
    #expect(try view.query(ViewQuery(stale: .ok)).totalRows == 21)
  }

  @Test func aNewVersionRebuildsAndTheSameVersionKeepsRows() throws {
    var view = try byN()
    #expect(try view.query(ViewQuery(limit: 1)).rows.first?.value == 0)
    view = try numbers.view("byN", version: "2") { doc, emit in emit(doc["n"] ?? nil, "v2") }
    #expect(try view.query(ViewQuery(limit: 1)).rows.first?.value == "v2")
    #expect(try numbers.views().map(\.version) == ["2"])
    try numbers.deleteView(named: "byN")
    #expect(try numbers.views().isEmpty)
    expectError(.notFound) { _ = try view.query() }
  }

  @Test func mapErrorsNameTheDocumentAndAreNotLost() throws {
    struct Refused: Error, CustomStringConvertible {
      var description: String { "odd numbers refused" }
    }
    let view = try numbers.view("even", version: "1") { doc, emit in
      if (doc["n"]?.intValue ?? 0) % 2 == 1 { throw Refused() }
      emit(doc["n"] ?? nil, nil)
    }
    let first = try view.query()
    #expect(first.rows.count == 10 && first.errors.count == 10)
    #expect(first.errors.first == ViewMapError(documentID: "n1", message: "odd numbers refused"))
    // Reported again by later queries, until the document changes.
    #expect(try view.query().errors.count == 10)
    try numbers.upsert(["_id": "n1", "n": 2])
    #expect(try view.query().errors.count == 9)
  }

  @Test func optionsThatConflictAreQueryErrors() throws {
    let plain = try byN()
    let reduced = try numbers.view("reduced", version: "1", reduce: .count) { doc, emit in
      emit(doc["n"] ?? nil, nil)
    }
    for (view, query) in [
      (plain, ViewQuery(group: true)), (plain, ViewQuery(reduce: true)),
      (reduced, ViewQuery(includeDocs: true)), (reduced, ViewQuery(keys: [1, 2])),
      (reduced, ViewQuery(keys: [1, 2], groupLevel: 1)),
      (plain, ViewQuery(key: 1, startKey: 1)), (plain, ViewQuery(keys: [1], endKey: 2)),
      (plain, ViewQuery(skip: -1)), (plain, ViewQuery(limit: -1)),
      (reduced, ViewQuery(groupLevel: -1)),
    ] {
      expectError(.invalidQuery) { _ = try view.query(query) }
    }
    #expect(try reduced.query(ViewQuery(keys: [1, 2], group: true)).rows.map(\.value) == [1, 1])
    // One key reduces without grouping, as CouchDB reduces it: one row, key null.
    let one = try reduced.query(ViewQuery(keys: [1])).rows
    #expect(one.map(\.key) == [.null] && one.map(\.value) == [1])
    #expect(
      try reduced.query(ViewQuery(limit: 1, reduce: false, includeDocs: true)).rows[0].document?[
        "n"] == 0)
  }

  @Test func queryOptionsParseFromCouchDBsNames() throws {
    let query = try ViewQuery(
      json: JSONParser.parse(
        #"{"startkey": ["a"], "end_key": ["a", {}], "inclusive_end": false, "descending": true, "skip": 1, "limit": 2, "group_level": 1, "reduce": true, "include_docs": false, "stale": "ok", "startkey_docid": "x", "endkey_docid": "y", "conflicts": true}"#
      ))
    #expect(
      query
        == ViewQuery(
          startKey: ["a"], endKey: ["a", [:]], startKeyDocID: "x", endKeyDocID: "y",
          inclusiveEnd: false,
          descending: true, skip: 1, limit: 2, reduce: true, groupLevel: 1, stale: .ok))
    #expect(try ViewQuery(json: ["update": "lazy"]).stale == .updateAfter)
    for bad in [
      #"{"limit": -1}"#, #"{"limt": 1}"#, #"{"descending": "yes"}"#, #"{"stale": "never"}"#, "[]",
      #"{"keys": 1}"#,
    ] {
      expectError(.invalidQuery) { _ = try ViewQuery(json: JSONParser.parse(bad)) }
    }
  }

  @Test func declarativeDefinitionsAreChecked() throws {
    for bad in [
      #"{"key": "a"}"#, #"{"name": "v"}"#, #"{"name": "v", "key": []}"#,
      #"{"name": "v", "key": "a..b"}"#,
      #"{"name": "v", "key": "a", "each": "b"}"#,
      #"{"name": "v", "key": ["a", "b"], "each": true}"#,
      #"{"name": "v", "key": "a", "reduce": "_median"}"#,
      #"{"name": "v", "key": "a", "collation": "ascii"}"#,
      #"{"name": "v", "key": "a", "filter": {"$bad": 1}}"#,
      #"{"name": "v", "key": "a", "extra": 1}"#,
      #"{"name": "_v", "key": "a"}"#, #"{"name": "", "key": "a"}"#,
      #"{"name": "v", "key": "a", "value": 3}"#,
    ] {
      expectError(.invalidArgument) { _ = try numbers.defineView(json: JSONParser.parse(bad)) }
    }
  }

  /// Design documents, one deleted, and ids on both sides of their range (`^` and `` ` ``
  /// sort just before and after `_`).
  func designsAtTheEdges() throws {
    for id in ["^design/x", "_design/b", "_design/a", "`design/x", "a"] {
      try numbers.put(["_id": .string(id), "views": [:]])
    }
    try numbers.delete(try #require(try numbers.get("_design/b")))
    try numbers.put(["_id": "_design/c", "language": "javascript"])
  }

  /// The design documents and their revisions, from the `_design/` id range alone:
  /// deleted ones and the ids around the range are not among them, and both reads agree.
  @Test func designDocumentsAndTheirRevisions() throws {
    try designsAtTheEdges()
    let designs = try numbers.designDocuments()
    #expect(designs.map(\.id) == ["_design/a", "_design/c"])
    #expect(designs[1]["language"] == "javascript")
    #expect(
      try numbers.designRevisions() == designs.map { "\($0.id) \($0.rev?.description ?? "")" })
    #expect(try db.collection("empty").designDocuments().isEmpty)
  }

  @Test func designDocumentsHaveAsyncForms() async throws {
    try await Task.detached { [self] in try designsAtTheEdges() }.value
    let designs = try await numbers.designDocuments()
    #expect(designs.map(\.id) == ["_design/a", "_design/c"])
    #expect(
      try await numbers.designRevisions() == designs.map { "\($0.id) \($0.rev?.description ?? "")" }
    )
  }

  @Test func allDocumentsTakesTheSameOptions() throws {
    try numbers.put(["_id": "_design/app"])
    try numbers.delete(try #require(try numbers.get("n5")))
    func ids(_ query: ViewQuery) throws -> [String] {
      try numbers.allDocuments(query).rows.compactMap(\.id)
    }
    let all = try numbers.allDocuments()
    #expect(all.totalRows == 20 && all.rows.first?.id == "_design/app")
    #expect(
      all.rows[1].value == ["rev": .string(try #require(try numbers.get("n0")).rev!.description)])
    #expect(try ids(ViewQuery(startKey: "n1", endKey: "n12")) == ["n1", "n10", "n11", "n12"])
    #expect(
      try ids(ViewQuery(startKey: "n12", endKey: "n1", inclusiveEnd: false, descending: true)) == [
        "n12", "n11", "n10",
      ])
    #expect(try ids(ViewQuery(descending: true, limit: 2)) == ["n9", "n8"])
    #expect(try ids(ViewQuery(key: "n1", prefixMatchLevel: 1)).count == 11)
    let byKeys = try numbers.allDocuments(ViewQuery(keys: ["n2", "n5", "zz"], includeDocs: true))
    #expect(byKeys.rows[0].document?["n"] == 2)
    #expect(byKeys.rows[1].value["deleted"] == true && byKeys.rows[1].json["doc"] == .null)
    #expect(byKeys.rows[2].json == ["key": "zz", "error": "not_found"])
    #expect(try numbers.allDocuments(ViewQuery(startKey: "n3", includeOffset: true)).offset == 14)
    expectError(.invalidQuery) { _ = try numbers.allDocuments(ViewQuery(startKey: 1)) }
    expectError(.invalidQuery) { _ = try numbers.allDocuments(ViewQuery(group: true)) }
  }
}
