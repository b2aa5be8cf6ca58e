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
    let server = try ServerProcess(db: directory.path("find.db"))
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
      (["selector": ["n": 1], "use_index": "nonexistent", "allow_fallback": false], "invalid_index"),
    ]
    for path in ["/db/_find", "/db/_explain"] {
      for row in table {
        let answer = try await server.post(path, row.body)
        if let error = row.error {
          #expect(answer.status == 400 && answer.error == error, "\(path) \(row.body): \(answer.text)")
        } else {
          #expect(answer.status == 200, "\(path) \(row.body): \(answer.text)")
        }
      }
    }
  }
}
