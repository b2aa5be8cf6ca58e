import CompressNIO
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Settee
import SetteeCore
import SetteeReplication
import SetteeTestSupport
import Testing

@testable import SetteeServer

/// The server's middleware, each on its own before a small router, and the whole chain
/// before the real handler, in process through HummingbirdTesting (no socket, no process):
/// what each adds or takes away, in the order ``serverMiddleware(_:)`` puts them.
@Suite("Server middleware, in process")
struct MiddlewareTests {
  /// A router with `middleware` in front of four routes: `/ok` (GET and HEAD, "ok"),
  /// `/echo` (POST, the body it read and the headers it saw), `/fail` (a CouchDB error),
  /// `/crash` (an error the server did not expect).
  static func application(
    _ middleware: [any MiddlewareProtocol<Request, Response, CouchRequestContext>]
  ) -> some ApplicationProtocol {
    let router = Router(context: CouchRequestContext.self)
    for each in middleware { router.add(middleware: each) }
    router.get("/ok") { _, _ in "ok" }
    router.head("/ok") { _, _ in "ok" }
    router.on("/ok", method: .options) { _, _ in "handler" }
    router.post("/echo") { request, _ -> Response in
      let body = try await request.body.collect(upTo: 1 << 20)
      var headers: HTTPFields = [:]
      headers[HTTPField.Name("X-Saw-Encoding")!] = request.headers[.contentEncoding] ?? "none"
      return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: body))
    }
    router.get("/fail") { _, _ -> String in
      throw CouchError(.notFound, "not_found", "missing")
    }
    router.get("/crash") { _, _ -> String in throw CocoaError(.featureUnsupported) }
    router.get("/settee") { _, _ -> String in
      throw SetteeError(.conflict, "the document changed")
    }
    return Application(router: router)
  }

  static func gzip(_ text: String) throws -> ByteBuffer {
    var buffer = ByteBuffer(string: text)
    return try buffer.compress(with: .gzip())
  }

  static func deflate(_ text: String) throws -> ByteBuffer {
    var buffer = ByteBuffer(string: text)
    return try buffer.compress(with: .zlib())
  }

  // MARK: - CORS

  @Test func crossOriginEchoesAnAllowedOriginAndVariesOnIt() async throws {
    let app = Self.application([CrossOrigin(origins: ["http://app.example"]), CouchErrors()])
    try await app.test(.router) { client in
      try await client.execute(uri: "/ok", method: .get, headers: [.origin: "http://app.example"]) {
        #expect($0.status == .ok)
        #expect($0.headers[.accessControlAllowOrigin] == "http://app.example")
        #expect($0.headers[.accessControlAllowCredentials] == "true")
        #expect($0.headers[.accessControlExposeHeaders]?.contains("etag") == true)
        #expect($0.headers[.vary] == "Origin")
      }
      // Another origin: nothing allowed, still keyed on the Origin for caches.
      try await client.execute(uri: "/ok", method: .get, headers: [.origin: "http://evil.example"])
      {
        #expect($0.status == .ok)
        #expect($0.headers[.accessControlAllowOrigin] == nil)
        #expect($0.headers[.vary] == "Origin")
      }
      // An error answer carries the headers too: a browser reads its reason.
      try await client.execute(uri: "/fail", method: .get, headers: [.origin: "http://app.example"])
      {
        #expect($0.status == .notFound)
        #expect($0.headers[.accessControlAllowOrigin] == "http://app.example")
        #expect($0.headers[.vary] == "Origin")
      }
    }
  }

  @Test func aPreflightIsAnsweredBeforeTheHandler() async throws {
    let app = Self.application([CrossOrigin(origins: ["*"])])
    try await app.test(.router) { client in
      let preflight: HTTPFields = [
        .origin: "http://any.example", .accessControlRequestMethod: "PUT",
        .accessControlRequestHeaders: "content-type, x-custom",
      ]
      try await client.execute(uri: "/ok", method: .options, headers: preflight) {
        #expect($0.status == .noContent)
        #expect($0.headers[.accessControlAllowOrigin] == "http://any.example")
        #expect($0.headers[.accessControlAllowHeaders] == "content-type, x-custom")
        #expect($0.headers[.accessControlAllowMethods]?.contains("PUT") == true)
        #expect($0.body.readableBytes == 0)
      }
      // OPTIONS without Access-Control-Request-Method is no preflight: the handler answers
      // (CouchDB's rule; Hummingbird's own CORS middleware takes any OPTIONS).
      try await client.execute(uri: "/ok", method: .options, headers: [.origin: "http://x"]) {
        #expect(String(buffer: $0.body) == "handler")
      }
    }
  }

  @Test func withoutOriginsCorsAddsNothing() async throws {
    let app = Self.application([CrossOrigin(origins: [])])
    try await app.test(.router) { client in
      try await client.execute(uri: "/ok", method: .get, headers: [.origin: "http://a"]) {
        #expect($0.headers[.accessControlAllowOrigin] == nil)
        #expect($0.headers[.vary] == nil)
      }
    }
  }

  // MARK: - HEAD and errors

  @Test func headAnswersWithoutTheBody() async throws {
    let app = Self.application([HeadRequests()])
    try await app.test(.router) { client in
      try await client.execute(uri: "/ok", method: .head) {
        #expect($0.status == .ok)
        #expect($0.body.readableBytes == 0)
      }
      try await client.execute(uri: "/ok", method: .get) {
        #expect(String(buffer: $0.body) == "ok")
      }
    }
  }

  @Test(arguments: [
    ("/fail", HTTPResponse.Status.notFound, "not_found", "missing"),
    ("/settee", .conflict, "conflict", "Document update conflict."),
  ])
  func errorsAreCouchDBsBodies(
    path: String, status: HTTPResponse.Status, error: String, reason: String
  ) async throws {
    let app = Self.application([CouchErrors()])
    try await app.test(.router) { client in
      try await client.execute(uri: path, method: .get) {
        #expect($0.status == status)
        #expect($0.headers[.contentType] == "application/json")
        let body = try JSONParser.parse(Array($0.body.readableBytesView))
        #expect(body == ["error": .string(error), "reason": .string(reason)])
      }
    }
  }

  @Test func anUnexpectedErrorIsA500NamingIt() async throws {
    let app = Self.application([CouchErrors()])
    try await app.test(.router) { client in
      try await client.execute(uri: "/crash", method: .get) {
        #expect($0.status == .internalServerError)
        let body = try JSONParser.parse(Array($0.body.readableBytesView))
        #expect(body["error"] == "unknown_error")
        #expect(body["reason"]?.stringValue?.isEmpty == false)
      }
    }
  }

  // MARK: - Decompression

  @Test func compressedBodiesReachTheHandlerPlain() async throws {
    let app = Self.application([CouchErrors(), RequestDecompression(maxRequestBytes: 1 << 20)])
    let text = String(repeating: "{\"docs\":[]} ", count: 500)
    try await app.test(.router) { client in
      for (coding, body) in [("gzip", try Self.gzip(text)), ("deflate", try Self.deflate(text))] {
        #expect(body.readableBytes < text.utf8.count / 10)
        try await client.execute(
          uri: "/echo", method: .post, headers: [.contentEncoding: coding], body: body
        ) {
          #expect($0.status == .ok, "\(coding)")
          #expect(String(buffer: $0.body) == text, "\(coding)")
          // The handler sees a plain body: the coding is gone from the request.
          #expect($0.headers[HTTPField.Name("X-Saw-Encoding")!] == "none", "\(coding)")
        }
      }
      try await client.execute(
        uri: "/echo", method: .post, headers: [.contentEncoding: "identity"],
        body: ByteBuffer(string: "as is")
      ) { #expect(String(buffer: $0.body) == "as is") }
    }
  }

  @Test func badOrUnknownCodingsAreRefusedInCouchDBsWords() async throws {
    let app = Self.application([CouchErrors(), RequestDecompression(maxRequestBytes: 4096)])
    try await app.test(.router) { client in
      func refusal(_ coding: String, _ body: ByteBuffer) async throws -> (Int, String?) {
        try await client.execute(
          uri: "/echo", method: .post, headers: [.contentEncoding: coding], body: body
        ) { response in
          let json = try? JSONParser.parse(Array(response.body.readableBytesView))
          return (response.status.code, json?["error"]?.stringValue)
        }
      }
      let unknown = try await refusal("br", ByteBuffer(string: "x"))
      #expect(unknown.0 == 415 && unknown.1 == "bad_content_type")
      let notGzip = try await refusal("gzip", ByteBuffer(string: "not gzip at all"))
      #expect(notGzip.0 == 400 && notGzip.1 == "bad_request")
      let notDeflate = try await refusal("deflate", ByteBuffer(string: "not deflate"))
      #expect(notDeflate.0 == 400 && notDeflate.1 == "bad_request")
      // A deflate body that inflates past the request limit: 413, never read whole.
      let bomb = try await refusal(
        "deflate", try Self.deflate(String(repeating: "a", count: 100_000)))
      #expect(bomb.0 == 413 && bomb.1 == "too_large")
    }
  }

  // MARK: - The whole chain before the real handler

  @Test func theServersChainAroundCouchDBsHandler() async throws {
    let directory = TemporaryDirectory()
    let database = try Database(path: directory.path("chain.db"))
    let configuration = ServerConfiguration(logLevel: .none, corsOrigins: ["http://app.example"])
    let handler = CouchHandler(
      database: database, configuration: configuration,
      authenticator: try await Authenticator.load(database),
      replicatorDatabase: ReplicatorDatabase(database: database))
    let app = Application(
      responder: CouchResponder(handler: handler, middleware: serverMiddleware(handler)))
    try await app.test(.router) { client in
      try await client.execute(uri: "/db", method: .put) { #expect($0.status == .created) }
      let documents = #"{"docs":[{"_id":"a","n":1},{"_id":"b","n":2}]}"#
      try await client.execute(
        uri: "/db/_bulk_docs", method: .post,
        headers: [.contentEncoding: "gzip", .contentType: "application/json"],
        body: try Self.gzip(documents)
      ) { #expect($0.status == .created) }
      try await client.execute(
        uri: "/db/a", method: .head, headers: [.origin: "http://app.example"]
      ) {
        #expect($0.status == .ok)
        #expect($0.body.readableBytes == 0)
        #expect($0.headers[.eTag]?.hasPrefix("\"1-") == true)
        #expect($0.headers[.accessControlAllowOrigin] == "http://app.example")
      }
      try await client.execute(uri: "/db/missing", method: .get) {
        #expect($0.status == .notFound)
        let body = try JSONParser.parse(Array($0.body.readableBytesView))
        #expect(body["error"] == "not_found")
      }
      var etag = ""
      try await client.execute(uri: "/db/b", method: .get) { response in
        let body = try JSONParser.parse(Array(response.body.readableBytesView))
        #expect(body["n"] == 2)
        etag = response.headers[.eTag] ?? ""
        #expect(etag == "\"\(body["_rev"]?.stringValue ?? "")\"")
      }
      var feed = ""
      try await client.execute(uri: "/db/_changes", method: .get) {
        feed = $0.headers[.eTag] ?? ""
      }
      #expect(!feed.isEmpty)
      // CouchDB's `etag_respond`: a client that holds the revision gets a 304, also when
      // its tag is one of several and when options leave the document without meta
      // members; another tag, or meta members (no ETag), get the document. The normal
      // `_changes` feed answers the same way.
      for (uri, tags, status, tag) in [
        ("/db/b", etag, 304, etag), ("/db/b", "\"0-x\", \(etag)", 304, etag),
        ("/db/b?revs=true", etag, 304, etag), ("/db/b", "\"1-other\"", 200, etag),
        ("/db/b?revs_info=true", etag, 200, ""), ("/db/_changes", feed, 304, feed),
        ("/db/_changes", "\"x\",\(feed)", 304, feed), ("/db/_changes", etag, 200, feed),
      ] {
        try await client.execute(uri: uri, method: .get, headers: [.ifNoneMatch: tags]) {
          #expect($0.status.code == status, "\(uri) \(tags)")
          if status == 304 {
            #expect($0.body.readableBytes == 0 && $0.headers[.eTag] == tag, "\(uri)")
          }
        }
      }
    }
  }
}
