import Foundation
import SetteeCore
import SetteeTestSupport
import Testing

/// `_find` and `_index` bodies as CouchDB's clients send them (PouchDB, Cloudant's SDKs,
/// Fauxton, curl scripts), through the built binary (issue 15).
@Suite("settee find and index with CouchDB clients' bodies")
struct CouchDBClientCLITests {
  let directory = TemporaryDirectory()
  var db: String { directory.path("couch.db") }

  func settee(_ arguments: String...) throws -> SetteeBinary.Run {
    try SetteeBinary.run(["--db", db] + arguments)
  }

  func prepare() throws {
    let input = directory.path("people.ndjson")
    var lines: [String] = []
    for number in 0..<30 {
      lines.append(
        #"{"_id":"p\#(String(format: "%02d", number))","age":\#(number),"type":"\#(number % 3 == 0 ? "admin" : "user")","tags":["a\#(number % 2)","b"]}"#
      )
    }
    lines.append(#"{"_id":"_design/app","views":{},"type":"user","age":1}"#)
    try lines.joined(separator: "\n").write(toFile: input, atomically: false, encoding: .utf8)
    _ = try json(try settee("import", input))
  }

  @Test func indexBodies() throws {
    try prepare()
    let table: [(body: String, result: String?, error: String?)] = [
      (#"{"index": {"fields": ["age"]}}"#, "created", nil),
      (#"{"index": {"fields": ["age"]}}"#, "exists", nil),
      (#"{"index": {"fields": ["age"]}, "type": "json"}"#, "exists", nil),
      (
        #"{"index": {"fields": [{"type": "asc"}]}, "ddoc": "by-type", "name": "type"}"#, "created",
        nil
      ),
      (
        #"{"index": {"fields": ["age"], "partial_filter_selector": {"type": "user"}}, "ddoc": "_design/users", "name": "users-by-age"}"#,
        "created", nil
      ),
      (#"{"index": {"fields": ["age"], "selector": {"type": "user"}}}"#, nil, "invalid_index"),
      (#"{"index": {"fields": ["age"], "bogus": true}}"#, nil, "invalid_index"),
      (#"{"index": {"fields": ["age"]}, "ddoc": ["x"]}"#, nil, "invalid_index"),
    ]
    var generated: String?
    for row in table {
      let run = try settee("index", "create", row.body)
      if let error = row.error {
        #expect(run.status == 1 && run.stderr.contains(#""error":"\#(error)""#), "\(row.body)")
        continue
      }
      let answer = try json(run)
      #expect(answer["result"] == .string(row.result!), "\(row.body): \(answer)")
      #expect(answer["id"]?.stringValue?.hasPrefix("_design/") == true)
      if row.body == #"{"index": {"fields": ["age"]}}"# {
        if let generated { #expect(answer["name"] == .string(generated)) }
        generated = answer["name"]?.stringValue
      }
    }
    let listed = try json(try settee("index", "list"))
    #expect(listed["total_rows"] == 4)
    #expect(
      listed["indexes"]?[0] == [
        "ddoc": nil, "name": "_all_docs", "type": "special", "def": ["fields": [["_id": "asc"]]],
      ])
    let partial = listed["indexes"]?.arrayValue?.first { $0["name"] == "users-by-age" }
    #expect(partial?["ddoc"] == "_design/users")
    #expect(partial?["def"]?["partial_filter_selector"] == ["type": ["$eq": "user"]])
  }

  @Test func findBodies() throws {
    try prepare()
    _ = try json(
      try settee(
        "index", "create", #"{"index": {"fields": ["age"]}, "ddoc": "ages", "name": "age"}"#))
    _ = try json(
      try settee(
        "index", "create",
        #"{"index": {"fields": ["age"], "partial_filter_selector": {"type": "user"}}, "name": "users"}"#
      ))
    let table: [(body: String, count: Int, warning: String?)] = [
      (#"{"selector": {"age": {"$gte": 10}}, "r": 1, "conflicts": false}"#, 20, nil),
      (#"{"selector": {"age": {"$gte": 10}}, "use_index": null}"#, 20, nil),
      (#"{"selector": {"age": {"$gte": 10}}, "use_index": []}"#, 20, nil),
      (#"{"selector": {"age": {"$gte": 10}}, "use_index": "_design/ages"}"#, 20, nil),
      (#"{"selector": {"age": {"$gte": 10}}, "use_index": ["_design/ages", "age"]}"#, 20, nil),
      (
        #"{"selector": {"age": {"$gte": 10}}, "use_index": "_design/nope"}"#, 20,
        "_design/nope was not used"
      ),
      (#"{"selector": {"type": "user", "age": {"$gte": 10}}, "use_index": "users"}"#, 14, nil),
      // The partial index would miss the admins: it falls back, whole.
      (
        #"{"selector": {"age": {"$gte": 10}}, "use_index": "users"}"#, 20,
        "_design/users was not used"
      ),
      (
        #"{"selector": {"tags": {"$elemMatch": {"$eq": "a1"}}}, "fields": []}"#, 15,
        "No matching index"
      ),
      (
        #"{"selector": {"type": "user"}, "update": true, "stable": false, "execution_stats": true}"#,
        20, "No matching index"
      ),
    ]
    for row in table {
      let answer = try json(try settee("find", row.body))
      let docs = answer["docs"]?.arrayValue ?? []
      #expect(docs.count == row.count, "\(row.body)")
      #expect(!docs.contains { $0["_id"]?.stringValue?.hasPrefix("_design/") == true })
      #expect(answer["bookmark"]?.stringValue != nil)
      if let warning = row.warning {
        #expect(answer["warning"]?.stringValue?.contains(warning) == true, "\(row.body): \(answer)")
      } else {
        #expect(answer["warning"] == nil, "\(row.body): \(answer)")
      }
      if row.body.contains("execution_stats") {
        #expect(answer["execution_stats"]?["results_returned"] == .int(Int64(row.count)))
      }
    }
    let refused = try settee(
      "find", #"{"selector": {"age": 1}, "use_index": "users", "allow_fallback": false}"#)
    #expect(refused.status == 1 && refused.stderr.contains("no_usable_index"))
    #expect(
      try json(try settee("find", #"{"selector": {"_id": "p01"}, "fields": []}"#))["docs"]?[0]?[
        "tags"] == ["a1", "b"])
  }

  @Test func bookmarksPageToTheEnd() throws {
    try prepare()
    for (body, limit) in [
      (#"{"selector": {"age": {"$gte": 0}}, "sort": [{"age": "desc"}]"#, 7),
      (#"{"selector": {"type": "user"}, "fields": ["age"]"#, 4),
    ] {
      let all = try json(try settee("find", body + "}"))["docs"]?.arrayValue?.map { $0["_id"] }
      let body = body + #", "limit": \#(limit)"#
      var bookmark = "nil"
      var paged: [JSON?] = []
      for _ in 0..<20 {
        let page = try json(try settee("find", body + #", "bookmark": "\#(bookmark)"}"#))
        let docs = page["docs"]?.arrayValue ?? []
        if docs.isEmpty {
          #expect(page["bookmark"] == .string(bookmark))
          break
        }
        paged += docs.map { $0["_id"] }
        bookmark = page["bookmark"]?.stringValue ?? ""
      }
      #expect(paged == all, "\(body)")
    }
    let bad = try settee("find", #"{"selector": {}, "bookmark": "garbage"}"#)
    #expect(
      bad.status == 1 && bad.stderr.contains("invalid_query") && bad.stderr.contains("bookmark"))
  }
}
