import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import Settee
import SetteeCore

/// How ``HTTPPeer`` speaks HTTP: requests with the peer's credentials, answers collected
/// (within ``HTTPPeer/maxAnswerBytes``) or streamed (``HTTPPeer+Spool``), transport
/// failures as ``ReplicationError``s, CouchDB's errors, and the escaping of ids and
/// parameters.
extension HTTPPeer {

  struct Answer {
    var status: Int
    var body: ByteBuffer
    let peer: String
    var contentType: String? = nil

    func json() throws -> JSON {
      do {
        return try body.withUnsafeReadableBytes {
          try JSONParser.parse($0.bindMemory(to: UInt8.self))
        }
      } catch {
        throw ReplicationError(
          peer: peer, status: status, error: "bad_response",
          reason: "the answer is not JSON (\(body.readableBytes) bytes)")
      }
    }

    func object() throws -> JSONObject {
      guard case .object(let object) = try json() else {
        throw ReplicationError(
          peer: peer, status: status, error: "bad_response", reason: "the answer is not an object")
      }
      return object
    }
  }

  /// Sends one request; transport failures and timeouts become ``ReplicationError``s
  /// (`unreachable`, `timeout`) naming the peer without credentials.
  func send(
    _ method: HTTPMethod, _ path: String, query: [(String, String)] = [], body: JSON? = nil,
    rawBody: [UInt8]? = nil, streamedBody: HTTPClientRequest.Body? = nil,
    contentType: String = "application/json", headers: [(String, String)] = [],
    timeout: Duration? = nil
  ) async throws -> Answer {
    var request = self.request(method, path, query: query, headers: headers)
    if let bytes = rawBody ?? body.map(JSONWriter.bytes) {
      request.headers.add(name: "Content-Type", value: contentType)
      request.body = .bytes(ByteBuffer(bytes: bytes))
    } else if let streamedBody {
      request.headers.add(name: "Content-Type", value: contentType)
      request.body = streamedBody
    }
    let seconds = (timeout ?? requestTimeout).components.seconds
    return try await translatingFailures(method, path, seconds: seconds) {
      let response = try await Self.client.execute(request, timeout: .seconds(seconds))
      let bytes = try await response.body.collect(upTo: Self.maxAnswerBytes)
      return Answer(
        status: Int(response.status.code), body: bytes, peer: label,
        contentType: response.headers.first(name: "Content-Type"))
    }
  }

  /// A request to the database's `path` with `query`, the peer's credentials and
  /// `headers` (`Accept: application/json` unless they say otherwise).
  func request(
    _ method: HTTPMethod, _ path: String, query: [(String, String)] = [],
    headers: [(String, String)] = []
  ) -> HTTPClientRequest {
    var url = base + path
    if !query.isEmpty {
      url +=
        "?"
        + query.map { Self.escapeQuery($0.0) + "=" + Self.escapeQuery($0.1) }
        .joined(separator: "&")
    }
    var request = HTTPClientRequest(url: url)
    request.method = method
    request.headers.add(name: "Accept", value: "application/json")
    for (name, value) in headers { request.headers.replaceOrAdd(name: name, value: value) }
    if let authorization { request.headers.add(name: "Authorization", value: authorization) }
    return request
  }

  /// Runs `operation` (a request and the reading of its answer) with transport failures
  /// and timeouts as ``ReplicationError``s (`unreachable`, `timeout`) naming the peer
  /// without credentials; Settee's own errors pass as they are.
  func translatingFailures<T>(
    _ method: HTTPMethod, _ path: String, seconds: Int64, _ operation: () async throws -> T
  ) async throws -> T {
    do {
      return try await operation()
    } catch let error as HTTPClientError where error == .deadlineExceeded || error == .readTimeout {
      throw ReplicationError(
        peer: label, status: nil, error: "timeout",
        reason: "\(method) \(path.isEmpty ? "/" : path) took more than \(seconds) s")
    } catch let error as ReplicationError {
      throw error
    } catch let error as SetteeError {
      throw error
    } catch is CancellationError {
      throw CancellationError()
    } catch {
      throw ReplicationError(
        peer: label, status: nil, error: "unreachable",
        reason: "\(method) \(path.isEmpty ? "/" : path): \(error)")
    }
  }

  /// The client every peer's requests go through: AsyncHTTPClient's shared configuration,
  /// except that a connection that cannot be made fails at once (within 10 s) instead of
  /// being tried again inside the client until the request's deadline: the replicator's
  /// own backoff decides about retrying (an unreachable URL took 5 minutes to fail).
  static let client: HTTPClient = {
    var configuration = HTTPClient.Configuration.singletonConfiguration
    configuration.timeout.connect = .seconds(10)
    configuration.connectionPool.retryConnectionEstablishment = false
    return HTTPClient(
      eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
  }()

  /// Throws CouchDB's error for an answer that is not a success.
  func check(_ answer: Answer) throws {
    guard !(200..<300).contains(answer.status) else { return }
    let object = (try? answer.object()) ?? [:]
    throw ReplicationError(
      peer: label, status: answer.status,
      error: object["error"]?.stringValue ?? "http_\(answer.status)",
      reason: object["reason"]?.stringValue ?? "")
  }

  func malformed(_ reason: String) -> ReplicationError {
    ReplicationError(peer: label, status: nil, error: "bad_response", reason: reason)
  }

  /// A document id in a path: `_design/` and `_local/` keep their slash, as CouchDB
  /// routes them; everything else is percent-encoded.
  static func escapeID(_ id: String) -> String {
    for prefix in ["_design/", "_local/"] where id.hasPrefix(prefix) {
      return prefix + escapeQuery(String(id.dropFirst(prefix.count)))
    }
    return escapeQuery(id)
  }

  static func escapeQuery(_ text: String) -> String {
    text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? text
  }

  /// RFC 3986's unreserved characters, ASCII only (`CharacterSet.alphanumerics` holds every
  /// Unicode letter).
  private static let unreserved = CharacterSet(
    charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

  /// A sequence as `since` takes it: a string as it is, anything else as its JSON.
  static func sequenceParameter(_ seq: JSON) -> String {
    if case .string(let text) = seq { return text }
    return JSONWriter.string(seq)
  }
}
