import Foundation
import SetteeCore
import SetteeTestSupport
import Testing

/// Bounds a hostile client probed (issue 44): each answered at once with its status.
@Suite("Server bounds")
struct ServerBoundsTests {
  let directory = TemporaryDirectory()

  /// A `Content-Length` past what an `Int` holds (the HTTP parser takes up to 2^64 - 1) is
  /// over any limit: `413` before a byte of the body is read, as below 2^63.
  @Test(arguments: ["9223372036854775808", "18446744073709551615", "67108865"])
  func aDeclaredLengthPastTheLimitIsRefusedAtOnce(_ length: String) throws {
    let server = try ServerProcess(db: directory.path("l.settee"))
    defer { server.stop() }
    _ = try RawHTTP.send(WireMessage(method: "PUT", path: "/db"), to: server)
    let started = Date()
    let fd = try server.connectAndSend(
      Array(
        "PUT /db/doc HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: \(length)\r\n\r\n{"
          .utf8))
    defer { close(fd) }
    // The status line comes back while the body has not been sent.
    var answer = ""
    while !answer.contains("\r\n") && Date().timeIntervalSince(started) < 10 {
      answer += server.receive(fd, timeout: 0.2)
    }
    #expect(answer.hasPrefix("HTTP/1.1 413"), "\(answer.prefix(200))")
    #expect(Date().timeIntervalSince(started) < 5)
  }

  /// An attachment is bounded by its decoded size (`--max-attachment-size`, CouchDB's
  /// `max_attachment_size`): alone, gzip-encoded (the probe's bomb inflated to 1 GiB and
  /// was stored) or as a part of a multipart document; `413 attachment_too_large` names
  /// it, and nothing is written.
  @Test func attachmentsAreBoundedByTheirDecodedSize() async throws {
    let server = try await ServerProcess(
      db: directory.path("a.settee"), ["--log-level", "none", "--max-attachment-size", "1048576"])
    defer { server.stop() }
    #expect(try await server.request("PUT", "/db").status == 201)
    #expect(
      try await server.request(
        "PUT", "/db/small/a.bin", body: [UInt8](repeating: 7, count: 1 << 20),
        headers: ["Content-Type": "application/octet-stream"]
      ).status == 201)
    let bomb = Gzip.encode([UInt8](repeating: 0, count: 64 << 20), level: 9)
    #expect(bomb.count < 1 << 20)
    let cases: [(String, [UInt8], [String: String])] = [
      ("plain.bin", [UInt8](repeating: 1, count: (1 << 20) + 1), [:]),
      ("bomb.bin", bomb, ["Content-Encoding": "gzip"]),
    ]
    for (name, body, headers) in cases {
      let answer = try await server.request(
        "PUT", "/db/big/\(name)", body: body,
        headers: headers.merging(["Content-Type": "application/octet-stream"]) { a, _ in a })
      #expect(answer.status == 413, "\(name)")
      #expect(answer.json == ["error": "attachment_too_large", "reason": .string(name)])
    }
    let related =
      "--B\r\nContent-Type: application/json\r\n\r\n"
      + #"{"_attachments":{"p.bin":{"follows":true,"content_type":"application/octet-stream","length":2097152}}}"#
      + "\r\n--B\r\nContent-Disposition: attachment; filename=\"p.bin\"\r\n\r\n"
    let multipart =
      Array(related.utf8) + [UInt8](repeating: 2, count: 2 << 20) + Array("\r\n--B--".utf8)
    let answer = try await server.request(
      "PUT", "/db/big", body: multipart,
      headers: ["Content-Type": "multipart/related; boundary=B"])
    #expect(answer.status == 413)
    #expect(answer.json == ["error": "attachment_too_large", "reason": "p.bin"])
    #expect(try await server.get("/db/big").status == 404)
    #expect(
      try await server.request("GET", "/_up").status == 200)
  }

  /// A long poll's `timeout` is at most a day (docs/limits-and-safety.md).
  @Test func aLongPollTimeoutPastADayIsABadRequest() throws {
    let server = try ServerProcess(db: directory.path("t.settee"))
    defer { server.stop() }
    _ = try RawHTTP.send(WireMessage(method: "PUT", path: "/db"), to: server)
    let refused = try RawHTTP.send(
      WireMessage(method: "GET", path: "/db/_changes?feed=longpoll&timeout=86400001"), to: server)
    #expect(refused.status == 400)
    #expect(refused.json?["error"] == "bad_request")
    let taken = try RawHTTP.send(
      WireMessage(method: "GET", path: "/db/_changes?feed=longpoll&timeout=10"), to: server)
    #expect(taken.status == 200)
  }
}

/// Requests refused before they are requests answer CouchDB's JSON, not a bare 400
/// (issue 44, item 10), then close the connection.
@Suite("HTTP-layer refusals")
struct HTTPRefusalTests {
  let directory = TemporaryDirectory()

  static let refusals: [(request: String, status: Int, error: String)] = [
    ("GARBAGE\r\n\r\n", 405, "method_not_allowed"),
    ("FOO / HTTP/1.1\r\nHost: x\r\n\r\n", 405, "method_not_allowed"),
    ("GET / HTTP/2.0\r\nHost: x\r\n\r\n", 400, "bad_request"),
    ("GET / HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n", 400, "bad_request"),
    // A tunnel (the hostile probe's; its answer had gone out without a body).
    ("CONNECT 127.0.0.1:22 HTTP/1.1\r\nHost: 127.0.0.1:22\r\n\r\n", 400, "bad_request"),
    // A 5,000-revision open_revs list in the URL.
    (
      "GET /db/doc?open_revs=["
        + (1...5_000).map { "\"1-\($0)abcdef0123456789\"" }.joined(separator: ",")
        + "] HTTP/1.1\r\nHost: x\r\n\r\n", 414, "uri_too_long"
    ),
    (
      "GET / HTTP/1.1\r\nHost: x\r\nCookie: " + String(repeating: "c", count: 100_000) + "\r\n\r\n",
      431, "header_fields_too_large"
    ),
    (
      "GET / HTTP/1.1\r\n" + (0..<10_000).map { "X-H\($0): v\r\n" }.joined() + "\r\n", 431,
      "header_fields_too_large"
    ),
  ]

  @Test(arguments: 0..<Self.refusals.count)
  func aRefusedRequestAnswersJSON(_ index: Int) throws {
    let (request, status, error) = Self.refusals[index]
    let server = try ServerProcess(db: directory.path("r\(index).settee"))
    defer { server.stop() }
    let answer = try server.raw(Array(request.utf8), timeout: 5)
    #expect(answer.hasPrefix("HTTP/1.1 \(status) "), "\(answer.prefix(200))")
    #expect(answer.contains("Content-Type: application/json"))
    #expect(answer.contains("Connection: close"))
    let body = answer.components(separatedBy: "\r\n\r\n").dropFirst().joined()
    let json = try JSONParser.parse(Array(body.utf8))
    #expect(json["error"]?.stringValue == error, "\(body)")
    #expect(json["reason"]?.stringValue?.isEmpty == false)
  }

  /// Pipelined: the requests before the refused one are answered first.
  @Test func theRequestsBeforeARefusalAreAnsweredFirst() throws {
    let server = try ServerProcess(db: directory.path("p.settee"))
    defer { server.stop() }
    let answer = try server.raw(
      Array(
        ("GET /_up HTTP/1.1\r\nHost: x\r\n\r\nGET /" + String(repeating: "a", count: 100_000)
          + " HTTP/1.1\r\nHost: x\r\n\r\n").utf8), timeout: 5)
    let statuses = answer.components(separatedBy: "HTTP/1.1 ").dropFirst().map { $0.prefix(3) }
    #expect(statuses == ["200", "414"], "\(answer.prefix(400))")
    // And a tunnel request after an answered one: nothing after it is read.
    let tunnel = try server.raw(
      Array(
        ("GET /_up HTTP/1.1\r\nHost: x\r\n\r\nCONNECT h:1 HTTP/1.1\r\nHost: h:1\r\n\r\n"
          + "GET /_up HTTP/1.1\r\nHost: x\r\n\r\n").utf8), timeout: 5)
    let tunnelStatuses = tunnel.components(separatedBy: "HTTP/1.1 ").dropFirst().map {
      $0.prefix(3)
    }
    #expect(tunnelStatuses == ["200", "400"], "\(tunnel.prefix(400))")
    #expect(tunnel.hasSuffix("Settee is no proxy\"}\n"))
  }
}

/// A client's framing errors are its own: `400 bad_request` (issue 44, item 3), never 500.
@Suite("Framing errors")
struct FramingErrorTests {
  let directory = TemporaryDirectory()

  @Test(arguments: [
    "zz\r\n{}\r\n0\r\n\r\n", "-5\r\n{}\r\n0\r\n\r\n", "123456789012345678901\r\n{}\r\n0\r\n\r\n",
    "2\r\n{\"a\":1}\r\n0\r\n\r\n",
  ])
  func aBadChunkIsABadRequest(_ chunks: String) throws {
    let server = try ServerProcess(db: directory.path("c.settee"))
    defer { server.stop() }
    _ = try RawHTTP.send(WireMessage(method: "PUT", path: "/db"), to: server)
    let answer = try server.raw(
      Array(
        ("PUT /db/doc HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
          + "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n" + chunks).utf8), timeout: 5)
    #expect(answer.hasPrefix("HTTP/1.1 400"), "\(answer.prefix(300))")
    #expect(answer.contains("bad_request"))
  }

  /// A body that ends before its `Content-Length` (the client half-closes): 400 when the
  /// answer can still be written.
  @Test func aBodyCutShortIsABadRequest() throws {
    let server = try ServerProcess(db: directory.path("s.settee"))
    defer { server.stop() }
    _ = try RawHTTP.send(WireMessage(method: "PUT", path: "/db"), to: server)
    let fd = try server.connectAndSend(
      Array(
        "PUT /db/doc HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"a\":"
          .utf8))
    defer { close(fd) }
    shutdown(fd, Int32(SHUT_WR))
    let answer = server.receive(fd, timeout: 5)
    #expect(answer.isEmpty || answer.hasPrefix("HTTP/1.1 400"), "\(answer.prefix(300))")
    #expect(!answer.contains(" 500 "))
  }
}

/// `POST /_replicate` answers a failed replication by its cause (issue 44, item 3: an
/// unreachable source answered `500 unreachable`), as CouchDB does: a side that cannot be
/// opened is `404 db_not_found`, refused credentials `401`.
@Suite("Replication failures")
struct ReplicationFailureTests {
  let directory = TemporaryDirectory()

  @Test func eachFailureAnswersByItsCause() async throws {
    let server = try await ServerProcess(db: directory.path("here.settee"))
    defer { server.stop() }
    let guarded = try await ServerProcess(
      db: directory.path("guarded.settee"), ["--log-level", "none", "--admin", "boss"],
      environment: ["SETTEE_ADMIN_PASSWORD": "secret"])
    defer { guarded.stop() }
    #expect(try await server.put("/db", [:]).status == 201)
    let local = server.url + "db"
    let cases: [(source: String, target: String, status: Int, error: String, says: String)] = [
      // Nothing listens on port 1.
      ("http://127.0.0.1:1/db", local, 404, "db_not_found", "unreachable"),
      (local, "http://127.0.0.1:1/db", 404, "db_not_found", "unreachable"),
      (server.url + "missing", local, 404, "db_not_found", "does not exist"),
      ("missing", "db", 404, "db_not_found", "does not exist"),
      (
        "http://boss:wrong@" + guarded.url.dropFirst("http://".count) + "db", local, 401,
        "unauthorized", "unauthorized"
      ),
    ]
    for (source, target, status, error, says) in cases {
      let answer = try await server.post(
        "/_replicate", ["source": .string(source), "target": .string(target)])
      #expect(answer.status == status, "\(source) → \(target): \(answer.text)")
      #expect(answer.error == error, "\(answer.text)")
      let reason = answer.json["reason"]?.stringValue ?? ""
      #expect(reason.contains(says), "\(reason)")
      #expect(!reason.contains("wrong"), "the password shows: \(reason)")
    }
  }
}
