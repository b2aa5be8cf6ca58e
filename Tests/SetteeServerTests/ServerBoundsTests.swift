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
