import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import NIOHTTP1
import Settee
import SetteeCore

/// Hummingbird's entry: every request goes through the server's middleware
/// (``ServerMiddleware``: the log, CORS, HEAD, errors, decompression, authentication) to
/// ``CouchHandler``.
struct CouchResponder<Middleware: MiddlewareProtocol>: HTTPResponder
where
  Middleware.Input == Request, Middleware.Output == Response,
  Middleware.Context == CouchRequestContext
{
  typealias Context = CouchRequestContext
  let handler: CouchHandler
  let middleware: Middleware

  func respond(to request: Request, context: Context) async throws -> Response {
    try await middleware.handle(request, context: context) { request, context in
      try await handler.handle(
        request, identity: context.identity, client: context.clientAddress,
        channel: context.channel)
    }
  }
}

/// What every request goes through before `handler`, outermost first.
@MiddlewareFixedTypeBuilder<Request, Response, CouchRequestContext>
func serverMiddleware(_ handler: CouchHandler) -> some MiddlewareProtocol<
  Request, Response, CouchRequestContext
> {
  let configuration = handler.configuration
  if configuration.logLevel != .none { RequestLog(level: configuration.logLevel) }
  CrossOrigin(origins: configuration.corsOrigins)
  HeadRequests()
  CouchErrors()
  RequestDecompression(maxRequestBytes: configuration.maxRequestBytes)
  Authentication(authenticator: handler.authenticator)
}

/// Hummingbird's request context, with the client's address (the failed-login lockout
/// counts by it) and its connection (a body sent too slowly is cut by closing it).
struct CouchRequestContext: RequestContext {
  var coreContext: CoreRequestContextStorage
  /// The client's IP address, when the connection has one.
  let clientAddress: String?
  /// The connection the request came on.
  let channel: any Channel
  /// Who is asking, once ``Authentication`` knows (`nil`: nobody, or no administrator).
  var identity: Authenticator.Identity?

  init(source: ApplicationRequestContextSource) {
    coreContext = .init(source: source)
    clientAddress = source.channel.remoteAddress?.ipAddress
    channel = source.channel
  }
}

/// An error answered with CouchDB's `{"error", "reason"}` body and status.
struct CouchError: Error {
  var status: HTTPResponse.Status
  var error: String
  var reason: String
  /// CouchDB's `ref`, which it adds to errors thrown deep in a request (a reversed view
  /// range): a number a client can quote; here a hash of the reason.
  var ref: Int64? = nil

  init(_ status: HTTPResponse.Status, _ error: String, _ reason: String) {
    self.status = status
    self.error = error
    self.reason = reason
  }

  /// CouchDB's answer to an error Settee threw; anything unexpected is a 500 naming it.
  init(_ thrown: any Error) {
    if let couch = thrown as? CouchError {
      self = couch
      return
    }
    if let framing = thrown as? HTTPParserError {
      // The client's framing (a bad chunk size, chunk data longer than its size, a body
      // that ends before its Content-Length): its error, not the server's.
      self.init(.badRequest, "bad_request", "the request is malformed: \(framing)")
      return
    }
    guard let error = thrown as? SetteeError else {
      self.init(.internalServerError, "unknown_error", "\(thrown)")
      return
    }
    let reason = error.message
    if let name = error.couchDBError {
      // A query in CouchDB's dialect refused as CouchDB refuses it.
      self.init(.badRequest, name, reason)
      return
    }
    switch error.code {
    case .conflict: self.init(.conflict, "conflict", "Document update conflict.")
    case .notFound: self.init(.notFound, "not_found", reason)
    case .invalidJSON, .invalidDocument: self.init(.badRequest, "bad_request", reason)
    case .documentTooLarge: self.init(.contentTooLarge, "document_too_large", reason)
    case .missingStub: self.init(.preconditionFailed, "missing_stub", reason)
    case .uniqueViolation: self.init(.conflict, "conflict", reason)
    case .readOnly: self.init(.forbidden, "forbidden", reason)
    case .busy: self.init(.serviceUnavailable, "service_unavailable", reason)
    case .storage, .io, .corruption, .notSetteeDatabase:
      self.init(.internalServerError, error.code.name, reason)
    default: self.init(.badRequest, error.code.name, reason)
    }
  }

  /// CouchDB's refusal of a database name.
  static func illegalDatabaseName(_ name: String) -> CouchError {
    CouchError(
      .badRequest, "illegal_database_name",
      "Name: '\(name)'. Only lowercase characters (a-z), digits (0-9), and any of the characters _, $, (, ), +, -, and / are allowed. Must begin with a letter."
    )
  }

  var json: JSON {
    var json: JSONObject = ["error": .string(error), "reason": .string(reason)]
    if let ref { json["ref"] = .int(ref) }
    return .object(json)
  }

  var response: Response { CouchResponse.json(json, status: status) }
}

/// CouchDB's response shapes.
enum CouchResponse {
  /// A JSON body (ending with a newline, as CouchDB's do).
  static func json(
    _ value: JSON, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]
  ) -> Response {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(256)
    JSONWriter.write(value, into: &bytes)
    return jsonBytes(bytes, status: status, headers: headers)
  }

  /// A JSON body already written (the newline is added here).
  static func jsonBytes(
    _ text: consuming [UInt8], status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]
  ) -> Response {
    text.append(UInt8(ascii: "\n"))
    return Response(
      status: status, headers: jsonHeaders(headers),
      body: ResponseBody(byteBuffer: ByteBuffer(bytes: text)))
  }

  static func jsonHeaders(_ extra: HTTPFields = [:]) -> HTTPFields {
    var headers: HTTPFields = [.contentType: "application/json", .cacheControl: "must-revalidate"]
    headers.append(contentsOf: extra)
    return headers
  }

  /// `{"ok": true}`.
  static func ok(status: HTTPResponse.Status = .ok) -> Response {
    json(["ok": true], status: status)
  }

  /// A write's answer, `{"ok", "id", "rev"}`, with its `ETag` (and `Location` when made).
  /// `etag`: CouchDB sends one for a document's `PUT`, `DELETE` and `COPY`, none for a
  /// `POST /{db}` or an attachment's write.
  static func written(
    _ result: WriteResult, status: HTTPResponse.Status = .created, location: String? = nil,
    etag: Bool = true
  ) -> Response {
    var headers: HTTPFields = etag ? [.eTag: "\"\(result.rev)\""] : [:]
    if let location { headers[.location] = location }
    return json(
      ["ok": true, "id": .string(result.id), "rev": .string(result.rev.description)],
      status: status, headers: headers)
  }
}
