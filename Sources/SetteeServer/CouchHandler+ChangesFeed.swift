import Foundation
import HTTPTypes
import Hummingbird
import ServiceLifecycle
import Settee
import SetteeCore
import SetteeJavaScript

/// `_changes`' entries and its feeds: the changes after a point that pass the filter, with
/// their documents, written as a normal or long-poll answer or streamed as a continuous or
/// event-source feed (the request's side is `CouchHandler+Changes.swift`).
extension CouchHandler {
  /// One change the feed sends, with its document when the request includes them.
  struct FeedEntry: Sendable {
    var change: Change
    var document: JSONObject?
  }

  /// The changes after `asked.since` that pass the filter, and the sequence number the
  /// feed reached.
  func changeEntries(_ db: DocumentCollection, _ asked: ChangesRequest) async throws
    -> ([FeedEntry], Int64)
  {
    // Without a filter every change read is sent: one read for the whole limit (up to
    // 10,000 at a time); a filter reads in pages until enough pass it.
    let batch: Int
    if case .none = asked.filter, let limit = asked.limit {
      batch = max(1, min(limit, 10_000))
    } else if case .none = asked.filter {
      batch = 10_000
    } else {
      batch = 500
    }
    var entries: [FeedEntry] = []
    var since = asked.since
    if asked.descending {
      // Newest first: the whole feed reversed (CouchDB ignores since for descending).
      let all = try await db.changes(since: 0)
      let kept = try await entriesFor(db, all.reversed(), asked)
      let limited = asked.limit.map { Array(kept.prefix($0)) } ?? kept
      return (limited, all.last?.seq ?? 0)
    }
    var full = false
    while true {
      let changes = try await db.changes(since: since, limit: batch)
      guard let last = changes.last else { break }
      let kept = try await entriesFor(db, changes, asked)
      if full {
        // A filtered feed that is full ends just before the next change it would have
        // listed: what was examined and left out is not examined again (CouchDB's
        // last_seq), and nothing is skipped.
        if let next = kept.first {
          return (entries, changes.last { $0.seq < next.change.seq }?.seq ?? since)
        }
      } else if let limit = asked.limit, entries.count + kept.count >= limit {
        let room = limit - entries.count
        entries += kept.prefix(room)
        guard case .none = asked.filter else {
          if kept.count > room {
            let next = kept[room].change.seq
            return (entries, changes.last { $0.seq < next }?.seq ?? since)
          }
          full = true
          since = last.seq
          if changes.count < batch { break }
          continue
        }
        // Unfiltered, the feed ends at the last change it lists.
        return (entries, entries.last?.change.seq ?? since)
      } else {
        entries += kept
      }
      since = last.seq
      if changes.count < batch { break }
    }
    return (entries, since)
  }

  /// The changes that pass the filter, with their documents when asked.
  private func entriesFor(_ db: DocumentCollection, _ changes: [Change], _ asked: ChangesRequest)
    async throws -> [FeedEntry]
  {
    var documents: [String: JSONObject] = [:]
    if asked.needsDocuments {
      let live = changes.filter { !$0.isDeleted }.map(\.id)
      for document in try await db.get(live, attachments: asked.attachments) {
        if let document { documents[document.id] = document.json }
      }
    }
    if asked.needsDocuments {
      // Deletions as their tombstones, with whatever body they were deleted with, as
      // CouchDB gives them to `include_docs`, selectors and filters.
      for change in changes where change.isDeleted {
        if let tombstone = try await db.getRevision(change.id), tombstone.rev == change.rev {
          documents[change.id] = tombstone.json
        }
      }
    }
    if asked.includeDocs && asked.conflicts {
      // Conflicted documents (more than one leaf, rare) are read again with their
      // _conflicts.
      for change in changes where change.leaves.count > 1 && !change.isDeleted {
        documents[change.id] = try await db.document(
          change.id,
          RevisionReadOptions(
            conflicts: true, attachments: asked.attachments.data,
            attachmentEncodingInfo: asked.attachments.encodingInfo))
      }
    }
    if asked.judgesEachLeaf, changes.contains(where: { $0.leaves.count > 1 }) {
      return try await leafEntries(db, changes, documents, asked)
    }
    var entries: [FeedEntry] = []
    entries.reserveCapacity(changes.count)
    // A JavaScript filter judges the whole page in one call.
    var passing: [Bool]? = nil
    if case .javaScript(let filter, let request) = asked.filter {
      passing = try await Self.judge(
        changes.map { $0.filtered(documents[$0.id].map(JSON.object)) }, filter, request)
    }
    for (index, change) in changes.enumerated() {
      let document = documents[change.id]
      if let passing {
        guard passing[index] else { continue }
      } else {
        guard try await asked.keeps(change, document.map(JSON.object)) else { continue }
      }
      entries.append(FeedEntry(change: change, document: asked.includeDocs ? document : nil))
    }
    return entries
  }

  /// What a JavaScript filter says of `documents`, in one call; a function that throws
  /// fails the request, `500 filter_error` naming the exception (CouchDB fails it too).
  private static func judge(_ documents: [JSON], _ filter: DesignFilter, _ request: FilterRequest)
    async throws -> [Bool]
  {
    do { return try await filter.keeps(documents, request: request) } catch let error
      as SetteeError
    {
      throw CouchError(.internalServerError, "filter_error", error.message)
    }
  }

  /// `style=all_docs` with a selector or a JavaScript filter: as CouchDB does, every leaf
  /// of a changed document is judged (a conflicted document's read by `open_revs`) and the
  /// entry lists the revisions that pass; a change none of whose leaves pass is left out.
  /// `documents` holds the winners (and what `include_docs` gives).
  private func leafEntries(
    _ db: DocumentCollection, _ changes: [Change], _ documents: [String: JSONObject],
    _ asked: ChangesRequest
  ) async throws -> [FeedEntry] {
    var judged: [[(rev: RevisionID, document: JSON)]] = []
    judged.reserveCapacity(changes.count)
    for change in changes {
      guard change.leaves.count > 1 else {
        judged.append([(change.rev, change.filtered(documents[change.id].map(JSON.object)))])
        continue
      }
      let leaves = try await db.openRevisions(
        change.id,
        options: RevisionReadOptions(
          attachments: asked.attachments.data,
          attachmentEncodingInfo: asked.attachments.encodingInfo))
      judged.append(
        leaves.compactMap { answer in
          guard case .found(let document) = answer,
            let rev = document["_rev"]?.stringValue.flatMap({ try? RevisionID(parsing: $0) })
          else { return nil }
          return (rev, JSON.object(document))
        })
    }
    let given = judged.flatMap { $0.map(\.document) }
    var verdicts: [Bool]
    switch asked.filter {
    case .javaScript(let filter, let request):
      verdicts = try await Self.judge(given, filter, request)
    case .selector(let selector):
      verdicts = try given.map { try MangoMatcher.matches(selector, $0) }
    default:
      verdicts = given.map { _ in true }
    }
    var entries: [FeedEntry] = []
    var offset = 0
    for (change, leaves) in zip(changes, judged) {
      let passing = Set(leaves.indices.filter { verdicts[offset + $0] }.map { leaves[$0].rev })
      offset += leaves.count
      guard !passing.isEmpty else { continue }
      var listed = change
      listed.leaves = change.leaves.filter(passing.contains)
      entries.append(
        FeedEntry(change: listed, document: asked.includeDocs ? documents[change.id] : nil))
    }
    return entries
  }

  /// Writes one entry in CouchDB's shape, `{"seq", "id", "changes": [{"rev"}], "deleted",
  /// "doc"}`, straight to bytes.
  private func write(
    _ entry: FeedEntry, seq: String, _ asked: ChangesRequest, into bytes: inout [UInt8]
  ) {
    let change = entry.change
    bytes += Array(#"{"seq":"#.utf8)
    JSONWriter.writeString(seq, into: &bytes)
    bytes += Array(#","id":"#.utf8)
    JSONWriter.writeString(change.id, into: &bytes)
    bytes += Array(#","changes":["#.utf8)
    for (index, rev) in (asked.allLeaves ? change.leaves : [change.rev]).enumerated() {
      bytes += Array((index == 0 ? #"{"rev":""# : #",{"rev":""#).utf8)
      bytes += Array(rev.description.utf8)
      bytes += Array(#""}"#.utf8)
    }
    bytes.append(UInt8(ascii: "]"))
    if change.isDeleted { bytes += Array(#","deleted":true"#.utf8) }
    if asked.includeDocs {
      bytes += Array(#","doc":"#.utf8)
      if let document = entry.document {
        JSONWriter.write(document, into: &bytes)
      } else if change.isDeleted {
        JSONWriter.write(
          ["_id": .string(change.id), "_rev": .string(change.rev.description), "_deleted": true],
          into: &bytes)
      } else {
        bytes += Array("null".utf8)
      }
    }
    bytes.append(UInt8(ascii: "}"))
  }

  func feedResponse(
    _ db: DocumentCollection, _ entries: [FeedEntry], _ last: Int64, _ asked: ChangesRequest
  ) -> Response {
    let body = ResponseBody { writer in
      // The entries' sequence strings and the last one, read at once.
      var strings = try await db.sequenceStrings(entries.map(\.change.seq) + [last])
      let lastSeq = strings.removeLast()
      let pending = try await asked.descending ? 0 : db.changeCount(since: last)
      var bytes = Array(#"{"results":["#.utf8)
      bytes.reserveCapacity(min(1 << 20, entries.count * 128 + 64))
      for (index, entry) in entries.enumerated() {
        bytes += Array((index == 0 ? "\n" : ",\n").utf8)
        write(entry, seq: strings[index], asked, into: &bytes)
        if bytes.count > 256 * 1024 {
          try await writer.write(ByteBuffer(bytes: bytes))
          bytes.removeAll(keepingCapacity: true)
        }
      }
      bytes += Array("\n],\n\"last_seq\":".utf8)
      JSONWriter.writeString(lastSeq, into: &bytes)
      bytes += Array(",\"pending\":\(pending)}\n".utf8)
      try await writer.write(ByteBuffer(bytes: bytes))
      try await writer.finish(nil)
    }
    return Response(status: .ok, headers: CouchResponse.jsonHeaders(), body: body)
  }

  /// One line per change as it is committed; a newline every `heartbeat`; after `timeout`
  /// without a change (when no heartbeat is asked), a last `{"last_seq": …}` line. A
  /// client that goes away ends the loop at its next write.
  func continuousFeed(
    _ db: DocumentCollection, _ asked: ChangesRequest, eventSource: Bool
  ) -> Response {
    let body = ResponseBody { writer in
      var asked = asked
      asked.descending = false
      var sent = 0
      var quietSince = ContinuousClock.now
      var lastHeartbeat = ContinuousClock.now
      while true {
        var step = asked
        if let limit = asked.limit { step.limit = limit - sent }
        let (entries, last) = try await changeEntries(db, step)
        if !entries.isEmpty {
          var bytes: [UInt8] = []
          let strings = try await db.sequenceStrings(entries.map(\.change.seq))
          for (entry, seq) in zip(entries, strings) {
            if eventSource {
              bytes += Array("data: ".utf8)
              write(entry, seq: seq, asked, into: &bytes)
              bytes += Array("\nid: \(seq)\n\n".utf8)
            } else {
              write(entry, seq: seq, asked, into: &bytes)
              bytes.append(UInt8(ascii: "\n"))
            }
          }
          try await writer.write(ByteBuffer(bytes: bytes))
          sent += entries.count
          quietSince = ContinuousClock.now
          lastHeartbeat = quietSince
        }
        asked.since = last
        if let limit = asked.limit, sent >= limit { break }
        // Wait for the next change, waking for heartbeats; the timeout ends the feed
        // only when no heartbeat keeps it open (as CouchDB does).
        let now = ContinuousClock.now
        let timeoutEnd = quietSince + asked.timeout
        if asked.heartbeat == nil && now >= timeoutEnd { break }
        var wake = asked.heartbeat.map { lastHeartbeat + $0 } ?? timeoutEnd
        if asked.heartbeat == nil { wake = min(wake, timeoutEnd) }
        let wait = max(.zero, wake - now)
        let seconds = Double(wait.components.seconds) + Double(wait.components.attoseconds) / 1e18
        // A shutdown ends the feed as its timeout would (the server waits for requests in
        // flight, and a feed kept open by heartbeats would never end).
        if Task.isShuttingDownGracefully { break }
        let since = asked.since
        let arrived: [Change]
        do {
          arrived = try await cancelWhenGracefulShutdown {
            try await db.waitForChanges(since: since, timeout: min(seconds, 86_400), limit: 1)
          }
        } catch is CancellationError where Task.isShuttingDownGracefully {
          break
        }
        if arrived.isEmpty, let heartbeat = asked.heartbeat,
          ContinuousClock.now >= lastHeartbeat + heartbeat
        {
          try await writer.write(ByteBuffer(bytes: eventSource ? Array(":\n".utf8) : [10]))
          lastHeartbeat = ContinuousClock.now
        }
      }
      let lastSeq = try await db.sequenceString(asked.since)
      var bytes: [UInt8] = []
      if eventSource {
        bytes += Array("event: heartbeat\ndata: \n\n".utf8)
      } else {
        JSONWriter.write(["last_seq": .string(lastSeq), "pending": 0], into: &bytes)
        bytes.append(UInt8(ascii: "\n"))
      }
      try await writer.write(ByteBuffer(bytes: bytes))
      try await writer.finish(nil)
    }
    let type = eventSource ? "text/event-stream" : "application/json"
    return Response(
      status: .ok, headers: [.contentType: type, .cacheControl: "must-revalidate"], body: body)
  }
}
