import Foundation
import Settee
import SetteeCore
import SetteeJavaScript
import SetteeTestSupport
import Testing

/// Documents in lists answer as one document does (issue 55, item 1): `_all_docs`, views
/// with `include_docs`, `_changes` with `include_docs`, `_find` and JavaScript filters see
/// `_attachments`, as stubs, or with their data for `attachments=true` (what PouchDB's
/// `allDocs({include_docs: true, attachments: true})` asks).
@Suite("settee serve: documents in lists carry their attachments")
struct ListedDocumentsTests {
  let directory = TemporaryDirectory()

  /// Every list that gives documents, and where the document is in its answer.
  static let lists: [(path: String, method: String, body: JSON?, document: @Sendable (JSON) -> JSON?)] = [
    ("/db/_all_docs?include_docs=true&key=%22a%22", "GET", nil, { $0["rows"]?[0]?["doc"] }),
    ("/db/_all_docs?include_docs=true", "POST", ["keys": ["a"]], { $0["rows"]?[0]?["doc"] }),
    ("/db/_design/d/_view/v?include_docs=true", "GET", nil, { $0["rows"]?[0]?["doc"] }),
    ("/db/_changes?include_docs=true&filter=_doc_ids", "POST", ["doc_ids": ["a"]],
     { $0["results"]?[0]?["doc"] }),
    ("/db/_find", "POST", ["selector": ["n": 1]], { $0["docs"]?[0] }),
  ]

  @Test func listsShowStubsAndData() async throws {
    let server = try await ServerProcess(db: directory.path("lists.db"))
    try await server.request("PUT", "/db")
    let text = Array("hello, lists".utf8)
    try await server.put(
      "/db/a",
      [
        "n": 1,
        "_attachments": [
          "note.txt": [
            "content_type": "text/plain", "data": .string(Data(text).base64EncodedString()),
          ]
        ],
      ])
    try await server.put("/db/b", ["n": 2])
    try await server.put(
      "/db/_design/d",
      ["language": "settee", "views": ["v": ["key": "n", "filter": ["n": 1]]]])
    let one = try await server.get("/db/a").json
    let stub = try #require(one["_attachments"]?["note.txt"])
    #expect(stub["stub"] == true && stub["length"] == 12 && stub["revpos"] == 1)

    for list in Self.lists {
      for data in [false, true] {
        let path =
          data
          ? list.path + (list.path.contains("?") ? "&" : "?") + "attachments=true" : list.path
        let answer = try await server.request(list.method, path, json: list.body)
        #expect(answer.status == 200, "\(path): \(answer.text)")
        let document = try #require(list.document(answer.json), "\(path): \(answer.text)")
        let listed = try #require(
          document["_attachments"]?["note.txt"], "\(path): \(answer.text)")
        if data && !list.path.hasPrefix("/db/_find") {
          // `_find` has no `attachments` parameter: CouchDB gives stubs there.
          #expect(listed["data"] == .string(Data(text).base64EncodedString()), "\(path)")
          #expect(listed["stub"] == nil, "\(path)")
        } else {
          #expect(listed == stub, "\(path): \(listed)")
        }
        #expect(document["n"] == 1)
      }
    }
    // A document without attachments shows none.
    let plain = try await server.get("/db/_all_docs?include_docs=true&key=%22b%22").json
    #expect(plain["rows"]?[0]?["doc"]?["_attachments"] == nil)

    // A JavaScript filter sees `doc._attachments` as CouchDB's does.
    guard DesignFunctions.isAvailable else { return }
    try await server.put(
      "/db/_design/f",
      ["filters": ["atts": "function(doc, req) { return !!doc._attachments && !!doc._attachments['note.txt']; }"]])
    let filtered = try await server.get("/db/_changes?filter=f/atts").json
    #expect(filtered["results"]?.arrayValue?.compactMap { $0["id"] } == ["a"])
  }

  /// An integer past 64 bits comes back digit for digit from every read (issue 55, item 2;
  /// CouchDB keeps it exactly, a double would print `1.8446744073709552e+19`).
  @Test func integersPast64BitsComeBackExactly() async throws {
    let server = try await ServerProcess(db: directory.path("numbers.db"))
    try await server.request("PUT", "/db")
    let body = #"{"big":18446744073709551616,"neg":-18446744073709551617,"list":[99999999999999999999]}"#
    let written = try await server.request(
      "PUT", "/db/n", body: Array(body.utf8), headers: ["Content-Type": "application/json"])
    #expect(written.status == 201, "\(written.text)")
    let digits = #""big":18446744073709551616,"neg":-18446744073709551617,"list":[99999999999999999999]"#
    for path in [
      "/db/n", "/db/_all_docs?include_docs=true", "/db/_changes?include_docs=true",
      "/db/n?open_revs=all", "/db/n?revs=true",
    ] {
      let answer = try await server.get(path)
      #expect(answer.text.contains(digits), "\(path): \(answer.text)")
    }
    let found = try await server.post("/db/_find", ["selector": ["big": ["$gt": 1e19]]])
    #expect(found.text.contains(digits), "\(found.text)")
  }
}
