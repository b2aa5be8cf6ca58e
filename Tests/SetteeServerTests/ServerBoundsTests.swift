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
