import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import CompressNIO
import SetteeCore

// What every request goes through before its handler, as Hummingbird middleware, outermost
// first (``CouchServer`` builds the chain): the request log, CORS, HEAD, CouchDB's error
// bodies, the decompression of compressed bodies, and authentication. The handlers see a
// request whose body is plain and whose caller is known (``CouchRequestContext/identity``).

/// One log line per request, `METHOD path status milliseconds`, through swift-log: every
/// request at `info`, only server errors (5xx) at `error`.
struct RequestLog: RouterMiddleware {
  typealias Context = CouchRequestContext
  let logger: Logger

  init(level: ServerConfiguration.LogLevel) {
    var logger = Logger(label: "settee.requests") { _ in RequestLogHandler() }
    logger.logLevel = level == .info ? .info : .error
    self.logger = logger
  }

  func handle(
    _ request: Request, context: Context, next: (Request, Context) async throws -> Response
  ) async throws -> Response {
    let start = ContinuousClock.now
    let response = try await next(request, context)
    let elapsed = ContinuousClock.now - start
    let milliseconds =
      Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
    logger.log(
      level: response.status.code >= 500 ? .error : .info,
      "\(request.method.rawValue) \(request.uri.path) \(response.status.code) \(String(format: "%.1f", milliseconds))ms"
    )
    return response
  }
}

/// swift-log's handler for the request log: the line alone on standard error, as
/// CouchDB's `httpd` log lines are read by tools (no timestamp or level prefix).
struct RequestLogHandler: LogHandler {
  var logLevel: Logger.Level = .info
  var metadata: Logger.Metadata = [:]

  subscript(metadataKey key: String) -> Logger.Metadata.Value? {
    get { metadata[key] }
    set { metadata[key] = newValue }
  }

  func log(event: LogEvent) {
    FileHandle.standardError.write(Data((event.message.description + "\n").utf8))
  }
}

/// CORS as CouchDB answers it (`[cors]` with `credentials = true`): an allowed `Origin`
/// is echoed with `Access-Control-Allow-Credentials` and the headers a client may read;
/// a preflight (`OPTIONS` with `Access-Control-Request-Method`) is answered here, without
/// credentials; and every answer carries `Vary: Origin`, since it depends on it.
/// (Hummingbird's `CORSMiddleware` exposes headers on preflights only and answers any
/// `OPTIONS` with an `Origin` as one, which CouchDB does not.)
struct CrossOrigin: RouterMiddleware {
  typealias Context = CouchRequestContext
  /// The origins allowed; `*` for any; empty: CORS is off.
  let origins: [String]

  func handle(
    _ request: Request, context: Context, next: (Request, Context) async throws -> Response
  ) async throws -> Response {
    guard !origins.isEmpty else { return try await next(request, context) }
    let origin = request.headers[.origin].flatMap {
      origins.contains("*") || origins.contains($0) ? $0 : nil
    }
    var response: Response
    if let origin, request.method == .options,
      request.headers[.accessControlRequestMethod] != nil
    {
      var headers: HTTPFields = [
        .accessControlAllowOrigin: origin, .accessControlAllowCredentials: "true",
        .accessControlAllowMethods: "GET, PUT, POST, HEAD, DELETE",
        .accessControlAllowHeaders:
          request.headers[.accessControlRequestHeaders]
          ?? "accept, authorization, content-type, origin, referer",
        .accessControlMaxAge: "600",
      ]
      headers[.contentLength] = "0"
      response = Response(status: .noContent, headers: headers)
    } else {
      response = try await next(request, context)
      if let origin {
        response.headers[.accessControlAllowOrigin] = origin
        response.headers[.accessControlAllowCredentials] = "true"
        response.headers[.accessControlExposeHeaders] =
          "content-type, cache-control, accept-ranges, etag, server, location"
      }
    }
    // Caches must key on the Origin, or one origin's answer (with its
    // Access-Control-Allow-Origin) is served to another.
    response.headers[.vary] = "Origin"
    return response
  }
}

/// `HEAD`: the answer to `GET`, without its body.
struct HeadRequests: RouterMiddleware {
  typealias Context = CouchRequestContext

  func handle(
    _ request: Request, context: Context, next: (Request, Context) async throws -> Response
  ) async throws -> Response {
    var response = try await next(request, context)
    if request.method == .head {
      // The length the GET answer has, as CouchDB tells it (a client sizes a download by
      // it), without the body.
      let length = response.body.contentLength.map(String.init) ?? response.headers[.contentLength]
      response.body = ResponseBody()
      response.headers[.contentLength] = length
    }
    return response
  }
}

/// Every error a handler throws, answered with CouchDB's `{"error", "reason"}` body and
/// status (``CouchError``).
struct CouchErrors: RouterMiddleware {
  typealias Context = CouchRequestContext

  func handle(
    _ request: Request, context: Context, next: (Request, Context) async throws -> Response
  ) async throws -> Response {
    do { return try await next(request, context) } catch { return CouchError(error).response }
  }
}

/// Bodies sent with `Content-Encoding: gzip` (Cloudant's SDKs compress them) inflated as
/// they arrive, up to ``Attachment/maxDecodedLength``, so that handlers read plain bytes
/// within their own limits and an upload never sits whole in memory; `deflate` bodies are
/// inflated whole within the request limit; another coding is `415`.
struct RequestDecompression: RouterMiddleware {
  typealias Context = CouchRequestContext
  let maxRequestBytes: Int

  func handle(
    _ request: Request, context: Context, next: (Request, Context) async throws -> Response
  ) async throws -> Response {
    guard let coding = request.headers[.contentEncoding]?.lowercased(), coding != "identity"
    else { return try await next(request, context) }
    // The body is replaced through its setter, which keeps the connection's own body for
    // Hummingbird to drain.
    var inflated = request
    switch coding {
    case "gzip", "x-gzip":
      inflated.body = RequestBody(asyncSequence: GzipInflating(body: request.body))
    case "deflate":
      inflated.body = RequestBody(
        buffer: try await Self.inflateWhole(request.body, limit: maxRequestBytes))
    default:
      throw CouchError(
        .unsupportedMediaType, "bad_content_type", "unsupported Content-Encoding: \(coding)")
    }
    var head = request.head
    head.headerFields[.contentEncoding] = nil
    head.headerFields[.contentLength] = nil
    return try await next(Request(head: head, body: inflated.body), context)
  }

  /// A `deflate` (zlib) body, read and inflated within `limit`.
  static func inflateWhole(_ body: RequestBody, limit: Int) async throws -> ByteBuffer {
    var compressed: ByteBuffer
    do { compressed = try await body.collect(upTo: limit) } catch is NIOTooManyBytesError {
      throw CouchRequest.tooLarge
    }
    do {
      return try compressed.decompress(with: .zlib(), maxSize: limit)
    } catch let error as CompressNIOError where error == .bufferOverflow {
      throw CouchRequest.tooLarge
    } catch {
      throw CouchError(.badRequest, "bad_request", "the request body is not valid deflate")
    }
  }
}

/// A gzip body's bytes, inflated a chunk at a time as it arrives.
struct GzipInflating: AsyncSequence, Sendable {
  typealias Element = ByteBuffer
  let body: RequestBody

  struct AsyncIterator: AsyncIteratorProtocol {
    var source: RequestBody.AsyncIterator
    var decoder: GzipDecoder?
    /// What the decoder has not taken yet of the last buffer read: each call gives the
    /// bytes one step of it makes, so that a highly compressed buffer never inflates whole.
    var pending: ArraySlice<UInt8> = []
    var finished = false

    mutating func next() async throws -> ByteBuffer? {
      while !finished {
        let decoder = try self.decoder ?? GzipDecoder(limit: Attachment.maxDecodedLength)
        self.decoder = decoder
        do {
          if pending.isEmpty {
            guard let buffer = try await source.next() else {
              finished = true
              let rest = try decoder.finish()
              return rest.isEmpty ? nil : ByteBuffer(bytes: rest)
            }
            pending = ArraySlice(buffer.readableBytesView)
          }
          let out = try decoder.decode(taking: &pending)
          if !out.isEmpty { return ByteBuffer(bytes: out) }
        } catch let error as GzipError {
          finished = true
          throw decoder.produced > Attachment.maxDecodedLength
            ? CouchError(.contentTooLarge, "too_large", "the request body \(error.reason)")
            : CouchError(
              .badRequest, "bad_request", "the request body is not valid gzip: \(error.reason)")
        }
      }
      return nil
    }
  }

  func makeAsyncIterator() -> AsyncIterator {
    AsyncIterator(source: body.makeAsyncIterator())
  }
}

/// Who is asking: Basic credentials or an `AuthSession` cookie, checked when the server
/// has an administrator (the identity goes into the context, a renewed cookie onto the
/// answer). A client without them is anonymous; wrong ones are `401` "Name or password is
/// incorrect.", as in CouchDB. No
/// `WWW-Authenticate` challenge, as CouchDB sends none without `require_valid_user`:
/// Foundation's URLSession on Linux waits forever on a challenge it has no delegate for,
/// and browsers would show their own login dialog over the app's.
struct Authentication: RouterMiddleware {
  typealias Context = CouchRequestContext
  let authenticator: Authenticator

  func handle(
    _ request: Request, context: Context, next: (Request, Context) async throws -> Response
  ) async throws -> Response {
    guard authenticator.isEnabled else { return try await next(request, context) }
    var context = context
    // Anonymous clients go on: what they may reach is the handler's to decide
    // (``CouchHandler/authorize(_:)``), by each database's `_security`.
    context.identity = try await authenticator.identify(
      request.headers, client: context.clientAddress)
    var response = try await next(request, context)
    if let cookie = context.identity?.renewedCookie, response.headers[.setCookie] == nil {
      response.headers[.setCookie] = cookie
    }
    return response
  }
}
