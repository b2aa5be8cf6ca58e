import Foundation
import Settee
import SetteeCore
import SetteeJavaScript
import Testing

/// Scenarios of CouchDB's own view tests (`test/elixir/test/multiple_rows_test.exs`,
/// `reduce_test.exs` and `view_collation_test.exs` in apache/couchdb), run on Settee's
/// JavaScript views with the documents, map and reduce functions and queries those tests
/// use, and CouchDB's answers as they assert them.
@Suite(.enabled(if: DesignFunctions.isAvailable, "JavaScriptCore (libjavascriptcoregtk-4.1-0) is not installed"))
struct CouchDBViewSuiteTests {
  let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
    "settee-js-suite-\(UUID().uuidString)")
  let database: Database

  init() throws {
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    database = try Database(path: directory.appendingPathComponent("suite.db").path)
  }

  /// A collection holding `documents` and the design document `_design/foo` with `views`.
  func collection(_ name: String, _ documents: [JSONObject], views: JSON) throws
    -> DocumentCollection
  {
    let collection = database.collection(name)
    try collection.putAll(documents)
    try collection.put(["_id": "_design/foo", "language": "javascript", "views": views])
    return collection
  }

  /// A query given as CouchDB's parameters.
  func query(_ view: View, _ parameters: JSON) throws -> ViewResult {
    try view.query(ViewQuery(json: parameters))
  }

  /// multiple_rows: a map that emits a row per city; an edit adds a row, a deletion
  /// removes the document's rows.
  @Test func multipleRowsPerDocument() throws {
    let states = try collection(
      "states",
      [
        ["_id": "NC", "cities": ["Charlotte", "Raleigh"]],
        ["_id": "MA", "cities": ["Boston", "Lowell", "Worcester", "Cambridge", "Springfield"]],
        ["_id": "FL", "cities": ["Miami", "Tampa", "Orlando", "Springfield"]],
      ],
      views: [
        "view": [
          "map":
            "function(doc) { for (var i = 0; i < doc.cities.length; i++) emit(doc.cities[i] + \", \" + doc._id, null); }"
        ]
      ])
    let view = try states.designView("foo/view")
    let first = try view.query()
    #expect(
      first.rows.map(\.key) == [
        "Boston, MA", "Cambridge, MA", "Charlotte, NC", "Lowell, MA", "Miami, FL", "Orlando, FL",
        "Raleigh, NC", "Springfield, FL", "Springfield, MA", "Tampa, FL", "Worcester, MA",
      ])
    #expect(first.totalRows == 11)
    let nc = try #require(try states.get("NC"))
    try states.put([
      "_id": "NC", "_rev": .string(nc.rev!.description),
      "cities": ["Charlotte", "Raleigh", "Wilmington"],
    ])
    let second = try view.query()
    #expect(second.rows.map(\.key)[9...11] == ["Tampa, FL", "Wilmington, NC", "Worcester, MA"])
    #expect(second.totalRows == 12)
    try states.delete(try #require(try states.get("MA")))
    let third = try view.query()
    #expect(
      third.rows.map(\.key) == [
        "Charlotte, NC", "Miami, FL", "Orlando, FL", "Raleigh, NC", "Springfield, FL",
        "Tampa, FL", "Wilmington, NC",
      ])
    #expect(third.totalRows == 7)
  }

  /// reduce, "Basic reduce functions": 500 documents, each emitted twice, summed by a
  /// JavaScript reduce over ranges and groups.
  @Test func basicReduceFunctions() throws {
    let count = 500
    let docs = try collection(
      "basic",
      (1...count).map { ["_id": .string("\($0)"), "integer": .int(Int64($0)), "string": .string("\($0)")] },
      views: [
        "bar": [
          "map": "function (doc) { emit(doc.integer, doc.integer); emit(doc.integer, doc.integer); };",
          "reduce": "function (keys, values) { return sum(values); };",
        ]
      ])
    let view = try docs.designView("foo/bar")
    func summate(_ n: Int) -> Int { (n + 1) * n / 2 }
    #expect(try view.query().rows.first?.value == .int(Int64(2 * summate(count))))
    for (start, end, sum) in [(4, 4, 8), (4, 5, 18), (4, 6, 30)] {
      let rows = try query(view, ["startkey": .int(Int64(start)), "endkey": .int(Int64(end))]).rows
      #expect(rows.first?.value == .int(Int64(sum)), "\(start)...\(end)")
    }
    #expect(try query(view, ["group": true, "limit": 3]).rows.map(\.value) == [2, 4, 6])
    for step in 1...(count / 30 + 1) where step * 30 + 1 < count / 2 {
      let i = step * 30 + 1
      let rows = try query(view, ["startkey": .int(Int64(i)), "endkey": .int(Int64(count - i))])
        .rows
      #expect(rows.first?.value == .int(Int64(2 * (summate(count - i) - summate(i - 1)))), "\(i)")
    }
  }

  /// reduce, "More complex array key view row testing": array keys grouped exactly and by
  /// level, with an end key in and out of the range (two rounds of the test's five).
  @Test func arrayKeysByGroupLevel() throws {
    let keys: [JSON] = [
      ["a"], ["a"], ["a", "b"], ["a", "b"], ["a", "b", "c"], ["a", "b", "d"], ["a", "c", "d"],
      ["d"], ["d", "a"], ["d", "b"], ["d", "c"],
    ]
    let docs = try collection(
      "arrays", [],
      views: [
        "bar": [
          "map": "function (doc) { emit(doc.keys, 1); };",
          "reduce": "function (keys, values) { return sum(values); };",
        ]
      ])
    let view = try docs.designView("foo/bar")
    func rows(_ parameters: JSON) throws -> [JSON] {
      try query(view, parameters).rows.map { ["key": $0.key, "value": $0.value] }
    }
    for i in 1...2 {
      for _ in 0..<10 { try docs.putAll(keys.map { ["keys": $0] }) }
      let n = Int64(i)
      let exact = try rows(["group": true])
      #expect(
        Array(exact.prefix(4)) == [
          ["key": ["a"], "value": .int(20 * n)], ["key": ["a", "b"], "value": .int(20 * n)],
          ["key": ["a", "b", "c"], "value": .int(10 * n)],
          ["key": ["a", "b", "d"], "value": .int(10 * n)],
        ])
      let limited = try rows(["group": true, "limit": 2])
      #expect(limited.count == 2 && limited.first == ["key": ["a"], "value": .int(20 * n)])
      let byLevel: [JSON] = [
        ["key": ["a"], "value": .int(20 * n)], ["key": ["a", "b"], "value": .int(40 * n)],
        ["key": ["a", "c"], "value": .int(10 * n)], ["key": ["d"], "value": .int(10 * n)],
        ["key": ["d", "a"], "value": .int(10 * n)], ["key": ["d", "b"], "value": .int(10 * n)],
        ["key": ["d", "c"], "value": .int(10 * n)],
      ]
      #expect(try rows(["group_level": 2]) == byLevel)
      #expect(
        try rows(["group_level": 2, "endkey": ["d"], "inclusive_end": true])
          == Array(byLevel.prefix(4)))
      #expect(
        try rows(["group_level": 2, "endkey": ["d"], "inclusive_end": false])
          == Array(byLevel.prefix(3)))
    }
  }

  /// reduce, "More complex reductions that need to use the combine option": a standard
  /// deviation whose rereduce combines partial results.
  @Test func aReduceThatRereduces() throws {
    let values = (0..<10).flatMap { _ in (1...10).map { ["val": JSON.int(Int64($0 * 10))] } }
    let docs = try collection(
      "deviation", values.map { JSONObject($0.map { ($0.key, $0.value) }) },
      views: [
        "bar": [
          "map": "function (doc) { emit(doc.val, doc.val); };",
          "reduce": """
            function (keys, values, rereduce) {
              var count = 0, total = 0.0, sqrTotal = 0.0;
              if (!rereduce) {
                for (var i in values) { total = total + values[i]; sqrTotal = sqrTotal + values[i] * values[i]; }
                count = values.length;
              } else {
                for (var i in values) { count = count + values[i].count; total = total + values[i].total; sqrTotal = sqrTotal + values[i].sqrTotal; }
              }
              var variance = (sqrTotal - ((total * total) / count)) / count;
              return {"stdDeviation": Math.sqrt(variance), "count": count, "total": total, "sqrTotal": sqrTotal};
            }
            """,
        ]
      ])
    let value = try docs.designView("foo/bar").query().rows.first?.value
    let deviation = try #require(value?["stdDeviation"]?.doubleValue)
    #expect(abs(deviation - 28.722813232690143) < 1e-10)
    #expect(value?["count"] == 100)
  }

  /// reduce, "Reduce pagination": `_count` over three rows a document, cut by key and
  /// document id, ascending and descending, with and without the end.
  @Test(arguments: [
    // group=false: the count.
    (#"{"startkey": 400, "endkey": 402}"#, "9"),
    (#"{"startkey": 402, "endkey": 400, "descending": true}"#, "9"),
    (#"{"startkey": 400, "endkey": 402, "inclusive_end": false}"#, "6"),
    (#"{"startkey": 402, "endkey": 400, "inclusive_end": false, "descending": true}"#, "6"),
    (#"{"startkey": 400, "endkey": 402, "endkey_docid": "400"}"#, "7"),
    (#"{"startkey": 400, "endkey": 402, "endkey_docid": "400", "inclusive_end": false}"#, "6"),
    (#"{"startkey": 400, "endkey": 402, "endkey_docid": "401"}"#, "8"),
    (#"{"startkey": 400, "endkey": 402, "endkey_docid": "401", "inclusive_end": false}"#, "7"),
    (#"{"startkey": 400, "endkey": 402, "endkey_docid": "402"}"#, "9"),
    (#"{"startkey": 400, "endkey": 402, "endkey_docid": "402", "inclusive_end": false}"#, "8"),
    (#"{"startkey": 402, "endkey": 400, "endkey_docid": "398", "descending": true}"#, "9"),
    (#"{"startkey": 402, "endkey": 400, "endkey_docid": "398", "descending": true, "inclusive_end": false}"#, "8"),
    (#"{"startkey": 402, "endkey": 400, "endkey_docid": "399", "descending": true}"#, "8"),
    (#"{"startkey": 402, "endkey": 400, "endkey_docid": "399", "descending": true, "inclusive_end": false}"#, "7"),
    (#"{"startkey": 402, "endkey": 400, "endkey_docid": "400", "descending": true}"#, "7"),
    (#"{"startkey": 402, "endkey": 400, "endkey_docid": "400", "descending": true, "inclusive_end": false}"#, "6"),
    (#"{"startkey": 402, "endkey": 400, "startkey_docid": "400", "descending": true}"#, "7"),
    (#"{"startkey": 402, "endkey": 400, "startkey_docid": "401", "descending": true, "inclusive_end": false}"#, "5"),
    // group=true: each key's count.
    (#"{"group": true, "startkey": 400, "endkey": 402}"#, "[[400,3],[401,3],[402,3]]"),
    (#"{"group": true, "startkey": 402, "endkey": 400, "descending": true}"#, "[[402,3],[401,3],[400,3]]"),
    (#"{"group": true, "startkey": 400, "endkey": 402, "inclusive_end": false}"#, "[[400,3],[401,3]]"),
    (#"{"group": true, "startkey": 402, "endkey": 400, "inclusive_end": false, "descending": true}"#, "[[402,3],[401,3]]"),
    (#"{"group": true, "startkey": 400, "endkey": 402, "endkey_docid": "401"}"#, "[[400,3],[401,3],[402,2]]"),
    (#"{"group": true, "startkey": 400, "endkey": 402, "endkey_docid": "400"}"#, "[[400,3],[401,3],[402,1]]"),
    (#"{"group": true, "startkey": 402, "endkey": 400, "startkey_docid": "401", "descending": true}"#, "[[402,2],[401,3],[400,3]]"),
    (#"{"group": true, "startkey": 402, "endkey": 400, "startkey_docid": "400", "descending": true}"#, "[[402,1],[401,3],[400,3]]"),
    (#"{"group": true, "startkey": 402, "endkey": 400, "startkey_docid": "401", "descending": true, "inclusive_end": false}"#, "[[402,2],[401,3]]"),
    (#"{"group": true, "startkey": 402, "endkey": 400, "startkey_docid": "400", "descending": true, "inclusive_end": false}"#, "[[402,1],[401,3]]"),
    (#"{"group": true, "startkey": 402, "endkey": 400, "endkey_docid": "398", "descending": true, "inclusive_end": true}"#, "[[402,3],[401,3],[400,3]]"),
    (#"{"group": true, "startkey": 402, "endkey": 400, "endkey_docid": "399", "descending": true, "inclusive_end": true}"#, "[[402,3],[401,3],[400,2]]"),
    (#"{"group": true, "startkey": 402, "endkey": 400, "endkey_docid": "399", "descending": true, "inclusive_end": false}"#, "[[402,3],[401,3],[400,1]]"),
    (#"{"group": true, "startkey": 402, "endkey": 400, "endkey_docid": "400", "descending": true, "inclusive_end": false}"#, "[[402,3],[401,3]]"),
  ])
  func reducePagination(_ parameters: String, _ expected: String) throws {
    let docs = database.collection("pagination")
    if try docs.get("_design/foo") == nil {
      try docs.putAll((0...1122).map { ["_id": .string("\($0)"), "int": .int(Int64($0))] })
      try docs.put([
        "_id": "_design/foo",
        "views": [
          "bar": [
            "reduce": "_count",
            "map": "function(doc) { emit(doc.int, doc._id); emit(doc.int + 1, doc._id); emit(doc.int + 2, doc._id); }",
          ]
        ],
      ])
    }
    let rows = try query(try docs.designView("foo/bar"), try JSONParser.parse(parameters)).rows
    let answer: JSON =
      rows.count == 1 && rows[0].key == .null
      ? rows[0].value : .array(rows.map { [$0.key, $0.value] })
    #expect(answer == (try JSONParser.parse(expected)), "\(parameters)")
  }

  /// view_collation: every kind of key emitted by JavaScript, in CouchDB's order both ways,
  /// found by `key`, and cut by an end key in and out of the range.
  @Test func viewCollation() throws {
    let values: [JSON] = [
      .null, false, true, 1, 2, 3, 4, "a", "A", "aa", "b", "B", "ba", "bb", ["a"], ["b"],
      ["b", "c"], ["b", "c", "a"], ["b", "d"], ["b", "d", "e"], ["a": 1], ["a": 2], ["b": 1],
      ["b": 2], .object(JSONObject([("b", 2), ("a", 1)])), .object(JSONObject([("b", 2), ("c", 2)])),
    ]
    // The test emits 3.0, which JavaScript holds and prints as 3.
    let docs = try collection(
      "collation",
      values.enumerated().map { ["_id": .string("\($0.offset + 1)"), "foo": $0.element] },
      views: ["foo": ["map": "function(doc) { emit(doc.foo, null); }"]])
    let view = try docs.designView("foo/foo")
    #expect(try view.query().rows.map(\.key) == values)
    #expect(try query(view, ["descending": true]).rows.map(\.key) == values.reversed())
    for value in values {
      #expect(try query(view, ["key": value]).rows.map(\.key) == [value], "\(value)")
    }
    #expect(try query(view, ["endkey": "b", "inclusive_end": true]).rows.last?.key == "b")
    #expect(
      try query(view, ["endkey": "b", "inclusive_end": true, "descending": true]).rows.last?.key
        == "b")
    #expect(try query(view, ["endkey": "b", "inclusive_end": false]).rows.last?.key == "aa")
    #expect(
      try query(view, ["endkey": "b", "inclusive_end": false, "descending": true]).rows.last?.key
        == "B")
    #expect(
      try query(view, ["endkey": "b", "endkey_docid": "11", "inclusive_end": false]).rows.last?
        .key == "aa")
    #expect(
      try query(view, ["endkey": "b", "endkey_docid": "12", "inclusive_end": false]).rows.last?
        .key == "b")
  }
}
