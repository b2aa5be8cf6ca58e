import Foundation
import Settee
import SetteeCore
import SetteeTestSupport
import Testing

/// `settee view …` and `settee all-docs` through the built binary, with views shared
/// between the binary and Swift code in this process.
@Suite("The settee command: views")
struct ViewCLITests {
  let directory = TemporaryDirectory()
  var db: String { directory.path("views.db") }

  func settee(_ arguments: String...) throws -> SetteeBinary.Run {
    try SetteeBinary.run(["--db", db] + arguments)
  }

  func error(_ run: SetteeBinary.Run) throws -> String? {
    #expect(run.status == 1)
    return try JSONParser.parse(run.stderr.trimmingCharacters(in: .whitespacesAndNewlines))[
      "error"]?
      .stringValue
  }

  func load() throws {
    for document in [
      #"{"_id":"1","store":"Safeway","item":"tonic water","price":3}"#,
      #"{"_id":"2","store":"Safeway","item":"goldfish crackers","price":2}"#,
      #"{"_id":"3","store":"Trader Joe's","item":"cookies","price":4}"#,
    ] {
      #expect(try settee("put", document).status == 0)
    }
  }

  @Test func createQueryListAndDelete() throws {
    try load()
    let definition = #"{"name":"by_store","key":["store","item"],"value":"price","reduce":"_sum"}"#
    #expect(
      try json(settee("view", "create", definition)) == ["result": "created", "name": "by_store"])
    #expect(try json(settee("view", "create", definition))["result"] == "exists")
    #expect(
      try json(settee("view", "query", "by_store", #"{"group_level":1}"#))
        == ["rows": [["key": ["Safeway"], "value": 5], ["key": ["Trader Joe's"], "value": 4]]])
    #expect(try json(settee("view", "query", "by_store")) == ["rows": [["key": nil, "value": 9]]])
    let safeway = try json(
      settee(
        "view", "query", "by_store",
        #"{"reduce":false,"startkey":["Safeway"],"endkey":["Safeway",{}],"include_docs":true}"#))
    #expect(safeway["total_rows"] == 3 && safeway["offset"] == 0)
    #expect(safeway["rows"]?.arrayValue?.map { $0["id"] } == ["2", "1"])
    #expect(safeway[path: "rows.0.doc.item"] == "goldfish crackers")
    #expect(
      try json(
        settee(
          "view", "query", "by_store", #"{"reduce":false,"skip":1,"limit":1,"descending":true}"#))
        == [
          "total_rows": 3, "offset": 1,
          "rows": [["id": "1", "key": ["Safeway", "tonic water"], "value": 3]],
        ])
    // A changed definition rebuilds.
    #expect(
      try json(settee("view", "create", #"{"name":"by_store","key":"store","reduce":"_count"}"#))[
        "result"]
        == "updated")
    #expect(
      try json(settee("view", "query", "by_store", #"{"group":true}"#))[path: "rows.0.value"] == 2)
    let listed = try json(settee("view", "list"))
    #expect(listed["total_rows"] == 1 && listed[path: "views.0.reduce"] == "_count")
    #expect(try json(settee("view", "delete", "by_store")) == ["ok": true])
    #expect(try error(settee("view", "query", "by_store")) == "not_found")
  }

  @Test func badDefinitionsAndOptionsAreTypedErrors() throws {
    try load()
    #expect(try error(settee("view", "create", #"{"name":"v"}"#)) == "bad_request")
    #expect(
      try error(settee("view", "create", #"{"name":"v","key":"a","reduce":"_median"}"#))
        == "bad_request")
    #expect(try error(settee("view", "create", "not json")) == "bad_request")
    #expect(
      try json(settee("view", "create", #"{"name":"v","key":"store","reduce":"_count"}"#))["result"]
        == "created")
    for options in [
      #"{"limit":-1}"#, #"{"limt":1}"#, #"{"include_docs":true}"#,
      #"{"startkey":"z","endkey":"a"}"#,
      #"{"keys":["Safeway","Trader Joe's"]}"#, "[]",
    ] {
      #expect(try error(settee("view", "query", "v", options)) == "invalid_query", "\(options)")
    }
    #expect(try error(settee("all-docs", #"{"group":true}"#)) == "invalid_query")
    // One key reduces without grouping (CouchDB's rule): one row, key null.
    #expect(
      try json(settee("view", "query", "v", #"{"keys":["Safeway"]}"#))["rows"]
        == [["key": nil, "value": 2]])
  }

  /// Reads never create a database.
  @Test func queriesOfAMissingFileCreateNothing() throws {
    for arguments in [["view", "query", "v"], ["view", "list"], ["all-docs"]] {
      let run = try SetteeBinary.run(["--db", db] + arguments)
      #expect(run.status == 1 && run.stderr.contains("not_found"), "\(arguments)")
      #expect(!FileManager.default.fileExists(atPath: db))
    }
  }

  @Test func allDocsListsDocumentsByID() throws {
    try load()
    let all = try json(settee("all-docs", #"{"startkey":"2","include_docs":true}"#))
    #expect(all["total_rows"] == 3 && all["offset"] == 1)
    #expect(all["rows"]?.arrayValue?.map { $0["id"] } == ["2", "3"])
    #expect(all[path: "rows.1.doc.store"] == "Trader Joe's")
    let keyed = try json(settee("all-docs", #"{"keys":["3","9"]}"#))
    #expect(keyed[path: "rows.1"] == ["key": "9", "error": "not_found"])
  }

  /// A view defined by Swift code in this process, written to by the binary (another
  /// process), and queried by both.
  @Test func viewsAreSharedAcrossProcesses() throws {
    try load()
    let database = try Database(path: db)
    let items = database.collection()
    let swiftView = try items.view("prices", version: "1", reduce: .sum) { doc, emit in
      emit(doc["store"] ?? nil, doc["price"] ?? nil)
    }
    let declared = try items.defineView(json: ["name": "stores", "key": "store"])
    #expect(try swiftView.query().rows[0].value == 9)
    // Another process writes; this one sees it at its next query.
    #expect(
      try settee("put", #"{"_id":"4","store":"Safeway","item":"milk","price":1}"#).status == 0)
    #expect(try swiftView.query().rows[0].value == 10)
    #expect(try declared.query(ViewQuery(key: "Safeway")).rows.count == 3)
    // The binary queries the declarative view, bringing it up to date itself…
    #expect(
      try settee("put", #"{"_id":"5","store":"Safeway","item":"eggs","price":2}"#).status == 0)
    #expect(
      try json(settee("view", "query", "stores", #"{"key":"Safeway"}"#))["rows"]?.arrayValue?.count
        == 4)
    // …and the Swift one only as it is stored: its map function lives in this process.
    #expect(try error(settee("view", "query", "prices")) == "view_not_registered")
    #expect(
      try json(settee("view", "query", "prices", #"{"stale":"ok"}"#))[path: "rows.0.value"] == 10)
    #expect(try swiftView.query().rows[0].value == 12)
    #expect(try json(settee("view", "query", "prices"))[path: "rows.0.value"] == 12)
  }

  /// A read-only file: up-to-date views and stale reads work; a view that is behind says so.
  @Test func readOnlyFilesAnswerWhatTheyHold() throws {
    try load()
    #expect(
      try json(settee("view", "create", #"{"name":"stores","key":"store"}"#))["result"] == "created"
    )
    #expect(try json(settee("view", "query", "stores"))["total_rows"] == 3)
    #expect(try settee("put", #"{"_id":"4","store":"Safeway"}"#).status == 0)
    try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: db)
    defer { try? FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: db) }
    let run = try SetteeBinary.run(["--db", db, "view", "query", "stores"], unprivileged: true)
    #expect(run.status == 1 && run.stderr.contains("read_only"), "\(run.stderr)")
    let stale = try SetteeBinary.run(
      ["--db", db, "view", "query", "stores", #"{"stale":"ok"}"#], unprivileged: true)
    #expect(stale.status == 0 && stale.stdout.contains(#""total_rows":3"#), "\(stale.stderr)")
  }

  /// ICU is loaded when the first view key is made, not when the process starts: a
  /// command that never collates a string does not pay for loading it (about 2 ms).
  /// glibc's loader says which libraries it opens when `LD_DEBUG=files` is set.
  @Test func icuIsLoadedOnlyByCommandsThatCollate() throws {
    #if os(Linux)
      try load()
      #expect(
        try json(settee("view", "create", #"{"name":"stores","key":"store"}"#))["result"]
          == "created")
      /// The shared libraries a run opened, or nil when the loader does not say (not glibc).
      func libraries(_ arguments: String) throws -> String? {
        let run = try SetteeBinary.runShell(#"LD_DEBUG=files "$0" --db '\#(db)' \#(arguments)"#)
        #expect(run.status == 0, "\(run.stderr)")
        return run.stderr.contains("file=") ? run.stderr : nil
      }
      guard let viewQuery = try libraries("view query stores") else { return }
      #expect(viewQuery.contains("file=libicui18n"))
      func loadsICU(_ arguments: String) throws -> Bool {
        try libraries(arguments)?.contains("libicui18n") == true
      }
      #expect(try !loadsICU(#"find '{"selector":{"store":"Safeway"}}'"#))
      #expect(try !loadsICU("get 1"))
    #endif
  }

  /// Without ICU the binary still starts: views in Unicode order fail with a typed error
  /// that names the library, and everything else works, raw-order views included. ICU is
  /// hidden in a private mount namespace, which needs root and `unshare` (the CI machine
  /// has both); elsewhere there is nothing to run.
  @Test(
    .enabled(
      if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare"),
      "hiding ICU needs root and unshare"))
  func withoutICUOnlyUnicodeOrderViewsFail() throws {
    #if os(Linux)
      try load()
      #expect(try settee("view", "create", #"{"name":"stores","key":"store"}"#).status == 0)
      // Replaces every libicui18n on the usual paths with an empty file, then runs "$@".
      let hide = directory.path("without-icu.sh")
      try #"""
      for f in /lib/*/libicui18n.so* /usr/lib/*/libicui18n.so*; do
        [ -e "$f" ] && mount --bind /dev/null "$f"
      done
      echo hidden >&2
      exec "$@"
      """#.write(toFile: hide, atomically: false, encoding: .utf8)
      /// A run without ICU, or nil when this machine cannot hide it.
      func withoutICU(_ arguments: String...) throws -> SetteeBinary.Run? {
        // The arguments here hold no single quote.
        let quoted = ([db] + arguments).map { "'\($0)'" }.joined(separator: " ")
        var run = try SetteeBinary.runShell(#"unshare -m sh '\#(hide)' "$0" --db "# + quoted)
        guard let marker = run.stderr.range(of: "hidden\n") else { return nil }
        run.stderr = String(run.stderr[marker.upperBound...])
        return run
      }
      guard let unicode = try withoutICU("view", "query", "stores") else { return }
      #expect(try error(unicode) == "storage_error")
      #expect(unicode.stderr.contains("libicui18n"), "\(unicode.stderr)")
      #expect(try withoutICU("find", #"{"selector":{"store":"Safeway"}}"#)?.status == 0)
      #expect(
        try withoutICU("view", "create", #"{"name":"raw","key":"store","collation":"raw"}"#)?
          .status == 0)
      let raw = try #require(try withoutICU("view", "query", "raw"))
      #expect(raw.status == 0 && raw.stdout.contains(#""total_rows":3"#), "\(raw.stderr)")
    #endif
  }
}
