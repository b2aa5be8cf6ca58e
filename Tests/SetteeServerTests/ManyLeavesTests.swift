import Foundation
import Settee
import SetteeCore
import SetteeReplication
import SetteeTestSupport
import Testing

extension OpenRevision {
  fileprivate var foundDocument: JSONObject? {
    if case .found(let document) = self { return document }
    return nil
  }
}

/// Documents with many conflicting leaves, replicated as CouchDB's own
/// `couch_replicator_many_leaves_tests.erl` does it: every leaf arrives with its own body,
/// after a first replication and again after every leaf was edited; with
/// `winning_revs_only` the winner arrives with the winner's body.
@Suite("Replicating many leaves")
struct ManyLeavesTests {
  let directory = TemporaryDirectory()

  /// `count` leaves of `id` under one root, each with its own body, as a peer writes them.
  private func leaves(_ id: String, _ count: Int, seed: UInt64) -> [JSONObject] {
    var random = SplitMix64(seed: seed)
    let root = String(repeating: "0", count: 31) + "1"
    return (0..<count).map { number in
      let hash = (0..<4).map { _ in String(format: "%08x", UInt32(truncatingIfNeeded: random.next())) }
        .joined()
      return [
        "_id": .string(id), "_rev": .string("2-\(hash)"),
        "_revisions": ["start": 2, "ids": [.string(hash), .string(root)]],
        "leaf": .int(Int64(number)), "value": .string(hash.uppercased()),
      ]
    }
  }

  /// Each leaf of the source, with its body, is a leaf of the target.
  private func expectSameLeaves(
    _ source: DocumentCollection, _ target: ServerProcess, _ ids: [String]
  ) async throws {
    for id in ids {
      let mine = try await source.openRevisions(id).compactMap(\.foundDocument)
      let answer = try await target.request(
        "GET", "/copy/\(id)?open_revs=all", headers: ["Accept": "application/json"])
      let theirs = (answer.json.arrayValue ?? []).compactMap { $0["ok"]?.objectValue }
      let byRev = Dictionary(
        theirs.map { ($0["_rev"]?.stringValue ?? "", $0) }, uniquingKeysWith: { a, _ in a })
      #expect(theirs.count == mine.count, "\(id)")
      for leaf in mine {
        let rev = leaf["_rev"]?.stringValue ?? ""
        #expect(byRev[rev] == leaf, "\(id) \(rev)")
      }
    }
  }

  @Test func everyLeafArrivesWithItsBodyAndAgainAfterEdits() async throws {
    let source = try Database(path: directory.path("s.db")).collection("many")
    let ids = ["doc1", "doc2", "doc3"]
    for (index, id) in ids.enumerated() {
      _ = try await source.putAll(leaves(id, [10, 60, 150][index], seed: UInt64(index)), newEdits: false)
    }
    let server = try await ServerProcess(db: directory.path("t.db"))
    defer { server.stop() }
    let target = try #require(URL(string: server.url + "copy"))
    let configuration = ReplicationConfiguration(
      source: .collection(source), target: .url(target), createTarget: true, batchSize: 50)
    let first = try await Replicator(configuration).run()
    #expect(first.docWriteFailures == 0)
    try await expectSameLeaves(source, server, ids)
    // Every leaf edited: a child of each, so the target's leaves all change.
    for id in ids {
      let edits: [JSONObject] = try await source.openRevisions(id).compactMap(\.foundDocument).map { leaf in
        var child = leaf
        let parent = leaf["_rev"]!.stringValue!
        let hash = String(MD5.hash(Array(parent.utf8)).map { String(format: "%02x", $0) }.joined())
        child["_rev"] = .string("3-\(hash)")
        child["_revisions"] = [
          "start": 3, "ids": [.string(hash), .string(String(parent.dropFirst(2))), .string(String(repeating: "0", count: 31) + "1")],
        ]
        child["edited"] = true
        return child
      }
      _ = try await source.putAll(edits, newEdits: false)
    }
    let second = try await Replicator(configuration).run()
    #expect(second.docWriteFailures == 0)
    try await expectSameLeaves(source, server, ids)
    // Pulled back into a file from the server: the same again.
    let back = try Database(path: directory.path("b.db")).collection("many")
    let pulled = try await Replicator(
      ReplicationConfiguration(source: .url(target), target: .collection(back), createTarget: true)
    ).run()
    #expect(pulled.docWriteFailures == 0)
    for id in ids {
      let a = try await source.openRevisions(id).compactMap(\.foundDocument)
      let b = try await back.openRevisions(id).compactMap(\.foundDocument)
      #expect(Set(a) == Set(b), "\(id)")
    }
  }

  @Test func winningRevisionsOnlyCopiesTheWinnersBody() async throws {
    let server = try await ServerProcess(db: directory.path("s.db"))
    defer { server.stop() }
    try await server.request("PUT", "/src")
    for (index, id) in ["w1", "w2"].enumerated() {
      try await server.post(
        "/src/_bulk_docs",
        ["new_edits": false, "docs": .array(leaves(id, 60, seed: UInt64(10 + index)).map(JSON.object))])
    }
    let target = try Database(path: directory.path("t.db")).collection("copy")
    let progress = try await Replicator(
      ReplicationConfiguration(
        source: .url(URL(string: server.url + "src")!), target: .collection(target),
        createTarget: true, winningRevisionsOnly: true)
    ).run()
    #expect(progress.docWriteFailures == 0)
    for id in ["w1", "w2"] {
      let winner = try await server.get("/src/\(id)").json.objectValue
      let copied = try await target.openRevisions(id).compactMap(\.foundDocument)
      #expect(copied.count == 1)
      var expected = try #require(winner)
      expected.removeValue(forKey: "_revisions")
      #expect(copied.first == expected, "\(id)")
    }
  }
}
