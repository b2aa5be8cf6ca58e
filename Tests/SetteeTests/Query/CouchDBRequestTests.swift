import Foundation
import Settee
import SetteeCore
import SetteeTestSupport
import Testing

/// The members CouchDB's clients send in `_find` bodies, and what the response carries
/// besides the documents (issue 15).
@Suite("CouchDB's _find: request members, bookmarks, warnings, statistics")
struct CouchDBRequestTests {
  let people: DocumentCollection

  init() throws {
    people = try Database(inMemoryWith: .init()).collection("people")
    var generator = RandomQueries(seed: 15)
    try people.putAll(
      (0..<60).map { number in
        var document = generator.document(number)
        document["n"] = .int(Int64(number % 7))
        if number % 5 == 0 { document["n"] = nil }
        if number % 11 == 0 { document["n"] = ["x", .int(Int64(number))] }
        return document
      })
  }

  func query(_ body: String) throws -> FindQuery { try FindQuery(json: JSONParser.parse(body)) }

  /// Pages through a query with its bookmarks until an empty page.
  func pages(_ start: FindQuery) throws -> [[String]] {
    var query = start
    var pages: [[String]] = []
    for _ in 0..<200 {
      let page = try people.findPage(query)
      if page.documents.isEmpty {
        #expect(page.bookmark == (query.bookmark ?? "nil"))
        return pages
      }
      pages.append(page.documents.map(\.id))
      query.bookmark = page.bookmark
    }
    Issue.record("paging did not end")
    return pages
  }

  @Test(arguments: [
    #"{"selector": {}}"#,
    #"{"selector": {"n": {"$gt": 1}}, "sort": ["n"]}"#,
    #"{"selector": {}, "sort": [{"n": "desc"}]}"#,
    #"{"selector": {}, "sort": [{"a": "asc"}, {"b": "desc"}]}"#,
    #"{"selector": {"n": {"$exists": true}}, "sort": [{"n": "desc"}], "fields": ["b"]}"#,
    #"{"selector": {"tags": {"$elemMatch": {"$gt": 0}}}, "sort": [{"tags": "desc"}]}"#,
    #"{"selector": {"n": {"$gte": 0}}, "sort": ["n"], "fields": ["n"]}"#,
  ])
  func bookmarksPageThroughEveryResultOnce(body: String) throws {
    for indexed in [false, true] {
      if indexed {
        try people.ensureIndexed(["n"], name: "n")
        try people.ensureIndexed(["a", "b"], name: "ab")
      }
      var query = try self.query(body)
      let all = try people.find(query).map(\.id)
      for size in [1, 4, 7] {
        query.limit = size
        let paged = try pages(query)
        #expect(paged.flatMap { $0 } == all, "\(body) limit \(size) indexed \(indexed)")
        #expect(paged.dropLast().allSatisfy { $0.count == size })
      }
    }
  }

  @Test func aBookmarkContinuesAfterItsDocumentWhateverIsWrittenMeanwhile() throws {
    var query = try self.query(#"{"selector": {"n": {"$gte": 0}}, "sort": ["n"], "limit": 5}"#)
    let first = try people.findPage(query)
    query.bookmark = first.bookmark
    // A document that sorts before the position, and the last one of the page, changed.
    try people.put(["_id": "aaa-new", "n": 0])
    let expected = try people.find(self.query(#"{"selector": {"n": {"$gte": 0}}, "sort": ["n"]}"#))
      .map(\.id)
    let second = try people.findPage(query)
    let after = expected.drop { $0 != first.documents.last!.id }.dropFirst().prefix(5)
    #expect(second.documents.map(\.id) == Array(after))
    #expect(!second.documents.contains { $0.id == "aaa-new" })
  }

  @Test func relevanceOrderPagesByCount() throws {
    try people.putAll([
      ["_id": "t1", "c": "doctor doctor"], ["_id": "t2", "c": "doctor"],
      ["_id": "t3", "c": "doctor nurse"],
    ])
    try people.ensureIndexed(["c"], name: "text", type: .text)
    let body =
      #"{"selector": {"$text": {"$search": "doctor"}}, "sort": [{"$relevance": "desc"}], "limit": 2}"#
    let all = try people.find(query(body.replacingOccurrences(of: #", "limit": 2"#, with: "")))
    #expect(try pages(query(body)).flatMap { $0 } == all.map(\.id))
  }

  @Test func badBookmarksAreInvalidQueries() throws {
    let page = try people.findPage(query(#"{"selector": {}, "sort": ["n"], "limit": 2}"#))
    for body in [
      #"{"selector": {}, "bookmark": "not-a-bookmark"}"#,
      #"{"selector": {}, "bookmark": 12}"#,
      // Another query's bookmark.
      #"{"selector": {}, "sort": [{"n": "desc"}], "bookmark": "\#(page.bookmark)"}"#,
    ] {
      expectError(.invalidQuery) { _ = try query(body) }
    }
    #expect(
      try people.findPage(query(#"{"selector": {}, "bookmark": "nil"}"#)).documents.count == 60)
    #expect(
      try people.findPage(query(#"{"selector": {}, "bookmark": null}"#)).documents.count == 60)
  }

  @Test func membersCouchDBClientsSendAreAccepted() throws {
    try people.ensureIndexed(["n"], name: "n")
    for body in [
      #"{"selector": {"n": 1}, "r": 1, "conflicts": false, "update": true, "stable": false}"#,
      #"{"selector": {"n": 1}, "use_index": null}"#, #"{"selector": {"n": 1}, "use_index": []}"#,
      #"{"selector": {"n": 1}, "use_index": "_design/n"}"#,
      #"{"selector": {"n": 1}, "use_index": ["_design/n", "n"]}"#,
      #"{"selector": {"n": 1}, "use_index": ["_design/n"]}"#,
      #"{"selector": {"n": 1}, "use_index": "_design/n/n"}"#,
      #"{"selector": {"n": 1}, "execution_stats": true, "allow_fallback": true}"#,
      #"{"selector": {"n": 1}, "conflicts": true}"#,
    ] {
      let page = try people.findPage(query(body))
      #expect(page.documents.count == 6, "\(body)")
      #expect(page.warning == nil, "\(body): \(page.warning ?? "")")
    }
    for body in [
      #"{"selector": {}, "r": 0}"#, #"{"selector": {}, "r": "1"}"#,
      #"{"selector": {}, "update": "yes"}"#, #"{"selector": {}, "conflicts": 1}"#,
      #"{"selector": {}, "use_index": {}}"#, #"{"selector": {}, "use_index": [1, 2]}"#,
      #"{"selector": {}, "use_index": "foo/bar/baz"}"#,
      #"{"selector": {}, "use_index": "_design/a/b/c"}"#,
      #"{"selector": {}, "execution_stats": null}"#, #"{"selector": {}, "bogus": 1}"#,
    ] {
      expectError(.invalidQuery) { _ = try query(body) }
    }
  }

  @Test func anUnusableIndexFallsBackWithAWarningUnlessFallbackIsOff() throws {
    let page = try people.findPage(query(#"{"selector": {"n": 1}, "use_index": "nope"}"#))
    #expect(page.documents.count == 6)
    #expect(
      page.warning
        == "_design/nope was not used because it does not contain a valid index for this query.\nNo matching index found, create an index to optimize query time."
    )
    expectError(.noUsableIndex) {
      _ = try people.findPage(
        query(#"{"selector": {"n": 1}, "use_index": "nope", "allow_fallback": false}"#))
    }
    let missing = try Database(inMemoryWith: .init()).collection("none")
    #expect(try missing.findPage(query(#"{"selector": {}, "use_index": "x"}"#)).warning != nil)
  }

  @Test func executionStatisticsCountWhatWasRead() throws {
    let scan = try people.findPage(query(#"{"selector": {"n": 1}, "execution_stats": true}"#))
    #expect(scan.executionStats?.totalDocsExamined == 60)
    #expect(scan.executionStats?.totalKeysExamined == 0)
    #expect(scan.executionStats?.resultsReturned == 6)
    try people.ensureIndexed(["n"], name: "n")
    let indexed = try people.findPage(query(#"{"selector": {"n": 1}, "execution_stats": true}"#))
    #expect(indexed.executionStats?.totalKeysExamined == 6)
    #expect(indexed.executionStats?.totalDocsExamined == 6)
    #expect(indexed.executionStats.map { $0.executionTimeMs >= 0 } == true)
    #expect(try people.findPage(query(#"{"selector": {}}"#)).executionStats == nil)
    let json = indexed.json
    #expect(json["execution_stats"]?["results_returned"] == 6 && json["bookmark"] != nil)
  }
}
