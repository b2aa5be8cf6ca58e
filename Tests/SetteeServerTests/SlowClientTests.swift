import Foundation
import SetteeCore
import SetteeTestSupport
import Testing

/// Clients that send a body slowly, or leave one half sent (issue 44, items 1 and 11): a
/// body must keep a pace or be cut, what waits for it is bounded, and nothing of it stays
/// on disk.
@Suite("Slow clients")
struct SlowClientTests {
  let directory = TemporaryDirectory()

  /// What a slow client saw: when the server answered or closed, and with what.
  struct Cut {
    var seconds: Double
    var answer: String
  }

  /// Twenty connections each declare a 64 MiB document, send 16 MiB at once and then a
  /// byte a second: each is cut (408) within 10 s of its burst, and the server stays under
  /// 200 MB throughout (it grew by about 70 MB a connection when bodies were collected in
  /// memory, and never cut them).
  @Test func twentySlowBodiesAreCutAndHoldLittleMemory() throws {
    let spools = directory.path("tmp")
    try FileManager.default.createDirectory(atPath: spools, withIntermediateDirectories: true)
    let server = try ServerProcess(
      db: directory.path("slow.settee"), ["--log-level", "none", "--idle-timeout", "5"],
      environment: ["TMPDIR": spools])
    defer { server.stop() }
    _ = try RawHTTP.send(WireMessage(method: "PUT", path: "/db"), to: server)
    let burst = Array("{\"a\":\"".utf8) + [UInt8](repeating: UInt8(ascii: "x"), count: 16 << 20)
    var peak = Self.residentBytes(server)
    var connections: [(fd: Int32, sent: Date)] = []
    for index in 0..<20 {
      let fd = try server.connectAndSend(
        Array(
          "PUT /db/doc\(index) HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 67108863\r\n\r\n"
            .utf8) + burst)
      connections.append((fd, Date()))
      peak = max(peak, Self.residentBytes(server))
    }
    defer { for connection in connections { close(connection.fd) } }
    var cuts: [Int: Cut] = [:]
    let deadline = Date().addingTimeInterval(20)
    while cuts.count < connections.count && Date() < deadline {
      for (index, connection) in connections.enumerated() where cuts[index] == nil {
        if let answer = Self.poll(connection.fd, sending: 1) {
          cuts[index] = Cut(seconds: Date().timeIntervalSince(connection.sent), answer: answer)
        }
      }
      peak = max(peak, Self.residentBytes(server))
      Thread.sleep(forTimeInterval: 1)
    }
    #expect(cuts.count == 20, "\(20 - cuts.count) connections were never cut")
    for (index, cut) in cuts.sorted(by: { $0.key < $1.key }) {
      #expect(cut.seconds < 10, "connection \(index) was cut after \(cut.seconds) s")
      // The answer, unless the close raced it (the client was still sending).
      #expect(cut.answer.isEmpty || cut.answer.hasPrefix("HTTP/1.1 408"), "\(cut.answer)")
    }
    #if os(Linux)
      #expect(peak < 200 << 20, "the server grew to \(peak >> 20) MB")
    #endif
    // What waited on disk went with its connection.
    #expect(try FileManager.default.contentsOfDirectory(atPath: spools) == [])
  }

  /// Small bodies a byte a second (a document, a `_bulk_docs`) are cut as well.
  @Test(arguments: ["/db/small", "/db/_bulk_docs"])
  func aSmallBodyAByteASecondIsCut(_ path: String) throws {
    let server = try ServerProcess(
      db: directory.path("small.settee"), ["--log-level", "none", "--idle-timeout", "2"])
    defer { server.stop() }
    _ = try RawHTTP.send(WireMessage(method: "PUT", path: "/db"), to: server)
    let method = path.hasSuffix("_bulk_docs") ? "POST" : "PUT"
    let fd = try server.connectAndSend(
      Array(
        "\(method) \(path) HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 208\r\n\r\n{\"docs\":["
          .utf8))
    defer { close(fd) }
    let started = Date()
    var answer: String?
    while answer == nil && Date().timeIntervalSince(started) < 15 {
      Thread.sleep(forTimeInterval: 1)
      answer = Self.poll(fd, sending: 1)
    }
    let elapsed = Date().timeIntervalSince(started)
    #expect(answer?.hasPrefix("HTTP/1.1 408") == true, "\(answer ?? "never cut")")
    #expect(answer?.contains("request_timeout") == true)
    #expect(elapsed < 5, "cut after \(elapsed) s")
  }

  /// A body that keeps the pace is taken, however long it takes: 3 KB a second for 5 s
  /// against a 2 s idle timeout and 500 bytes a second.
  @Test func aSteadyBodyIsTaken() throws {
    let server = try ServerProcess(
      db: directory.path("steady.settee"), ["--log-level", "none", "--idle-timeout", "2"])
    defer { server.stop() }
    _ = try RawHTTP.send(WireMessage(method: "PUT", path: "/db"), to: server)
    let body =
      Array("{\"a\":\"".utf8) + [UInt8](repeating: UInt8(ascii: "y"), count: 15_000)
      + Array("\"}".utf8)
    let fd = try server.connectAndSend(
      Array(
        "PUT /db/steady HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: \(body.count)\r\nConnection: close\r\n\r\n"
          .utf8))
    defer { close(fd) }
    var offset = 0
    while offset < body.count {
      Thread.sleep(forTimeInterval: 0.5)
      let slice = Array(body[offset..<min(body.count, offset + 1_500)])
      #expect(Self.poll(fd, sending: 0) == nil, "cut at byte \(offset)")
      _ = slice.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
      offset += slice.count
    }
    let answer = server.receive(fd, timeout: 10)
    #expect(answer.hasPrefix("HTTP/1.1 201"), "\(answer.prefix(300))")
  }

  /// A `_bulk_docs` past what is kept in memory spools to a file no path names: killed
  /// halfway, the server leaves nothing in the temporary directory (a 37.7 MB
  /// `settee-bulk-…` file stayed for good).
  @Test func aKilledBulkLeavesNoSpool() throws {
    let spools = directory.path("bulk-tmp")
    try FileManager.default.createDirectory(atPath: spools, withIntermediateDirectories: true)
    let server = try ServerProcess(
      db: directory.path("bulk.settee"), environment: ["TMPDIR": spools])
    defer { server.stop() }
    _ = try RawHTTP.send(WireMessage(method: "PUT", path: "/db"), to: server)
    let document = "{\"v\":\"" + String(repeating: "z", count: 1_000) + "\"}"
    let docs = Array(repeating: document, count: 6_000).joined(separator: ",")
    let fd = try server.connectAndSend(
      Array(
        "POST /db/_bulk_docs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 67000000\r\n\r\n{\"docs\":[\(docs),"
          .utf8))
    defer { close(fd) }
    Thread.sleep(forTimeInterval: 1)
    #expect(try FileManager.default.contentsOfDirectory(atPath: spools) == [])
    _ = server.stop(SIGKILL)
    #expect(try FileManager.default.contentsOfDirectory(atPath: spools) == [])
  }

  /// Memory taken by large bodies goes back (issue 44, item 12: glibc kept what they
  /// freed, and a server grew from 42 MB to 300 MB over a probe's bodies). After each of
  /// two rounds of a 7 MB document, a 30 MB `_bulk_docs` and a read, the server is within
  /// 50 MB of where it started. Measured in a debug build: 27-34 MB with `settee serve`'s
  /// `mallopt` thresholds, 64-73 MB after the first round and 56-65 MB after the second
  /// without them (the bound used to be 70 MB over four rounds, which passed either way).
  @Test func largeBodiesGiveTheirMemoryBack() async throws {
    #if os(Linux)
      let server = try await ServerProcess(db: directory.path("memory.settee"))
      defer { server.stop() }
      _ = try await server.request("PUT", "/db")
      let start = Self.residentBytes(server)
      let large: JSON = ["s": .string(String(repeating: "x", count: 7 << 20))]
      let bulk: JSON = [
        "docs": .array(
          (0..<30_000).map { ["v": .string(String(repeating: "y", count: 1_000)), "n": .int($0)] })
      ]
      for round in 0..<2 {
        let put = try await server.put("/db/big\(round)", large)
        #expect(put.status == 201, "\(put.text.prefix(300))")
        #expect(try await server.post("/db/_bulk_docs", bulk).status == 201)
        #expect(try await server.get("/db/big\(round)").status == 200)
        try await Task.sleep(for: .seconds(1))
        let grown = Self.residentBytes(server) - start
        #expect(grown < 50 << 20, "after round \(round + 1) the server kept \(grown >> 20) MB")
      }
    #endif
  }

  /// A gzip-encoded upload is inflated as it arrives (issue 45): 100 MB of attachment sent
  /// compressed is stored whole with the server under 128 MB (it was inflated whole in
  /// memory, and past the 64 MiB request limit refused with 413).
  @Test func aLargeGzipUploadStreams() throws {
    #if os(Linux)
      let server = try ServerProcess(db: directory.path("gzip.settee"))
      defer { server.stop() }
      _ = try RawHTTP.send(WireMessage(method: "PUT", path: "/db"), to: server)
      let created = try RawHTTP.send(
        WireMessage(
          method: "PUT", path: "/db/doc", headers: [("Content-Type", "application/json")],
          body: Array("{}".utf8)), to: server)
      let rev = try #require(created.json?["rev"]?.stringValue)
      let plain = [UInt8](repeating: 7, count: 100 << 20)
      let compressed = Gzip.encode(plain)
      let peak = PeakMemory(of: server, every: 0.05)
      let put = try RawHTTP.send(
        WireMessage(
          method: "PUT", path: "/db/doc/big.bin?rev=\(rev)",
          headers: [("Content-Type", "application/octet-stream"), ("Content-Encoding", "gzip")],
          body: compressed), to: server, timeout: 120)
      let highest = peak.stop()
      #expect(put.status == 201, "\(String(decoding: put.body, as: UTF8.self))")
      let stub = try RawHTTP.send(WireMessage(method: "GET", path: "/db/doc"), to: server)
      let attachment = stub.json?["_attachments"]?["big.bin"]
      #expect(attachment?["length"] == .int(Int64(plain.count)))
      #expect(
        attachment?["digest"]?.stringValue
          == "md5-" + Data(MD5.hash(plain)).base64EncodedString())
      #expect(highest < 128 << 20, "the server grew to \(highest >> 20) MB")
      // Not gzip at all: the client's error.
      let broken = try RawHTTP.send(
        WireMessage(
          method: "PUT", path: "/db/doc2/x.bin",
          headers: [("Content-Type", "application/octet-stream"), ("Content-Encoding", "gzip")],
          body: Array("not gzip".utf8)), to: server)
      #expect(broken.status == 400 && broken.json?["error"] == "bad_request")
    #endif
  }

  /// Sends `count` spaces (if the connection takes them) and returns what the server
  /// answered, `""` when it closed or reset the connection, `nil` while it waits.
  static func poll(_ fd: Int32, sending count: Int) -> String? {
    if count > 0 {
      let spaces = [UInt8](repeating: UInt8(ascii: " "), count: count)
      let sent = send(fd, spaces, count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
      if sent < 0 && errno != EAGAIN && errno != EWOULDBLOCK { return "" }
    }
    var buffer = [UInt8](repeating: 0, count: 4096)
    let received = receiveRetrying(fd, &buffer, flags: Int32(MSG_DONTWAIT))
    if received > 0 { return String(decoding: buffer[0..<received], as: UTF8.self) }
    if received == 0 { return "" }
    return errno == EAGAIN || errno == EWOULDBLOCK ? nil : ""
  }

  /// The server's resident memory, from `/proc` (0 where there is none).
  static func residentBytes(_ server: ServerProcess) -> Int {
    guard
      let status = try? String(
        contentsOfFile: "/proc/\(server.process.processIdentifier)/status", encoding: .utf8),
      let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
      let kilobytes = Int(line.split(separator: " ").dropFirst().first ?? "")
    else { return 0 }
    return kilobytes << 10
  }
}

/// The highest resident memory of a server process while it is watched (Linux's `/proc`;
/// 0 elsewhere), polled on a thread of its own.
final class PeakMemory: Sendable {
  private let peak = Locked(0)
  private let watching = Locked(true)

  init(of server: ServerProcess, every interval: Double) {
    let (peak, watching) = (self.peak, self.watching)
    Thread {
      while watching.withLock({ $0 }) {
        let resident = SlowClientTests.residentBytes(server)
        peak.withLock { $0 = max($0, resident) }
        Thread.sleep(forTimeInterval: interval)
      }
    }.start()
  }

  /// Stops watching; the highest seen.
  func stop() -> Int {
    watching.withLock { $0 = false }
    return peak.withLock { $0 }
  }
}
