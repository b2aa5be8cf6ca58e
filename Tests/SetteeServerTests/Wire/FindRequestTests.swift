import Foundation
import Settee
import SetteeCore
import SetteeTestSupport
import Testing

/// A `_find` or `_explain` request of the wrong shape is refused with Mango's error names
/// (issue 56; the conformance recording's requests 755–766 are the contract).
@Suite("settee serve: the shape of a _find request, as CouchDB 3.5 checks it")
struct FindRequestTests {
  let directory = TemporaryDirectory()

  @Test func refusalsNameWhatIsWrong() async throws {
    let server = try await ServerProcess(db: directory.path("find.db"))
    try await server.request("PUT", "/db")
    try await server.put("/db/a", ["n": 1])
    let table: [(body: JSON, error: String?)] = [
      ([:], "missing_required_key"),
      (["selector": "x"], "invalid_selector_json"),
      (["selector": [:], "limit": -1], "invalid_non_neg_integer"),
      (["selector": [:], "skip": 1.5], "invalid_non_neg_integer"),
      (["selector": [:], "sort": "n"], "invalid_sort_json"),
      (["selector": [:], "unknown_field": 1], "invalid_key"),
      // CouchDB's older `stale` is taken, and means nothing here.
      (["selector": [:], "stale": "ok", "limit": 1], nil),
      // An index use_index names that cannot serve, without fallback: invalid_index.
      (
        ["selector": ["n": 1], "use_index": "nonexistent", "allow_fallback": false], "invalid_index"
      ),
    ]
    for path in ["/db/_find", "/db/_explain"] {
      for row in table {
        let answer = try await server.post(path, row.body)
        if let error = row.error {
          #expect(
            answer.status == 400 && answer.error == error, "\(path) \(row.body): \(answer.text)")
        } else {
          #expect(answer.status == 200, "\(path) \(row.body): \(answer.text)")
        }
      }
    }
  }

  /// `_find` and `_explain` answer in CouchDB's dialect: the recording's indexes, and
  /// CouchDB 3.5.0's own answers to the same requests (`recording-1.json`, #599 and
  /// others), `settee` (Settee's plan) aside.
  @Test func findAndExplainAnswerAsCouchDB() async throws {
    let server = try await ServerProcess(db: directory.path("explain.db"))
    try await server.request("PUT", "/db")
    for index: JSON in [
      ["index": ["fields": ["type", "n"]], "ddoc": "mango-a", "name": "type-n", "type": "json"],
      ["index": ["fields": ["n"]], "ddoc": "mango-b", "name": "by-n", "type": "json"],
      [
        "index": ["fields": ["n"], "partial_filter_selector": ["type": "user"]], "ddoc": "mango-p",
        "name": "user-n", "type": "json",
      ],
      ["index": ["fields": ["name"]], "ddoc": "mango-c", "type": "json"],
      [
        "index": ["fields": ["score", "type"], "partial_filter_selector": ["active": true]],
        "ddoc": "mango-a", "name": "score-active", "type": "json",
      ],
    ] {
      #expect(try await server.post("/db/_index", index).status == 200)
    }
    try await server.post(
      "/db/_bulk_docs",
      [
        "docs": [
          ["_id": "a", "n": 5, "tags": ["blue", "red"], "name": "b"],
          ["_id": "b", "n": .null, "tags": "blue", "name": "B"],
          ["_id": "c", "n": "x", "name": "a"],
          ["_id": "d", "m": 1],
        ]
      ])
    var answer =
      try await server.post(
        "/db/_explain",
        ["selector": ["n": ["$gt": -263]], "limit": 1, "use_index": "nonexistent"]
      ).json.objectValue ?? [:]
    #expect(answer.removeValue(forKey: "settee") != nil)
    answer["dbname"] = "wd_diff_s1"
    var options = answer["opts"]?.objectValue ?? [:]
    #expect(options["bookmark"] == "nil")
    options["bookmark"] = "<bookmark>"
    answer["opts"] = .object(options)
    let couchDB = try JSONParser.parse(
      #"{"dbname": "wd_diff_s1", "index": {"ddoc": "_design/mango-b", "name": "by-n", "type": "json", "partitioned": false, "def": {"fields": [{"n": "asc"}]}}, "partitioned": false, "selector": {"n": {"$gt": -263}}, "opts": {"use_index": ["nonexistent"], "bookmark": "<bookmark>", "limit": 1, "skip": 0, "sort": {}, "fields": [], "partition": "", "r": 1, "conflicts": false, "stale": false, "update": true, "stable": false, "execution_stats": false, "allow_fallback": true}, "limit": 1, "skip": 0, "fields": [], "index_candidates": [{"index": {"ddoc": "_design/mango-p", "name": "user-n", "type": "json", "partitioned": false, "def": {"fields": [{"n": "asc"}], "partial_filter_selector": {"type": {"$eq": "user"}}}}, "analysis": {"usable": false, "reasons": [{"name": "is_partial"}], "ranking": 3, "covering": false}}, {"index": {"ddoc": "_design/mango-c", "name": "7e7070ae9a407fc3705687d27d573409610c4966", "type": "json", "partitioned": false, "def": {"fields": [{"name": "asc"}]}}, "analysis": {"usable": false, "reasons": [{"name": "field_mismatch"}], "ranking": 2, "covering": false}}, {"index": {"ddoc": "_design/mango-a", "name": "type-n", "type": "json", "partitioned": false, "def": {"fields": [{"type": "asc"}, {"n": "asc"}]}}, "analysis": {"usable": false, "reasons": [{"name": "field_mismatch"}], "ranking": 2, "covering": false}}, {"index": {"ddoc": "_design/mango-a", "name": "score-active", "type": "json", "partitioned": false, "def": {"fields": [{"score": "asc"}, {"type": "asc"}], "partial_filter_selector": {"active": {"$eq": true}}}}, "analysis": {"usable": false, "reasons": [{"name": "is_partial"}], "ranking": 3, "covering": false}}, {"index": {"ddoc": null, "name": "_all_docs", "type": "special", "def": {"fields": [{"_id": "asc"}]}}, "analysis": {"usable": true, "reasons": [{"name": "unfavored_type"}], "ranking": 1, "covering": null}}], "selector_hints": [{"type": "json", "indexable_fields": ["n"], "unindexable_fields": []}], "mrargs": {"include_docs": true, "view_type": "map", "reduce": false, "partition": null, "start_key": [-263], "end_key": ["<MAX>"], "direction": "fwd", "stable": false, "update": true, "conflicts": "undefined"}, "covering": false}"#
    )
    #expect(JSON.object(answer) == couchDB, "\(JSONWriter.string(.object(answer)))")

    // The same index's order (null before numbers before strings), CouchDB's matching
    // (no element of `tags` matches "blue"), and `fields` as named.
    let found = try await server.post(
      "/db/_find", ["selector": ["n": ["$lt": 10]], "fields": ["n", "_id"]]
    ).json
    #expect(found["docs"] == [["n": .null, "_id": "b"], ["n": 5, "_id": "a"]])
    #expect(found["warning"] == nil)
    let tagged = try await server.post("/db/_find", ["selector": ["tags": "blue"]]).json
    #expect(tagged["docs"]?.arrayValue?.map { $0["_id"] } == ["b"])
    #expect(
      tagged["warning"] == "No matching index found, create an index to optimize query time.")
    // Strings in ICU's order through the index on name: "a" < "b" < "B".
    let named = try await server.post(
      "/db/_find", ["selector": ["name": ["$gt": .null]], "fields": ["_id"]]
    ).json
    #expect(named["docs"] == [["_id": "c"], ["_id": "a"], ["_id": "b"]])
    let refused = try await server.post(
      "/db/_find", ["selector": ["m": 1], "sort": [["m": "asc"]]])
    #expect(refused.status == 400 && refused.error == "no_usable_index")
  }
}
