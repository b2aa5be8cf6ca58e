import Foundation
import SetteeCore
import SetteeTestSupport
import Testing

@testable import Settee

/// `openRevisionTexts` answers exactly the bytes `JSONWriter` prints of `openRevisions`'
/// answers, whether a document takes the copied-text path (its only leaf, no attachments)
/// or the general one (branches, attachments, escapes, other leaves, missing revisions).
@Suite("Open revisions as text")
struct RevisionTextTests {
  @Test func textsAreThePrintedAnswers() async throws {
    let docs = try Database(inMemoryWith: .init()).collection("docs")
    try await docs.putAll([
      ["_id": "plain", "n": 1, "s": "x", "o": ["a": [1, 2.5, nil, true]]],
      ["_id": "empty"], ["_id": "日本", "名": "値", "emoji": "😀"],
      ["_id": "escaped", "s": "a\"b\\c\n\u{0}"], ["_id": "big", "n": 12_345_678_901_234_567],
    ])
    let edited = try #require(try await docs.get("plain")?.rev)
    try await docs.put(["_id": "plain", "_rev": .string(edited.description), "n": 2])
    let doomed = try await docs.put(["_id": "gone", "x": 1])
    try await docs.delete("gone", rev: doomed.rev.description)
    try await docs.putAttachment(
      "a.txt", to: "empty", rev: try await docs.get("empty")?.rev, data: Array("hi".utf8))
    try await docs.putAll(
      [
        ["_id": "branched", "_rev": "1-a", "v": 1], ["_id": "branched", "_rev": "1-b", "v": 2],
      ], newEdits: false)
    var requests: [RevisionsRequest] = []
    for change in try await docs.changes() {
      for rev in change.leaves + [try RevisionID(parsing: "9-nothere")] {
        for options in [
          RevisionReadOptions(revs: true, attachments: true),
          RevisionReadOptions(), RevisionReadOptions(revs: true, conflicts: true),
        ] {
          requests.append(RevisionsRequest(change.id, [rev], options: options))
        }
      }
      requests.append(RevisionsRequest(change.id, nil, options: .init(revs: true)))
    }
    requests.append(RevisionsRequest("never", [try RevisionID(parsing: "1-x")]))
    for latest in [false, true] {
      let texts = try await docs.openRevisionTexts(requests, latest: latest)
      let answers = try await docs.openRevisions(requests, latest: latest)
      #expect(texts.count == requests.count)
      for (text, answer) in zip(texts, answers) {
        let printed = answer.map { answer -> OpenRevisionText in
          switch answer {
          case .found(let document): .found(JSONWriter.bytes(.object(document)))
          case .missing(let rev): .missing(rev)
          }
        }
        #expect(text == printed)
      }
    }
    // The copied-text path was taken where it can be.
    let plain = try await docs.get("plain")!.rev!
    let database = docs.database
    let copied = try await database.read { db in
      try DocumentCollection.plainRevisionText(
        db, cid: try database.collectionID(db, "docs")!,
        RevisionsRequest("plain", [plain], options: .init(revs: true)))
    }
    #expect(copied != nil)
  }

  /// `winnerText` (what `GET /{db}/{docid}` sends with no options) is the printed document
  /// where it answers, and answers for every live document without attachments, branched
  /// ones included (their other leaves are not shown without options).
  @Test func winnerTextIsThePrintedDocument() async throws {
    let docs = try Database(inMemoryWith: .init()).collection("docs")
    var generator = RandomQueries(seed: 7)
    let documents = (0..<60).map { generator.document($0) }
    try await docs.putAll(documents)
    try await docs.putAll(
      [
        ["_id": "branched", "_rev": "1-a", "v": 1], ["_id": "branched", "_rev": "1-b", "v": 2],
        ["_id": "escaped", "_rev": "1-c", "s": "a\"b\\c\n\u{0}", "n": 1.5e300],
      ], newEdits: false)
    let doomed = try await docs.put(["_id": "gone", "x": 1])
    try await docs.delete("gone", rev: doomed.rev.description)
    try await docs.put(["_id": "held"])
    try await docs.putAttachment(
      "a.txt", to: "held", rev: try await docs.get("held")?.rev, data: Array("hi".utf8))
    let ids = documents.map { $0["_id"]!.stringValue! } + ["branched", "escaped"]
    for id in ids {
      let document = try #require(try await docs.document(id, RevisionReadOptions()))
      let answer = try #require(try await docs.winnerText(id), "\(id)")
      #expect(answer.text == JSONWriter.bytes(.object(document)), "\(id)")
      #expect(.string(answer.rev) == document["_rev"])
    }
    for id in ["gone", "held", "never", "a\u{0}b"] {
      #expect(try await docs.winnerText(id) == nil, "\(id)")
    }
  }
}
