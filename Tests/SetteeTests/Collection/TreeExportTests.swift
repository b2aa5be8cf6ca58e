import Foundation
import Settee
import SetteeCore
import SetteeTestSupport
import Testing

/// `exportRevisionTrees` and `import` carry whole trees: every leaf (losing and deleted
/// ones too), its ancestry and its attachments, and the local documents, arrive in another
/// file as they were.
@Suite("Exporting and importing revision trees")
struct TreeExportTests {
  @Test func treesSurviveAnExportAndImport() throws {
    let source = try Database(inMemoryWith: .init()).collection("notes")
    try source.put(
      ["_id": "c", "_rev": "2-b", "t": "b", "_revisions": ["start": 2, "ids": ["b", "a"]]],
      newEdits: false)
    try source.put(
      ["_id": "c", "_rev": "2-c", "t": "c", "_revisions": ["start": 2, "ids": ["c", "a"]]],
      newEdits: false)
    try source.put(
      [
        "_id": "c", "_rev": "3-d", "_deleted": true,
        "_revisions": ["start": 3, "ids": ["d", "x", "a"]],
      ], newEdits: false)
    let plain = try source.put(["_id": "p", "n": 1])
    try source.putAttachment("f.bin", to: "p", rev: plain.rev, data: [0, 1, 2, 255])
    try source.putLocal(["_id": "_local/cp", "seq": 7])
    try source.putLocal(["_id": "_local/cp", "_rev": "0-1", "seq": 8])
    let gone = try source.put(["_id": "z"])
    try source.delete("z", rev: gone.rev)
    var text: [UInt8] = []
    #expect(try source.exportRevisionTrees { text += $0 } == 6)
    let url = FileManager.default.temporaryDirectory.appendingPathComponent(
      "trees-\(UUID()).ndjson")
    defer { try? FileManager.default.removeItem(at: url) }
    try Data(text).write(to: url)
    let target = try Database(inMemoryWith: .init()).collection("notes")
    try target.importDocuments(contentsOf: url)
    for id in ["c", "p", "z"] {
      let expected = try source.leaves(of: id)
      let actual = try target.leaves(of: id)
      #expect(actual == expected, "\(id)")
      #expect(
        Set(try target.revisions(of: id).map(\.rev)) == Set(try source.revisions(of: id).map(\.rev))
      )
    }
    #expect(try target.attachment("f.bin", of: "p")?.data == [0, 1, 2, 255])
    #expect(try target.conflictedDocumentIDs() == ["c"])
    #expect(try target.localDocuments() == source.localDocuments())
    #expect(try target.localDocument("cp")?.rev == "0-2")
    // Imported again: every revision is held already, nothing changes.
    let seq = try target.lastSequence()
    try target.importDocuments(contentsOf: url)
    #expect(try target.lastSequence() == seq)
    #expect(try target.database.check().isHealthy)
  }
}
