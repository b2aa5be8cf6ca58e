import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import Settee
import SetteeCore
import SetteeJavaScript

/// A request as the handlers see it: its path split into percent-decoded segments (so that
/// `%2F` in a database or document name stays inside its segment), its query parameters
/// decoded, and its body read on demand within the server's limit.
struct CouchRequest: Sendable {
  let request: Request
  let segments: [String]
  let query: [String: String]
  let maxBodyBytes: Int
  /// How fast the body must arrive; `nil`: no bound (a request made in-process).
  let bodyPace: BodyPace?
  /// Who is asking, as design documents' functions see it (CouchDB's `userCtx`).
  var user = UserContext()

  init(_ request: Request, maxBodyBytes: Int, bodyPace: BodyPace? = nil) throws {
    self.request = request
    self.maxBodyBytes = maxBodyBytes
    self.bodyPace = bodyPace
    let path = request.uri.path
    var segments: [String] = []
    for raw in path.split(separator: "/", omittingEmptySubsequences: true) {
      guard let decoded = String(raw).removingPercentEncoding else {
        throw CouchError(
          .badRequest, "bad_request", "the path \(path) is not percent-encoded UTF-8")
      }
      segments.append(decoded)
    }
    self.segments = segments
    var query: [String: String] = [:]
    // `;` separates parameters too, as in CouchDB (mochiweb's `parse_qs`).
    let pairs = (request.uri.query ?? "").split(
      omittingEmptySubsequences: true, whereSeparator: { $0 == "&" || $0 == ";" })
    for pair in pairs {
      let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
      let key = Self.decodeQuery(parts[0])
      let value = parts.count > 1 ? Self.decodeQuery(parts[1]) : ""
      guard let key, let value else {
        throw CouchError(
          .badRequest, "bad_request", "the query string is not percent-encoded UTF-8")
      }
      query[key] = value
    }
    self.query = query
  }

  private static func decodeQuery(_ text: Substring) -> String? {
    text.replacingOccurrences(of: "+", with: " ").removingPercentEncoding
  }

  var method: HTTPRequest.Method { request.method }
  var headers: HTTPFields { request.headers }

  // MARK: - Query parameters

  /// A boolean parameter (`true`/`false`); absent: `default`.
  func bool(_ name: String, default value: Bool = false) throws -> Bool {
    guard let text = query[name] else { return value }
    switch text {
    case "true": return true
    case "false": return false
    default:
      throw CouchError(
        .badRequest, "query_parse_error", "Invalid boolean parameter: \(name)=\(text)")
    }
  }

  /// A document read's boolean option as CouchDB reads it (`revs`, `conflicts`, …): set
  /// only by the text `true`; any other value is false, not an error.
  func flag(_ name: String) -> Bool { query[name] == "true" }

  /// A non-negative integer parameter.
  func integer(_ name: String) throws -> Int? {
    guard let text = query[name] else { return nil }
    guard let number = Int(text), number >= 0 else {
      throw CouchError(
        .badRequest, "query_parse_error",
        "Invalid value for integer parameter \(name): \(JSONWriter.string(.string(text)))")
    }
    return number
  }

  /// A parameter holding JSON (CouchDB's `key`, `open_revs`, `atts_since` …).
  func jsonParameter(_ name: String) throws -> JSON? {
    guard let text = query[name] else { return nil }
    do { return try JSONParser.parse(text) } catch {
      throw CouchError(
        .badRequest, "bad_request", "Invalid JSON in parameter \(name): \(error)")
    }
  }

  /// A revision parameter (`rev`), or (for writes, `ifMatch`) the `If-Match` header's;
  /// both given must agree, as in CouchDB.
  func revision(ifMatch: Bool = true) throws -> RevisionID? {
    let header = ifMatch ? headers[.ifMatch] : nil
    let etag = header.map { $0.trimmingCharacters(in: CharacterSet(charactersIn: "\" ")) }
    if let given = query["rev"], let etag, given != etag {
      throw CouchError(.badRequest, "bad_request", "Document rev and etag have different values")
    }
    guard let text = query["rev"] ?? etag else { return nil }
    do { return try RevisionID(parsing: text) } catch {
      throw CouchError(.badRequest, "bad_request", "Invalid rev format")
    }
  }

  // MARK: - Body

  /// The whole body, refused with `413` beyond the server's limit: by its
  /// `Content-Length` before reading, or as soon as a streamed body passes it. Past 1 MiB
  /// the body waits in a temporary file until it is whole (``BodyCollector``). A
  /// compressed body comes inflated (``RequestDecompression``), within the same limit.
  func bodyBytes() async throws -> [UInt8] {
    var collected = BodyCollector()
    try await forEachRawChunk(limit: maxBodyBytes) { try collected.append($0) }
    return try collected.finish()
  }

  /// The body a chunk at a time as it arrives, within the same limit as ``bodyBytes()``.
  func forEachBodyChunk(_ body: (ByteBufferView) throws -> Void) async throws {
    try await forEachRawChunk(limit: maxBodyBytes, body)
  }

  /// The body as it arrives, with no limit on its size (the caller bounds what it keeps:
  /// an attachment upload, a `multipart/related` document).
  func forEachStreamedChunk(_ body: ([UInt8]) throws -> Void) async throws {
    try await forEachRawChunk(limit: nil) { try body(Array($0)) }
  }

  /// The body's bytes as they arrive, refused with `413` beyond `limit` (`nil`: none): by
  /// its `Content-Length` before reading, or as soon as a streamed body passes it. A body
  /// slower than ``bodyPace`` is cut: the connection's input is closed and the request
  /// answered `408` (``BodyPace``).
  func forEachRawChunk(limit: Int?, _ body: (ByteBufferView) throws -> Void) async throws {
    if let limit, let declared = headers[.contentLength], Self.exceeds(declared, limit) {
      throw Self.tooLarge
    }
    // Watched for its pace when it comes from a connection (in-process requests have none).
    let progress = bodyPace.map { pace in
      let progress = BodyProgress()
      pace.watchdog.watch(progress, on: pace.channel)
      return progress
    }
    defer { if let bodyPace, let progress { bodyPace.watchdog.stop(progress) } }
    let timedOut = { progress?.finish() == true ? bodyPace?.watchdog.timedOut : nil }
    do {
      var total = 0
      for try await buffer in request.body {
        total += buffer.readableBytes
        progress?.received(buffer.readableBytes)
        if let limit, total > limit { throw Self.tooLarge }
        try body(buffer.readableBytesView)
      }
    } catch {
      throw timedOut() ?? error
    }
    if let timedOut = timedOut() { throw timedOut }
  }

  /// Whether a `Content-Length` declares more than `limit` bytes: digits past what an `Int`
  /// holds (HTTP's parser takes up to 2^64 - 1) are more than any limit.
  static func exceeds(_ declared: String, _ limit: Int) -> Bool {
    let digits = declared.trimmingCharacters(in: .whitespaces)
    guard !digits.isEmpty, digits.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return false }
    guard let length = Int(digits) else { return true }
    return length > limit
  }

  static let tooLarge = CouchError(.contentTooLarge, "too_large", "the request entity is too large")

  /// The body as JSON. `requiresJSONType`: CouchDB's POST endpoints refuse another
  /// `Content-Type` (`415 bad_content_type`).
  /// The body as JSON. A document's member named twice is refused (Settee keeps what it
  /// is given or nothing), where a query's (`lastDuplicateWins`) keeps its last value, as
  /// CouchDB reads both.
  func jsonBody(requiresJSONType: Bool = true, lastDuplicateWins: Bool = false) async throws
    -> JSON
  {
    if requiresJSONType { try requireJSONType() }
    let bytes = try await bodyBytes()
    do {
      // As deep as a database's configuration may let a document nest; its own limit is
      // then the write's to apply, naming where the document is too deep.
      let depth = Database.Configuration.maxNestingDepth
      if lastDuplicateWins {
        return try JSONParser.parseKeepingLastDuplicate(bytes, maxDepth: depth)
      }
      return try JSONParser.parse(bytes, maxDepth: depth)
    } catch let error as SetteeError {
      throw CouchError(.badRequest, "bad_request", "invalid UTF-8 JSON: \(error.message)")
    }
  }

  /// CouchDB's POST endpoints refuse a `Content-Type` other than JSON's
  /// (`415 bad_content_type`).
  func requireJSONType() throws {
    guard (headers[.contentType] ?? "").lowercased().hasPrefix("application/json") else {
      throw CouchError(
        .unsupportedMediaType, "bad_content_type", "Content-Type must be application/json")
    }
  }

  /// The body as a JSON object.
  func jsonObjectBody(requiresJSONType: Bool = true) async throws -> JSONObject {
    guard case .object(let object) = try await jsonBody(requiresJSONType: requiresJSONType) else {
      throw CouchError(.badRequest, "bad_request", "Request body must be a JSON object")
    }
    return object
  }
}
