import Foundation
import Settee
import SetteeCore
import SetteeTestSupport
import Testing

/// `settee replicator --db FILE`: the file's `_replicator` documents run without a server, one
/// JSON line per change of a document's state, until SIGTERM.
@Suite("settee replicator")
struct ReplicatorCLITests {
  let directory = TemporaryDirectory()

  @Test func runsTheDocumentsReplicationsUntilStopped() async throws {
    let path = directory.path("app.db")
    do {
      let database = try Database(path: path)
      try await database.collection("notes").putAll(
        (0..<25).map { ["_id": .string("n\($0)")] })
      let documents = database.collection("_replicator")
      try await documents.put([
        "_id": "backup", "source": "notes", "target": "backup", "create_target": true,
      ])
      try await documents.put(["_id": "bad", "source": "notes", "doc_ids": "n1"])
    }
    // Started in the background; stopped with SIGTERM once both documents have a final
    // state (bounded: 30 s).
    let out = directory.path("out.jsonl")
    let run = try await SetteeBinary.runShell(
      #"""
      "$0" replicator --db "$1" > "$2" & pid=$!
      for i in $(seq 1 300); do
        [ "$(grep -c -e '"completed"' -e '"failed"' "$2")" = 2 ] && break
        sleep 0.1
      done
      kill -TERM $pid; wait $pid; echo "exit $?" >&2
      """#.replacingOccurrences(of: "\"$1\"", with: "'\(path)'")
        .replacingOccurrences(of: "\"$2\"", with: "'\(out)'"))
    #expect(run.stderr.contains("exit 0"), "\(run.stderr)")
    let lines = try String(contentsOfFile: out, encoding: .utf8).split(separator: "\n")
    let states = lines.compactMap { line -> String? in
      guard let entry = try? JSONParser.parse(String(line)),
        let id = entry["doc_id"]?.stringValue, let state = entry["state"]?.stringValue
      else { return nil }
      return "\(id):\(state)"
    }
    #expect(states.contains("backup:completed"), "\(lines)")
    #expect(states.contains("bad:failed"), "\(lines)")
    let database = try Database(path: path)
    #expect(try await database.collection("backup").count() == 25)
  }
}
