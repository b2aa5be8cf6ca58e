import Foundation
import Settee
import SetteeCore
import SetteeJavaScript
import SetteeTestSupport
import Testing

/// `POST /_replicate` answers and counts as CouchDB 3.5's replicator gives them (issue 55,
/// item 10): the cases of CouchDB's own replication suite (`replication_test.exs`:
/// simple, existing revisions, by document ids, filtered), with its expected counts.
@Suite("settee serve: the replicator's answers, as CouchDB 3.5")
struct ReplicationAnswerTests {
  let directory = TemporaryDirectory()

  private func documents(_ range: ClosedRange<Int>) -> [JSON] {
    range.map { ["_id": .string("\($0)"), "integer": .int(Int64($0)), "string": .string("\($0)")] }
  }

  private func replicate(_ server: ServerProcess, _ source: String, _ target: String, _ extra: JSONObject = [:])
    async throws -> JSON
  {
    var body: JSONObject = [
      "source": .string(server.url + source), "target": .string(server.url + target),
    ]
    for member in extra { body[member.key] = member.value }
    let answer = try await server.post("/_replicate", .object(body))
    #expect(answer.status == 200 && answer.json["ok"] == true, "\(answer.text)")
    return answer.json
  }

  @Test func countsAcrossSessions() async throws {
    let server = try await ServerProcess(db: directory.path("simple.db"))
    for db in ["src", "tgt"] { try await server.request("PUT", "/\(db)") }
    try await server.post("/src/_bulk_docs", ["docs": .array(documents(1...20))])
    let first = try await replicate(server, "src", "tgt")
    let entry = first["history"]?[0]
    #expect(first["history"]?.arrayValue?.count == 1)
    #expect(entry?["start_time"]?.stringValue?.hasSuffix("GMT") == true)
    #expect(entry?["start_last_seq"] == 0)
    for member in ["missing_checked", "missing_found", "docs_read", "docs_written"] {
      #expect(entry?[member] == 20, "\(member): \(first)")
    }
    // Revisions the target holds already are checked, not read: 3 checked, 1 found.
    let three: [JSON] = [["_id": "foo1", "v": 1], ["_id": "foo2", "v": 2], ["_id": "foo3", "v": 3]]
    try await server.post("/src/_bulk_docs", ["docs": .array(three)])
    try await server.post(
      "/tgt/_bulk_docs", ["docs": .array(three.filter { $0["_id"] != "foo2" })])
    let second = try await replicate(server, "src", "tgt")
    #expect(second["history"]?.arrayValue?.count == 2)
    let counts = second["history"]?[0]
    #expect(counts?["missing_checked"] == 3 && counts?["missing_found"] == 1, "\(second)")
    #expect(counts?["docs_written"] == 1 && counts?["doc_write_failures"] == 0)
    // Nothing left: no_changes.
    #expect(try await replicate(server, "src", "tgt")["no_changes"] == true)
  }

  @Test func byDocumentIDsRepeatsTheCountsAtTheTop() async throws {
    let server = try await ServerProcess(db: directory.path("ids.db"))
    for db in ["src", "tgt"] { try await server.request("PUT", "/\(db)") }
    try await server.post("/src/_bulk_docs", ["docs": .array(documents(1...10))])
    let answer = try await replicate(server, "src", "tgt", ["doc_ids": ["1", "foo_666", "10"]])
    #expect(answer["start_time"]?.stringValue != nil && answer["end_time"]?.stringValue != nil)
    #expect(answer["docs_read"] == 2 && answer["docs_written"] == 2, "\(answer)")
    #expect(answer["doc_write_failures"] == 0)
    #expect(try await server.get("/tgt/2").status == 404)
    let none = try await replicate(server, "src", "tgt", ["doc_ids": []])
    #expect(none["no_changes"] == true && none["docs_read"] == nil, "\(none)")
  }

  @Test(.enabled(if: DesignFunctions.isAvailable))
  func filteredCountsOnlyWhatPasses() async throws {
    let server = try await ServerProcess(db: directory.path("filtered.db"))
    for db in ["src", "tgt"] { try await server.request("PUT", "/\(db)") }
    let filter = """
      function(doc, req) {
        return (doc.integer % Number(req.query.modulus) === 0) || (doc.string === req.query.special);
      }
      """
    let design: JSON = ["_id": "_design/mydesign", "filters": ["myfilter": .string(filter)]]
    try await server.post("/src/_bulk_docs", ["docs": .array([design] + documents(1...30))])
    let options: JSONObject = [
      "filter": "mydesign/myfilter", "query_params": ["modulus": "2", "special": "7"],
    ]
    // 15 even integers and the document whose string is "7".
    let first = try await replicate(server, "src", "tgt", options)
    for member in ["missing_checked", "missing_found", "docs_read", "docs_written"] {
      #expect(first["history"]?[0]?[member] == 16, "\(member): \(first)")
    }
    try await server.post("/src/_bulk_docs", ["docs": .array(documents(50...55))])
    let second = try await replicate(server, "src", "tgt", options)
    #expect(second["history"]?.arrayValue?.count == 2)
    #expect(second["history"]?[0]?["docs_written"] == 3, "\(second)")
  }
}
