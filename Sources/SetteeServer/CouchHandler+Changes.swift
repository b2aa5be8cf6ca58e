import Foundation
import HTTPTypes
import Hummingbird
import ServiceLifecycle
import Settee
import SetteeCore
import SetteeJavaScript

/// CouchDB's `_changes`: `normal`, `longpoll`, `continuous` and `eventsource` feeds.
extension CouchHandler {
  /// The shortest heartbeat, in milliseconds: a heartbeat keeps a connection alive, and
  /// one a second is more than any proxy needs (CouchDB's replicator and PouchDB ask for
  /// 10 s). Fifty feeds asking for 10 ms took 1.5 cores of a debug build doing nothing;
  /// at 1 s they take 4% (issue 44, item 12).
  static let heartbeatFloor = 1_000

  /// What a request asks of the feed.
  struct ChangesRequest: Sendable {
    var since: Int64
    var limit: Int?
    var descending: Bool
    var allLeaves: Bool
    var includeDocs: Bool
    /// With `includeDocs`: add `_conflicts` to conflicted documents.
    var conflicts = false
    /// What documents (given and filtered) carry of their attachments: stubs, or their
    /// data with `attachments=true` (CouchDB's `attachments`, `att_encoding_info`).
    var attachments = AttachmentListing.stubs
    var filter: Filter
    var heartbeat: Duration?
    var timeout: Duration

    enum Filter: Sendable {
      case none
      case documentIDs(Set<String>)
      /// `filter=_selector`, matched as CouchDB's Mango matches (``MangoMatcher``).
      case selector(MangoSelector)
      case design
      /// A design document's JavaScript filter, with CouchDB's `req` object.
      case javaScript(DesignFilter, request: FilterRequest)
    }

    func keeps(_ change: Change, _ document: JSON?) async throws -> Bool {
      switch filter {
      case .none: return true
      case .documentIDs(let ids): return ids.contains(change.id)
      case .design: return Document.isDesignID(change.id)
      case .selector(let selector):
        // A deletion is matched as its tombstone (`{"_deleted": true}` finds them), as
        // CouchDB matches it.
        guard let document else { return false }
        return try MangoMatcher.matches(selector, document)
      case .javaScript(let filter, let request):
        return try await filter.keeps([change.filtered(document)], request: request)[0]
      }
    }

    /// Whether each leaf of a changed document is judged (`style=all_docs` with a
    /// selector or a JavaScript filter, as CouchDB judges them), not only the winner.
    var judgesEachLeaf: Bool {
      guard allLeaves else { return false }
      switch filter {
      case .selector, .javaScript: return true
      default: return false
      }
    }

    var needsDocuments: Bool {
      if includeDocs { return true }
      switch filter {
      case .selector, .javaScript: return true
      default: return false
      }
    }
  }

  func changes(_ db: DocumentCollection, _ request: CouchRequest) async throws -> Response {
    try allow(request, "GET,HEAD,POST")
    try await requireDatabase(db)
    let body = request.method == .post ? try await request.jsonObjectBody() : [:]
    // A negative limit is no limit, as CouchDB counts it down and never reaches 0.
    let limit = try request.query["limit"].flatMap { text -> Int? in
      guard let number = Int(text) else { return try request.integer("limit") }
      return number < 0 ? nil : number
    }
    var asked = ChangesRequest(
      since: 0, limit: limit, descending: try request.bool("descending"),
      allLeaves: false, includeDocs: try request.bool("include_docs"), filter: .none,
      heartbeat: nil, timeout: .seconds(60))
    switch request.query["style"] ?? "main_only" {
    case "main_only": break
    case "all_docs": asked.allLeaves = true
    case let style:
      throw CouchError(.badRequest, "bad_request", "Invalid style parameter: \(style)")
    }
    if let since = request.query["since"] ?? request.headers[HTTPField.Name("Last-Event-ID")!] {
      do { asked.since = try await db.sequence(since: since) } catch let error as SetteeError
        where error.code == .invalidArgument
      {
        throw CouchError(.badRequest, "bad_request", error.message)
      }
    }
    if let heartbeat = request.query["heartbeat"] {
      let milliseconds = heartbeat == "true" ? 60_000 : Int(heartbeat)
      guard let milliseconds, milliseconds > 0 else {
        throw CouchError(.badRequest, "bad_request", "Invalid heartbeat value: \(heartbeat)")
      }
      asked.heartbeat = .milliseconds(
        min(max(milliseconds, Self.heartbeatFloor), 86_400_000))
    }
    if let timeout = try request.integer("timeout") {
      // At most a day, as the engine's long poll takes (docs/limits-and-safety.md).
      guard (0...86_400_000).contains(timeout) else {
        throw CouchError(
          .badRequest, "bad_request",
          "timeout must be from 0 to 86400000 milliseconds (a day), not \(timeout)")
      }
      asked.timeout = .milliseconds(timeout)
    }
    asked.filter = try await changesFilter(db, request, body)
    asked.conflicts = try request.bool("conflicts")
    asked.attachments = AttachmentListing(
      data: try request.bool("attachments"), encodingInfo: try request.bool("att_encoding_info"))

    switch request.query["feed"] ?? "normal" {
    case "normal":
      // CouchDB's normal feed has an ETag, and answers 304 to a client that holds it.
      let etag = try await changesETag(db, request, body)
      if let unchanged = notModified(request, etag) { return unchanged }
      let (entries, last) = try await changeEntries(db, asked)
      var response = feedResponse(db, entries, last, asked)
      response.headers[.eTag] = etag
      return response
    case "longpoll":
      var (entries, last) = try await changeEntries(db, asked)
      if entries.isEmpty && !asked.descending {
        let deadline = ContinuousClock.now + asked.timeout
        while entries.isEmpty && ContinuousClock.now < deadline {
          let wait = deadline - ContinuousClock.now
          let seconds = Double(wait.components.seconds) + Double(wait.components.attoseconds) / 1e18
          if Task.isShuttingDownGracefully { break }
          let since = last
          do {
            _ = try await cancelWhenGracefulShutdown {
              try await db.waitForChanges(
                since: since, timeout: min(max(0, seconds), 86_400), limit: 1)
            }
          } catch is CancellationError where Task.isShuttingDownGracefully {
            break
          }
          asked.since = last
          (entries, last) = try await changeEntries(db, asked)
        }
      }
      return feedResponse(db, entries, last, asked)
    case "continuous", "eventsource":
      let eventSource = request.query["feed"] == "eventsource"
      return continuousFeed(db, asked, eventSource: eventSource)
    case let feed:
      throw CouchError(.badRequest, "bad_request", "Invalid feed parameter: \(feed)")
    }
  }

  /// A normal feed's `ETag`: the collection's last change and the request's parameters
  /// and body, hashed (CouchDB's is the database's state alone, so that two different
  /// queries of one state share it).
  private func changesETag(
    _ db: DocumentCollection, _ request: CouchRequest, _ body: JSONObject
  ) async throws -> String {
    var text = Array(db.name.utf8) + [0] + Array(String(try await db.lastSequence()).utf8)
    for (name, value) in request.query.sorted(by: { $0.key < $1.key }) {
      text += [0] + Array(name.utf8) + [0] + Array(value.utf8)
    }
    text += [0] + JSONWriter.bytes(.object(body))
    let digest = SHA256.hash(text).prefix(16)
    return "\"" + Hex.string(ofDigest: digest) + "\""
  }

  private func changesFilter(
    _ db: DocumentCollection, _ request: CouchRequest, _ body: JSONObject
  ) async throws -> ChangesRequest.Filter {
    guard let filter = request.query["filter"] else { return .none }
    switch filter {
    case "_doc_ids":
      let list = try body["doc_ids"] ?? request.jsonParameter("doc_ids")
      guard let ids = list?.arrayValue, ids.allSatisfy({ $0.stringValue != nil }) else {
        throw CouchError(
          .badRequest, "bad_request", "filter=_doc_ids takes doc_ids, a JSON array of ids")
      }
      return .documentIDs(Set(ids.compactMap(\.stringValue)))
    case "_selector":
      guard let selector = body["selector"] else {
        throw CouchError(
          .badRequest, "bad_request", "filter=_selector needs a \"selector\" in the body")
      }
      do {
        return .selector(try MangoSelector.parse(selector))
      } catch let error as SetteeError {
        throw CouchError(.badRequest, error.couchDBError ?? "bad_request", error.message)
      }
    case "_design": return .design
    default:
      // A design document's JavaScript filter, "d/f", or its view's map function
      // (filter=_view&view=d/v: the documents it emits a row for).
      let compiled: DesignFilter
      do {
        compiled = try await db.designFilter(
          named: filter, view: request.query["view"], timeLimit: configuration.javaScriptTimeLimit)
      } catch let error as SetteeError {
        switch error.code {
        case .notFound: throw CouchError(.notFound, "not_found", error.message)
        default:
          throw CouchError(
            .badRequest,
            error.message.hasPrefix("compilation_error") ? "compilation_error" : "bad_request",
            error.message)
        }
      }
      return .javaScript(compiled, request: try await filterRequest(db, request, body))
    }
  }

  /// CouchDB's `req` object as a filter function sees it: the query parameters (as
  /// strings), the method, path, headers and body, the user's context and the database's
  /// security object.
  private func filterRequest(
    _ db: DocumentCollection, _ request: CouchRequest, _ body: JSONObject
  ) async throws -> FilterRequest {
    var headers: JSONObject = [:]
    for field in request.headers { headers[field.name.canonicalName] = .string(field.value) }
    return FilterRequest(
      database: db.name,
      query: JSONObject(
        request.query.sorted { $0.key < $1.key }.map { ($0.key, .string($0.value)) }),
      user: request.user, security: try await effectiveSecurity(db),
      method: request.method.rawValue, path: request.segments, headers: headers, body: body)
  }
}
