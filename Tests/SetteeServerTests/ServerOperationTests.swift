import Foundation
import Settee
import SetteeCore
import SetteeTestSupport
import Testing

/// Running the server: its log, stopping it, refusing to start; and clients that misbehave.
@Suite("settee serve: operation and abuse")
struct ServerOperationTests {
  let directory = TemporaryDirectory()

  @Test func logsStopsCleanlyAndRefusesToStart() async throws {
    let path = directory.path("op.db")
    let server = try await ServerProcess(db: path, [])
    try await server.request("PUT", "/db")
    #expect(try await server.get("/_up").status == 200)
    // A feed kept open by heartbeats and a long poll: a stop ends both, then exits.
    async let feed = server.get("/db/_changes?feed=continuous&heartbeat=200")
    // (Heartbeats keep the long poll's request alive past the client's idle timeout while
    // the steps below run slowly on a loaded machine.)
    async let poll = server.get("/db/_changes?feed=longpoll&since=now&heartbeat=200")
    try await Task.sleep(for: .milliseconds(400))

    // Another server cannot take the port; other addresses and bad files are refused
    // before listening.
    let taken = try await SetteeBinary.run([
      "--db", directory.path("other.db"), "serve", "--port", String(server.port),
    ])
    #expect(taken.status == 1 && taken.stderr.contains("cannot listen"), "\(taken.stderr)")
    #expect(taken.stdout.isEmpty)
    let exposed = try await SetteeBinary.run([
      "--db", directory.path("other.db"), "serve", "--bind", "0.0.0.0",
    ])
    #expect(exposed.status == 1 && exposed.stdout.isEmpty)
    let unopenable = try await SetteeBinary.run([
      "--db", directory.path("no/such/dir.db"), "serve", "--port", "0",
    ])
    #expect(
      unopenable.status == 1 && unopenable.stdout.isEmpty
        && unopenable.stderr.contains("cannot open"))

    let started = Date()
    let (status, log) = server.stop(SIGTERM)
    #expect(status == 0)
    #expect(Date().timeIntervalSince(started) < 10)
    #expect(try await feed.text.contains("last_seq"))
    #expect(try await poll.json["results"] == [])
    #expect(log.contains("PUT /db 201"), "\(log)")
    #expect(log.contains("GET /_up 200"))
    let check = try await SetteeBinary.run(["--db", path, "check"])
    #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
  }

  @Test func oversizedAndMalformedRequests() async throws {
    let server = try await ServerProcess(
      db: directory.path("abuse.db"), ["--log-level", "none", "--max-request-size", "10000"])
    try await server.request("PUT", "/db")
    // Announced too large: refused before a byte of the body is read.
    let announced = try server.raw(
      Array(
        "POST /db/_bulk_docs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000000000\r\n\r\n"
          .utf8),
      timeout: 5)
    #expect(announced.hasPrefix("HTTP/1.1 413"), "\(announced)")
    #expect(announced.contains(#""error":"too_large""#))
    // Streamed past the limit.
    let big =
      Array(#"{"docs":["#.utf8) + Array(repeating: UInt8(ascii: " "), count: 20000)
      + Array("]}".utf8)
    let streamed = try await server.request(
      "POST", "/db/_bulk_docs", body: big, headers: ["Content-Type": "application/json"])
    #expect(streamed.status == 413 && streamed.error == "too_large")
    // Not HTTP at all, and a request line with a bad path.
    let garbage = try server.raw(Array("HELLO THERE\r\n\r\n".utf8), timeout: 5)
    #expect(garbage.hasPrefix("HTTP/1.1 405"), "\(garbage)")
    #expect(garbage.contains(#"{"error":"method_not_allowed""#))
    let badPath = try server.raw(
      Array("GET /db/%ZZ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8), timeout: 5)
    #expect(badPath.hasPrefix("HTTP/1.1 400"), "\(badPath)")
    // A body cut off: nothing written.
    _ = try server.raw(
      Array("PUT /db/cut HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"a\":".utf8),
      closeAfterSending: true)
    // Names that look like paths are names.
    let traversal = try await server.request(
      "PUT", "/db/doc/..%2F..%2Fpasswd", body: Array("x".utf8),
      headers: ["Content-Type": "text/plain"])
    #expect(traversal.status == 201, "\(traversal.text)")
    #expect(try await server.get("/db/doc").json["_attachments"]?["../../passwd"]?["length"] == 1)
    #expect(try await server.get("/..%2F..%2Fetc%2Fpasswd").error == "illegal_database_name")
    #expect(try await server.get("/db/..%2F..%2Fetc").status == 404)
    #expect(try await server.get("/db/cut").status == 404)
    #expect(try await server.get("/db").json["doc_count"] == 1)
    #expect(try await server.get("/_up").status == 200)
  }

  @Test func clientsThatGoAwayOrDawdle() async throws {
    let server = try await ServerProcess(
      db: directory.path("slow.db"), ["--log-level", "none", "--idle-timeout", "1"])
    try await server.request("PUT", "/db")
    let docs: [JSON] = (0..<2000).map {
      ["_id": .string("d\($0)"), "pad": .string(String(repeating: "x", count: 200))]
    }
    try await server.post("/db/_bulk_docs", ["docs": .array(docs)])
    // Gone mid-response and mid-feed.
    for _ in 0..<20 {
      _ = try server.raw(
        Array("GET /db/_all_docs?include_docs=true HTTP/1.1\r\nHost: x\r\n\r\n".utf8),
        closeAfterSending: true)
      _ = try server.raw(
        Array("GET /db/_changes?feed=continuous&heartbeat=10 HTTP/1.1\r\nHost: x\r\n\r\n".utf8),
        timeout: 0.05)
    }
    // A slowloris client: half a request line, then nothing. The idle timeout closes it.
    let started = Date()
    let slow = try server.raw(Array("GET /db HTTP/1.1\r\nHost:".utf8), timeout: 10)
    #expect(slow.isEmpty)
    #expect(Date().timeIntervalSince(started) < 8)
    #expect(try await server.get("/db").json["doc_count"] == 2000)
  }

  @Test func aThousandConnectionsAtOnce() async throws {
    let server = try await ServerProcess(db: directory.path("many.db"), ["--log-level", "none"])
    try await server.request("PUT", "/db")
    try await server.put("/db/doc", ["n": 1])
    // All connected and asking before any answer is read: the server holds 1,000 at once.
    let request = Array("GET /db/doc HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8)
    var sockets: [Int32] = []
    for _ in 0..<1000 { sockets.append(try server.connectAndSend(request)) }
    var answers = 0
    for fd in sockets {
      let text = await server.receive(fd, timeout: 30)
      close(fd)
      if text.hasPrefix("HTTP/1.1 200") && text.contains(#""n":1"#) { answers += 1 }
    }
    #expect(answers == 1000)
    #expect(try await server.get("/_up").status == 200)
  }

  /// A client that asks for a large answer and does not read it holds no transaction:
  /// writes and other reads go on meanwhile.
  @Test func aSlowReaderHoldsNothing() async throws {
    let server = try await ServerProcess(db: directory.path("stall.db"), ["--log-level", "none"])
    try await server.request("PUT", "/db")
    let padding = JSON.string(String(repeating: "y", count: 2000))
    let docs: [JSON] = (0..<3000).map { ["_id": .string("d\($0)"), "pad": padding] }
    try await server.post("/db/_bulk_docs", ["docs": .array(docs)])
    // Six megabytes asked for, none of it read.
    let stalled = try server.connectAndSend(
      Array("GET /db/_all_docs?include_docs=true HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
    let feed = try server.connectAndSend(
      Array("GET /db/_changes?include_docs=true HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
    defer {
      close(stalled)
      close(feed)
    }
    try await Task.sleep(for: .milliseconds(300))
    // The writes finish while both answers are still unread: a held transaction would make
    // them wait for good (each is bounded by the client's timeout, not by a clock here: a
    // commit's fsync under a loaded CI disk took half a second).
    for number in 0..<20 {
      #expect(try await server.put("/db/new\(number)", ["n": .int(Int64(number))]).status == 201)
    }
    #expect(try await server.get("/db/new19").json["n"] == 19)
    #expect(try await server.get("/db").json["doc_count"] == 3020)
  }
  /// A large attachment goes in and out through sockets in bounded memory: the upload is
  /// spooled and stored a chunk at a time, the download streamed a chunk at a time and
  /// compared with what was sent (a repeated pattern). 256 MB (13 s): the same test with a
  /// gigabyte passes in 51 s at the same peak, but that much disk traffic beside the other
  /// suites made their timing-bound tests fail.
  @Test func aLargeAttachmentInBoundedMemory() async throws {
    let server = try await ServerProcess(db: directory.path("giga.db"), ["--log-level", "none"])
    try await server.request("PUT", "/db")
    let total = 256 << 20
    var chunk = [UInt8](repeating: 0, count: 1 << 20)
    for index in chunk.indices { chunk[index] = UInt8(truncatingIfNeeded: index &* 31 &+ 7) }
    let upload = try server.connectAndSend(
      Array(
        "PUT /db/doc/big HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/octet-stream\r\nContent-Length: \(total)\r\n\r\n"
          .utf8))
    defer { close(upload) }
    var remaining = total
    while remaining > 0 {
      let count = min(remaining, chunk.count)
      try chunk.withUnsafeBytes { bytes in
        guard sendRetrying(upload, UnsafeRawBufferPointer(rebasing: bytes[0..<count])) else {
          throw POSIXError(.EPIPE)
        }
      }
      remaining -= count
    }
    #expect(await server.receive(upload, timeout: 300).hasPrefix("HTTP/1.1 201"))
    let stub = try await server.get("/db/doc").json["_attachments"]?["big"]
    #expect(stub?["length"] == .int(Int64(total)))

    // Read back through a socket, compared as it arrives.
    let download = try server.connectAndSend(
      Array("GET /db/doc/big HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8))
    defer { close(download) }
    var mismatches = 0
    let endOfHeader = Array("\r\n\r\n".utf8)
    var header: [UInt8] = []
    var inBody = false
    var bodyBytes = 0
    var buffer = [UInt8](repeating: 0, count: 1 << 20)
    let deadline = Date().addingTimeInterval(300)
    while Date() < deadline {
      let count = receiveRetrying(download, &buffer)
      if count <= 0 { break }
      var start = 0
      while !inBody && start < count {
        header.append(buffer[start])
        start += 1
        inBody = header.suffix(4).elementsEqual(endOfHeader)
      }
      // Byte `n` of the body is byte `n % chunk.count` of the pattern.
      while start < count {
        let at = bodyBytes % chunk.count
        let run = min(count - start, chunk.count - at)
        let same = buffer.withUnsafeBytes { got in
          chunk.withUnsafeBytes { memcmp(got.baseAddress! + start, $0.baseAddress! + at, run) == 0 }
        }
        if !same { mismatches += 1 }
        start += run
        bodyBytes += run
      }
    }
    #expect(String(decoding: header, as: UTF8.self).hasPrefix("HTTP/1.1 200"))
    #expect(bodyBytes == total)
    #expect(mismatches == 0)
    // Peak memory of the server process, both ways: measured 53-57 MB (for 1 GB too).
    let status = try String(
      contentsOfFile: "/proc/\(server.process.processIdentifier)/status", encoding: .utf8)
    let peak = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") }
    let kilobytes = peak.flatMap {
      Int($0.split(separator: " ", omittingEmptySubsequences: true)[1])
    }
    #expect((kilobytes ?? .max) < 128_000, "\(peak ?? "no VmHWM")")
  }
}
