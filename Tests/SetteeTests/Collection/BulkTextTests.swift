import Foundation
import SetteeCore
import Testing

@testable import Settee

/// Bulk writes of documents prepared from their text (what the server's `_bulk_docs` and
/// the replicator send) answer and store exactly what the same documents parsed do: with
/// and without `new_edits`, grafts onto existing trees, no-ops, refusals, and with an index
/// that needs the values (then the text is parsed).
@Suite("Bulk writes from text")
struct BulkTextTests {
  static func texts(_ seed: UInt64) -> [[String]] {
    var random = SplitMix64(seed: seed)
    func suffix() -> String { String(format: "%08x", random.next() & 0xFFFF_FFFF) }
    var batches: [[String]] = []
    var known: [String: [String]] = [:]  // id -> history, newest first (generation = count)
    for _ in 0..<4 {
      var batch: [String] = []
      for _ in 0..<40 {
        let id = "d\(random.next() % 25)"
        var history = known[id] ?? []
        switch random.next() % 5 {
        case 0 where !history.isEmpty:
          // A branch: a sibling of the newest revision.
          history[0] = suffix()
        case 1 where !history.isEmpty:
          // Sent again: a no-op.
          break
        default:
          history.insert(suffix(), at: 0)
        }
        known[id] = history
        let ids = history.map { "\"\($0)\"" }.joined(separator: ",")
        let deleted = random.next() % 7 == 0 ? #","_deleted":true"# : ""
        batch.append(
          #"{"_id":"\#(id)","n":\#(random.next() % 100),"_revisions":{"start":\#(history.count),"ids":[\#(ids)]}\#(deleted)}"#
        )
      }
      // Refused: a _rev that is not the newest of _revisions, and no revision at all.
      batch.append(#"{"_id":"bad","_rev":"2-zz","_revisions":{"start":2,"ids":["yy","xx"]}}"#)
      batch.append(#"{"_id":"norev","n":1}"#)
      batches.append(batch)
    }
    return batches
  }

  static func state(_ collection: DocumentCollection) throws -> [String: JSON] {
    var state: [String: JSON] = [:]
    for change in try collection.changes() {
      let leaves = try collection.openRevisions(change.id, options: .init(revs: true))
      state[change.id] = .array(leaves.map(\.json).map(JSON.object))
    }
    return state
  }

  @Test(arguments: [(1, false), (2, false), (3, true)] as [(UInt64, Bool)])
  func textWritesAsParsedOnesDo(seed: UInt64, indexed: Bool) async throws {
    let db = try Database(inMemoryWith: .init())
    let parsed = db.collection("parsed")
    let fromText = db.collection("text")
    let unread = db.collection("unread")
    if indexed {
      for collection in [parsed, fromText, unread] {
        try await collection.ensureIndexed(["n"], name: "n")
      }
    }
    for batch in Self.texts(seed) {
      let objects = try batch.map { text -> JSONObject in
        guard case .object(let object) = try JSONParser.parse(text) else {
          throw CancellationError()
        }
        return object
      }
      let prepared = try batch.map { try BulkDocument(text: Array($0.utf8), limits: .default) }
      let one = try await parsed.putEach(objects, newEdits: false)
      let other = try await fromText.putEach(prepared: prepared, newEdits: false)
      let third = try await unread.putEach(
        prepared: batch.map { .text(Array($0.utf8)) }, newEdits: false)
      #expect(one.map(Self.outcome) == other.map(Self.outcome))
      #expect(one.map(Self.outcome) == third.map(Self.outcome))
    }
    #expect(try Self.state(parsed) == Self.state(fromText))
    #expect(try Self.state(parsed) == Self.state(unread))
    #expect(try Self.state(parsed).count > 10)
    // new_edits=true: documents without _id are numbered, updates name their _rev.
    let winners = try await fromText.get(["d1", "d2"])
    let current = try #require(winners[0]?.rev ?? winners[1]?.rev)
    let edits = [
      #"{"fresh":1}"#, #"{"_id":"new","a":[1,{"b":null}]}"#,
      #"{"_id":"d1","_rev":"\#(current)","x":1}"#, #"{"_id":"d2","_rev":"1-nope"}"#,
    ]
    let outcomes = try await fromText.putEach(
      prepared: edits.map { try BulkDocument(text: Array($0.utf8), limits: .default) })
    #expect(outcomes.count == 4)
    #expect(try outcomes[0].get().id.count == 32)
    #expect(try await fromText.get("new")?.body["a"] == [1, ["b": nil]])
    #expect(outcomes[3].failureCode == .conflict)
  }

  /// How deep a document from text may nest is the configured limit's to say, whichever
  /// way it is read: within the limit it is written (even past the parser's default 512
  /// levels, for a limit up to 1,000); past the limit but within what is parsed it is
  /// refused alone; past both, its text is refused before anything is written.
  @Test(
    arguments: [
      (100, 90, "written"), (100, 300, "refused"), (100, 600, "text refused"),
      (700, 600, "written"), (700, 690, "written"), (700, 800, "text refused"),
      (1_000, 1_000, "written"),
    ] as [(Int, Int, String)])
  func nestingFollowsTheConfiguredLimit(limit: Int, depth: Int, expected: String) async throws {
    let limits = DocumentLimits(maxNestingDepth: limit)
    let docs = try Database(inMemoryWith: .init(limits: limits)).collection("docs")
    // `depth` levels in all, the document's own object counted.
    let nested = String(repeating: "[", count: depth - 1) + String(repeating: "]", count: depth - 1)
    let texts = [#"{"_id":"deep","a":\#(nested)}"#, #"{"_id":"plain"}"#].map { Array($0.utf8) }
    let prepared: [BulkDocument]
    do {
      prepared = try texts.map { try BulkDocument(text: $0, limits: limits) }
    } catch let error as SetteeError {
      #expect(expected == "text refused" && error.code == .nestingTooDeep, "\(error)")
      return
    }
    for documents in [prepared, texts.map(BulkDocument.text)] {
      let outcomes = try await docs.putEach(prepared: documents)
      #expect(outcomes[1].failureCode == nil || outcomes[1].failureCode == .conflict)
      switch expected {
      case "written":
        #expect(outcomes[0].failureCode == nil || outcomes[0].failureCode == .conflict)
        // Read back by every path: a stored body is parsed as deep as any limit allows.
        #expect(try await docs.get("deep") != nil)
        #expect(try await docs.find(["a": ["$exists": true]]).count == 1)
        let texts = try await docs.openRevisionTexts([RevisionsRequest("deep", nil)])
        guard case .found(let text)? = texts.first?.first else {
          Issue.record("\(texts)")
          break
        }
        #expect(try JSONParser.parse(text, maxDepth: 1_001).objectValue?["_id"] == "deep")
      case "refused":
        #expect(outcomes[0].failureCode == .nestingTooDeep)
        #expect(try await docs.get("deep") == nil)
      default:
        Issue.record("\(depth) levels under a limit of \(limit) were read")
      }
    }
  }

  static func outcome(_ result: Result<WriteResult, SetteeError>) -> String {
    switch result {
    case .success(let written): "\(written.id) \(written.rev)"
    case .failure(let error): "\(error.code)"
    }
  }
}

extension Result where Failure == SetteeError {
  fileprivate var failureCode: SetteeError.Code? {
    if case .failure(let error) = self { error.code } else { nil }
  }
}
