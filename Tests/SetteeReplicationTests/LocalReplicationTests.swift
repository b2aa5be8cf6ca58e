import Foundation
import Settee
import SetteeCore
import SetteeJavaScript
import SetteeReplication
import SetteeTestSupport
import Testing

/// The replicator between collections of local files, in-process (``LocalPeer`` on both
/// sides): what arrives is what the source holds (every leaf, every attachment),
/// checkpoints make the next run start where the last ended, and conflicts converge.
@Suite("Replication between files")
struct LocalReplicationTests {
  let directory = TemporaryDirectory()

  private func collection(_ file: String, _ name: String = "notes") throws -> DocumentCollection {
    try directory.replica(file, name)
  }

  @discardableResult
  private func replicate(
    _ source: ReplicationEndpoint, _ target: ReplicationEndpoint,
    filter: ReplicationFilter = .none, createTarget: Bool = true
  ) async throws -> ReplicationProgress {
    try await Replicator(
      ReplicationConfiguration(
        source: source, target: target, createTarget: createTarget, filter: filter)
    ).run()
  }

  @Test func localCollectionsReplicateWholeAndResume() async throws {
    let source = try collection("a.db")
    let target = try collection("b.db")
    try await source.putAll((0..<120).map { ["_id": .string("d\($0)"), "n": .int(Int64($0))] })
    let gone = try await source.put(["_id": "gone"])
    try await source.delete("gone", rev: gone.rev)
    try await source.put(["_id": "_design/app", "language": "query", "views": [:]])
    _ = try await source.putLocal(["_id": "_local/private", "x": 1])
    let withFile = try await source.get("d1")!
    try await source.putAttachment(
      "note.txt", to: "d1", rev: withFile.rev, contentType: "text/plain", data: Array("hello".utf8))
    _ = try await source.putAll(conflictBranches("many", 200), newEdits: false)

    let first = try await replicate(.collection(source), .collection(target))
    #expect(first.state == .completed)
    // Counted in revisions, as CouchDB counts them: 200 for "many".
    #expect(first.docsWritten == 322 && first.docWriteFailures == 0)
    #expect(try await ReplicaComparison.differences(source, target) == [])
    #expect(try await target.leaves(of: "many").count == 200)
    #expect(try await target.localDocument("_local/private") == nil, "local documents stay")
    let read = Locked<[UInt8]>([])
    try await target.readAttachment("note.txt", of: "d1") { bytes in read.withLock { $0 += bytes } }
    #expect(read.withLock { $0 } == Array("hello".utf8))

    // The checkpoint: nothing is read again, and only what is new is sent.
    let again = try await replicate(.collection(source), .collection(target))
    #expect(again.docsRead == 0 && again.changesRead == 0)
    try await source.put(["_id": "later"])
    let third = try await replicate(.collection(source), .collection(target))
    #expect(third.changesRead == 1 && third.docsWritten == 1)
    let log = try #require(try await target.localDocument("_local/" + third.replicationID))
    #expect(log.body["session_id"] == .string(third.sessionID))
    // A run with nothing to do writes no checkpoint, as CouchDB's.
    #expect(log.body["history"]?.arrayValue?.count == 2)
  }

  @Test func conflictsConvergeAndResolvingReplicates() async throws {
    let one = try collection("one.db")
    let two = try collection("two.db")
    try await one.put(["_id": "x", "v": 0])
    try await replicate(.collection(one), .collection(two))
    let base = try await one.get("x")!.rev!
    try await one.put(["_id": "x", "_rev": .string(base.description), "v": 1])
    try await two.put(["_id": "x", "_rev": .string(base.description), "v": 2])
    try await replicate(.collection(one), .collection(two))
    try await replicate(.collection(two), .collection(one))
    #expect(try await ReplicaComparison.differences(one, two) == [])
    #expect(try await one.get("x")?.rev == two.get("x")?.rev, "the same winner on both sides")
    #expect(try await one.conflictedDocumentIDs() == ["x"])

    // Resolved on one side, replicated: both clean.
    try await two.resolveConflicts(of: "x") { leaves in .merged(["v": 3]) }
    try await replicate(.collection(two), .collection(one))
    #expect(try await one.conflictedDocumentIDs() == [])
    #expect(try await one.get("x")?["v"] == 3)
    #expect(try await ReplicaComparison.differences(one, two) == [])
  }

  @Test func winningRevisionsOnlyLeaveConflictsBehind() async throws {
    let source = try collection("conflicted.db")
    _ = try await source.putAll(conflictBranches("many", 5), newEdits: false)
    let copy = try collection("winners.db")
    let progress = try await Replicator(
      ReplicationConfiguration(
        source: .collection(source), target: .collection(copy), createTarget: true,
        winningRevisionsOnly: true)
    ).run()
    #expect(progress.docsWritten == 1)
    #expect(try await copy.leaves(of: "many").count == 1)
    #expect(try await copy.get("many")?.rev == source.get("many")?.rev)
  }

  @Test func filtersByIDsAndSelector() async throws {
    let source = try collection("all.db")
    try await source.putAll((0..<30).map { ["_id": .string("d\($0)"), "n": .int(Int64($0))] })
    let byID = try collection("ids.db")
    try await replicate(.collection(source), .collection(byID), filter: .documentIDs(["d3", "d7"]))
    #expect(try await byID.changes().map(\.id).sorted() == ["d3", "d7"])
    let bySelector = try collection("selected.db")
    try await replicate(
      .collection(source), .collection(bySelector), filter: .selector(["n": ["$lt": 4]]))
    #expect(try await bySelector.count() == 4)
  }

  /// A design document's JavaScript filter with query_params, run on JavaScriptCore for a
  /// file source (issue 47); deletions pass as tombstones when the filter keeps them.
  @Test(.enabled(if: DesignFunctions.isAvailable))
  func filtersByADesignDocumentsJavaScript() async throws {
    let source = try collection("js-source.db")
    try await source.putAll((0..<10).map { ["_id": .string("d\($0)"), "n": .int(Int64($0))] })
    try await source.put([
      "_id": "_design/rep",
      "filters": [
        "below": "function (doc, req) { return doc._deleted || doc.n < Number(req.query.limit); }"
      ],
      "views": ["odd": ["map": "function (doc) { if (doc.n % 2 === 1) emit(doc.n, null); }"]],
    ])
    _ = try await source.delete("d8", rev: try #require(try await source.get("d8")?.rev).description)
    let copy = try collection("js-copy.db")
    try await replicate(
      .collection(source), .collection(copy),
      filter: .design("rep/below", queryParameters: ReplicationFilter.queryParameters(["limit": 3])))
    #expect(try await copy.changes().map(\.id).sorted() == ["d0", "d1", "d2", "d8"])
    #expect(try await copy.get("d8") == nil)
    // filter "_view": the documents the view's map function emits a row for (its
    // tombstone emits nothing, so d8's deletion stays behind).
    let odd = try collection("js-odd.db")
    try await replicate(
      .collection(source), .collection(odd),
      filter: .design("_view", queryParameters: ["view": "rep/odd"]))
    #expect(try await odd.changes().map(\.id).sorted() == ["d1", "d3", "d5", "d7", "d9"])
    await #expect(throws: SetteeError.self) {
      try await replicate(
        .collection(source), .collection(odd), filter: .design("_view", queryParameters: [:]))
    }
  }

  /// The progress's `pending` counts down as the batches are written, to 0 at the end:
  /// counted exactly for the first page, then estimated from it (the count walks the rest
  /// of the feed), and 0 once a page ends the feed.
  @Test func pendingCountsDown() async throws {
    let source = try collection("pending.db")
    try await source.putAll((0..<1_200).map { ["_id": .string("p\($0)")] })
    let replicator = try Replicator(
      ReplicationConfiguration(
        source: .collection(source), target: .collection(try collection("pending-copy.db")),
        createTarget: true, batchSize: 500))
    var pendings: [Int] = []
    for await progress in replicator.start() where progress.state == .running {
      if progress.docsWritten > 0, let pending = progress.pending { pendings.append(pending) }
    }
    #expect(pendings == [700, 200, 0])
  }

  /// A selector that is not Mango fails when the replicator is made, for a file's source
  /// and a server's alike, naming the operator; nothing is read or written.
  @Test func aBadSelectorFailsBeforeAnythingIsRead() throws {
    let source = try collection("bad-selector.db")
    let sources: [ReplicationEndpoint] = [
      .collection(source), .url(URL(string: "http://127.0.0.1:9/nowhere")!),
    ]
    for endpoint in sources {
      let error = expectError(.invalidQuery) {
        _ = try Replicator(
          ReplicationConfiguration(
            source: endpoint, target: .collection(source),
            filter: .selector(["n": ["$lesser": 4]])))
      }
      #expect(error?.message.contains("$lesser") == true, "\(String(describing: error))")
    }
  }

  /// A source restored from an older copy: its checkpoint names an older session, so the
  /// next replication starts where both histories agree and skips nothing written after
  /// the restore.
  @Test func aRestoredSourceIsNotSkipped() async throws {
    var source = try collection("restored.db")
    let target = try collection("copy.db")
    try await source.putAll((0..<10).map { ["_id": .string("old\($0)")] })
    try await replicate(.collection(source), .collection(target))
    try source.database.backup(to: directory.path("backup.db"))
    try await source.putAll((0..<10).map { ["_id": .string("lost\($0)")] })
    try await replicate(.collection(source), .collection(target))
    // The file goes back to the copy; new documents reuse the sequence numbers.
    source = try collection("backup.db")
    try await source.putAll((0..<5).map { ["_id": .string("new\($0)")] })
    try await replicate(.collection(source), .collection(target))
    for number in 0..<5 { #expect(try await target.get("new\(number)") != nil) }
  }

  /// A target whose ancestor lacks an attachment the new revision names by a stub (its
  /// copy of that revision came without it): the write fails `missing_stub`, and the
  /// revision is read again with every attachment and written, as CouchDB's replicator
  /// does; nothing is counted as failed.
  @Test func aMissingStubIsFetchedAgainWhole() async throws {
    let source = try collection("stubbed-source.db")
    let target = try collection("stubbed-target.db")
    let first = try await source.put(["_id": "a", "v": 1])
    let attached = try await source.putAttachment(
      "f.bin", to: "a", rev: first.rev, contentType: "application/octet-stream",
      data: [1, 2, 3])
    var edited = try #require(try await source.get("a")).json
    edited["v"] = 2
    let last = try await source.put(edited)
    // The target holds the attachment's revision, but without the attachment.
    try await target.put(
      [
        "_id": "a", "_rev": .string(attached.rev.description), "v": 1,
        "_revisions": [
          "start": 2, "ids": [.string(attached.rev.digest), .string(first.rev.digest)],
        ],
      ], newEdits: false)
    let progress = try await replicate(.collection(source), .collection(target))
    #expect(progress.state == .completed)
    #expect(progress.docWriteFailures == 0 && progress.docsWritten == 1)
    #expect(try await target.get("a")?.rev == last.rev)
    let read = Locked<[UInt8]>([])
    try await target.readAttachment("f.bin", of: "a") { bytes in read.withLock { $0 += bytes } }
    #expect(read.withLock { $0 } == [1, 2, 3])
  }

  @Test func unreachablePeersFailWithoutShowingCredentials() async throws {
    let source = try collection("lonely.db")
    try await source.put(["_id": "a"])
    let replicator = try Replicator(
      ReplicationConfiguration(
        source: .collection(source),
        target: .url(URL(string: "http://admin:s3cret@127.0.0.1:9/nowhere")!),
        requestTimeout: .seconds(1), maxRetryDelay: .milliseconds(50), retries: 2))
    var states: [ReplicationProgress.State] = []
    for await progress in replicator.start() { states.append(progress.state) }
    #expect(states.contains(.retrying) && states.last == .failed)
    await #expect(throws: ReplicationError.self) { try await replicator.run() }
    do { try await replicator.run() } catch {
      #expect(!"\(error)".contains("s3cret") && "\(error)".contains("127.0.0.1:9/nowhere"))
    }
  }
}

/// Documents with more attachment data than a write carries (8 MB) pass from file to file
/// by themselves, their attachments through a temporary file (``SpooledDocument``): every
/// byte arrives, gzip-encoded attachments stay encoded, and an edit that keeps the large
/// attachment sends only what changed.
@Suite("Replication of large documents")
struct LargeDocumentReplicationTests {
  let directory = TemporaryDirectory()

  @Test func largeDocumentsPassThroughASpool() async throws {
    let source = try directory.replica("large-source.db", "notes")
    let target = try directory.replica("large-target.db", "notes")
    var big = [UInt8](repeating: 0, count: 12 << 20)
    for index in big.indices { big[index] = UInt8(truncatingIfNeeded: index &* 131 &+ index >> 9) }
    let text = Array(String(repeating: "compressible line\n", count: 50_000).utf8)
    let hash = String(repeating: "cd", count: 16)
    try await source.put(
      [
        "_id": "large", "_rev": .string("1-\(hash)"),
        "_revisions": ["start": 1, "ids": [.string(hash)]],
        "_attachments": [
          "big.bin": ["content_type": "application/octet-stream", "data": .string(Data(big).base64EncodedString())],
          "notes.txt": [
            "content_type": "text/plain", "encoding": "gzip", "revpos": 1,
            "data": .string(Data(Gzip.encode(text)).base64EncodedString()),
          ],
        ],
      ], newEdits: false)
    try await source.putAll((0..<20).map { ["_id": .string("small\($0)")] })
    let first = try await Replicator(
      ReplicationConfiguration(
        source: .collection(source), target: .collection(target), createTarget: true)
    ).run()
    #expect(first.docsWritten == 21 && first.docWriteFailures == 0, "\(first.json)")
    #expect(try await ReplicaComparison.differences(source, target) == [])
    // Kept encoded, as stored on the source.
    let read = try await target.openRevisions(
      "large", nil, options: RevisionReadOptions(attachmentEncodingInfo: true))
    guard case .found(let copy)? = read.first else { Issue.record("not found"); return }
    #expect(copy["_attachments"]?["notes.txt"]?["encoding"] == "gzip", "\(copy)")

    // An edit of the body: the 12 MB are not sent again (the target holds them).
    var edited = try #require(try await source.get("large")).json
    edited["v"] = 2
    try await source.put(edited)
    let second = try await Replicator(
      ReplicationConfiguration(
        source: .collection(source), target: .collection(target), createTarget: true)
    ).run()
    #expect(second.docsWritten == 1)
    #expect(try await ReplicaComparison.differences(source, target) == [])
  }
}
