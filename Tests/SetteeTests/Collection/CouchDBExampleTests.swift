import Foundation
import Settee
import SetteeCore
import SetteeTestSupport
import Testing

/// CouchDB's documented examples of `_revisions` and conflicts, as table-driven cases:
/// the revisions a peer sends, and the winner, conflicts and history CouchDB shows for
/// them.
@Suite("CouchDB's documented revision examples")
struct CouchDBExampleTests {
  struct Example: Sendable, CustomStringConvertible {
    var description: String
    /// Revision paths as `_revisions` sends them: start and ids, newest first; deleted.
    var writes: [(start: Int, ids: [String], deleted: Bool)]
    var winner: String
    var conflicts: [String]
    var deletedConflicts: [String] = []
  }

  static let examples: [Example] = [
    // "Replication and conflict model": the same document edited on two replicas.
    Example(
      description: "two edits of 1-…, the greater suffix wins",
      writes: [
        (2, ["65db2a11b5172bf928e3bcf59f728970", "0c8b4bd62b0c6d5c4f6fd3fa7f0e6f9c"], false),
        (2, ["b91bb807b4685080c6a651115ff558f5", "0c8b4bd62b0c6d5c4f6fd3fa7f0e6f9c"], false),
      ],
      winner: "2-b91bb807b4685080c6a651115ff558f5",
      conflicts: ["2-65db2a11b5172bf928e3bcf59f728970"]),
    // The API reference's `GET /{db}/{docid}?revs=true`: an eight-revision history.
    Example(
      description: "an 8-revision history from _revisions",
      writes: [
        (
          8,
          [
            "6f5ad8db0f34af24a6e0984cd1a6cfb9", "77fba3a059497f51ec99b9b478b569d2",
            "136813b440a00a24834f5cb1ddf5b1f1", "fd96acb3256302bf0dd2f32713161f2a",
            "874985bc28906155ba0e2e0538f67b05", "0de77a37463bf391d14283e626831f2e",
            "d795d1b924777732fdea76538c558b62", "917fa2381192822767f010b95b45325b",
          ], false
        )
      ],
      winner: "8-6f5ad8db0f34af24a6e0984cd1a6cfb9", conflicts: []),
    // The guide's example of a deletion on one side: the live branch wins though the
    // deleted one is longer.
    Example(
      description: "a live leaf beats a deeper deletion",
      writes: [
        (2, ["aaa", "root"], false),
        (3, ["zzz", "yyy", "root"], true),
      ],
      winner: "2-aaa", conflicts: [], deletedConflicts: ["3-zzz"]),
    // CouchDB's own id example (`10-ABC`) beside a Settee revision of the same generation.
    Example(
      description: "peer suffixes compare as bytes",
      writes: [(10, ["ABC"], false), (10, ["abc"], false), (10, ["ABD"], false)],
      winner: "10-abc", conflicts: ["10-ABD", "10-ABC"]),
  ]

  @Test(arguments: examples)
  func storedTreesAnswerAsCouchDBDoes(_ example: Example) throws {
    let docs = try Database(inMemoryWith: .init()).collection("docs")
    for write in example.writes {
      var json: JSONObject = [
        "_id": "doc",
        "_revisions": [
          "start": .int(Int64(write.start)), "ids": .array(write.ids.map { .string($0) }),
        ],
      ]
      if write.deleted { json["_deleted"] = true }
      try docs.put(json, newEdits: false)
    }
    let read = try #require(
      try docs.document(
        "doc",
        RevisionReadOptions(
          rev: try RevisionID(parsing: example.winner), revs: true, conflicts: true,
          deletedConflicts: true)))
    #expect(read["_rev"] == .string(example.winner))
    #expect((read["_conflicts"] ?? []) == .array(example.conflicts.map { .string($0) }))
    #expect(
      (read["_deleted_conflicts"] ?? []) == .array(example.deletedConflicts.map { .string($0) }))
    #expect(try docs.getRevision("doc")?.rev?.description == example.winner)
    if let longest = example.writes.first(where: { "\($0.start)-\($0.ids[0])" == example.winner }) {
      #expect(
        read["_revisions"] == [
          "start": .int(Int64(longest.start)), "ids": .array(longest.ids.map { .string($0) }),
        ])
    }
  }
}
