import Foundation
import SetteeCore
import SetteeReplication
import SetteeTestSupport
import Testing

/// The server against generated hostile input, class by class (issue 44): framing errors,
/// values that travel in headers, multipart bodies with many parts and wrong lengths, ids
/// CouchDB refuses, slow clients. Each class draws its cases from a seeded generator
/// (`SETTEE_HOSTILE_SEED` replays a run; the seed is in every failure) and checks what
/// must hold whatever the input: an answer by CouchDB's rule or a closed connection, never
/// a 5xx, never a hang, and a server that still answers afterwards.
@Suite("Server hostile inputs (generated)")
struct ServerHostileTests {
  let directory = TemporaryDirectory()

  static let seed: UInt64 =
    ProcessInfo.processInfo.environment["SETTEE_HOSTILE_SEED"].flatMap { UInt64($0) }
    ?? UInt64(Date().timeIntervalSince1970) / 86_400

  /// A server on a new file, with a database `db`; `extra`: its options.
  func serving(
    _ name: String, _ extra: [String] = ["--log-level", "none"],
    environment: [String: String] = [:]
  ) throws -> ServerProcess {
    let server = try ServerProcess(
      db: directory.path("\(name).settee"), extra, environment: environment)
    _ = try RawHTTP.send(WireMessage(method: "PUT", path: "/db"), to: server)
    return server
  }

  /// The server still answers, after whatever came before.
  static func expectAlive(_ server: ServerProcess, _ context: String) throws {
    #expect(server.process.isRunning, "the server died (\(context), seed \(seed))")
    let up = try RawHTTP.send(WireMessage(method: "GET", path: "/_up"), to: server, timeout: 10)
    #expect(up.status == 200, "\(context), seed \(seed)")
  }

  /// Runs `cases` at once, each on its own thread (each waits on its own socket), and
  /// records what each found wrong in the calling test (an expectation on another thread
  /// would belong to no test).
  static func concurrently<Case: Sendable>(
    _ cases: [Case], _ body: @Sendable (Case) -> [String]
  ) {
    let problems = Locked<[String]>([])
    DispatchQueue.concurrentPerform(iterations: cases.count) { index in
      let found = body(cases[index])
      problems.withLock { $0 += found }
    }
    for problem in problems.withLock({ $0 }) { Issue.record("\(problem) (seed \(seed))") }
  }

  // MARK: - Framing

  /// A body whose framing is broken: a chunk size that is no size, chunk data longer or
  /// shorter than its size, a body shorter than its `Content-Length`.
  static func brokenFraming(_ random: inout SplitMix64) -> (head: String, body: [UInt8]) {
    let filler = String(repeating: "b", count: Int.random(in: 0...40, using: &random))
    let json = Array(#"{"a":"\#(filler)"}"#.utf8)
    let head = "PUT /db/framing HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
    let chunkedHead = head + "Transfer-Encoding: chunked\r\n\r\n"
    /// One chunk of `json` under the size line `size`, and the last chunk.
    func chunked(_ size: String) -> [UInt8] {
      Array("\(size)\r\n".utf8) + json + Array("\r\n0\r\n\r\n".utf8)
    }
    switch Int.random(in: 0..<6, using: &random) {
    case 0:
      let junk = (0..<Int.random(in: 1...4, using: &random)).map { _ in
        "zxg-+ ;=\"".randomElement(using: &random)!
      }
      return (chunkedHead, chunked(String(junk)))
    case 1: return (chunkedHead, chunked("-\(json.count)"))
    case 2:
      return (
        chunkedHead, chunked(String(repeating: "f", count: Int.random(in: 17...30, using: &random)))
      )
    case 3:
      let short = Int.random(in: 0..<max(1, json.count), using: &random)
      return (chunkedHead, chunked(String(short, radix: 16)))
    case 4:
      let long = json.count + Int.random(in: 1...50, using: &random)
      return (chunkedHead, chunked(String(long, radix: 16)))
    default:
      let declared = json.count + Int.random(in: 1...1_000, using: &random)
      return (head + "Content-Length: \(declared)\r\n\r\n", json)
    }
  }

  @Test func brokenFramingIsTheClientsError() throws {
    let server = try serving("framing", ["--log-level", "none", "--idle-timeout", "2"])
    defer { server.stop() }
    var random = SplitMix64(seed: Self.seed)
    let cases = (0..<40).map { _ in Self.brokenFraming(&random) }
    Self.concurrently(Array(cases.indices)) { index in
      let (head, body) = cases[index]
      guard let fd = try? server.connectAndSend(Array(head.utf8) + body) else {
        return ["cannot connect"]
      }
      defer { close(fd) }
      // The client has sent all it will: what is missing never comes.
      shutdown(fd, Int32(SHUT_WR))
      let started = Date()
      let answer = server.receive(fd, timeout: 10)
      let seconds = Date().timeIntervalSince(started)
      let status = Int(answer.dropFirst(9).prefix(3)) ?? 0
      var problems: [String] = []
      // 400 (docs/limits-and-safety.md), 408 for a body that stops coming, or nothing.
      if !(answer.isEmpty || [400, 408].contains(status)) {
        problems.append(
          "\(head.debugDescription) \(String(decoding: body.prefix(80), as: UTF8.self).debugDescription) answered \(answer.prefix(200))"
        )
      }
      if seconds >= 8 { problems.append("no answer and no close for \(seconds) s") }
      return problems
    }
    try Self.expectAlive(server, "framing")
  }

  // MARK: - Values that travel in headers

  /// A name or content type from characters that matter in headers and multipart bodies.
  static func headerValue(_ random: inout SplitMix64) -> String {
    let pieces = [
      "a", "Z", "9", " ", ".", "\"", ":", ";", "=", "\r", "\n", "\r\n", "\u{0}", "\u{7F}", "\t",
      "é", "雪", "🙂", "--", "X-Injected: 1", "\r\n\r\nBODY", "text/plain",
    ]
    return (0..<Int.random(in: 1...6, using: &random)).map { _ in
      pieces.randomElement(using: &random)!
    }.joined()
  }

  static func hasControlCharacter(_ text: String) -> Bool {
    text.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }
  }

  @Test func namesAndTypesNeverWriteHeaders() throws {
    let server = try serving("headers")
    defer { server.stop() }
    var random = SplitMix64(seed: Self.seed &+ 1)
    for number in 0..<40 {
      let name = Self.headerValue(&random)
      let type = Bool.random(using: &random) ? "text/plain" : Self.headerValue(&random)
      let data = (0..<Int.random(in: 0...64, using: &random)).map { _ in
        UInt8.random(in: 0...255, using: &random)
      }
      let document: JSON = [
        "_attachments": [
          name: ["content_type": .string(type), "data": .string(Data(data).base64EncodedString())]
        ]
      ]
      let put = try RawHTTP.send(
        WireMessage(
          method: "PUT", path: "/db/h\(number)", headers: [("Content-Type", "application/json")],
          body: JSONWriter.bytes(document)), to: server)
      let context =
        "name \(name.debugDescription), type \(type.debugDescription), seed \(Self.seed)"
      if Self.hasControlCharacter(name) || Self.hasControlCharacter(type) {
        #expect(put.status == 400, "\(context): \(put.status)")
        continue
      }
      guard !name.hasPrefix("_") else {
        #expect(put.status == 400, "\(context): \(put.status)")
        continue
      }
      #expect(
        put.status == 201, "\(context): \(put.status) \(String(decoding: put.body, as: UTF8.self))")
      guard put.status == 201 else { continue }
      for (path, accept) in [
        ("/db/h\(number)?attachments=true", "multipart/related"),
        ("/db/h\(number)?open_revs=all&attachments=true", "multipart/mixed"),
      ] {
        let answer = try RawHTTP.send(
          WireMessage(method: "GET", path: path, headers: [("Accept", accept)]), to: server)
        guard let boundary = answer.header("content-type").flatMap(Multipart.boundary) else {
          Issue.record("\(context): \(path) answered without a boundary")
          continue
        }
        var found: [UInt8]?
        for part in try Multipart.parts(answer.body, boundary: boundary) {
          let allowed: Set<String> = [
            "content-type", "content-disposition", "content-encoding", "content-length",
          ]
          #expect(
            Set(part.headers.keys).isSubset(of: allowed),
            "\(context): \(path) wrote part headers \(part.headers.keys.sorted())")
          if part.headers["content-type"]?.hasPrefix("multipart/related") == true,
            let inner = part.headers["content-type"].flatMap(Multipart.boundary)
          {
            let document = try Multipart.document(fromRelated: part.body, boundary: inner)
            let stub = document["_attachments"]?[name]
            found = try stub?["data"]?.stringValue.flatMap {
              Data(base64Encoded: $0).map(Array.init)
            }.map { stub?["encoding"] == "gzip" ? try Gzip.decode($0) : $0 }
          } else if part.headers["content-disposition"] != nil {
            // A compressible type is stored (and sent in multipart) gzip-encoded.
            found =
              part.headers["content-encoding"] == "gzip" ? try Gzip.decode(part.body) : part.body
          }
        }
        #expect(found == data, "\(context): \(path) gave back other bytes")
      }
    }
    try Self.expectAlive(server, "header values")
  }

  // MARK: - Multipart

  @Test func multipartWithManyPartsAndWrongLengths() throws {
    let server = try serving("multipart")
    defer { server.stop() }
    var random = SplitMix64(seed: Self.seed &+ 2)
    for number in 0..<24 {
      let count = [0, 1, 2, 10, 300, 3_000].randomElement(using: &random)!
      var attachments: [(String, JSON)] = []
      var parts: [[UInt8]] = []
      var wrong = false
      for index in 0..<count {
        let bytes = (0..<Int.random(in: 0...20, using: &random)).map { _ in
          UInt8.random(in: 0...255, using: &random)
        }
        var attachment: JSONObject = ["follows": true, "content_type": "application/octet-stream"]
        switch Int.random(in: 0..<40, using: &random) {
        case 0:
          attachment["length"] = .int(Int64(bytes.count + Int.random(in: 1...5, using: &random)))
        case 1 where !bytes.isEmpty: attachment["length"] = .int(Int64(bytes.count - 1))
        case 2: attachment["length"] = -1
        case 3: attachment["length"] = 1e15
        case 4: attachment["length"] = "many"
        case 5: break  // no length: the part is taken as it is
        default: attachment["length"] = .int(Int64(bytes.count))
        }
        if let length = attachment["length"], length != .int(Int64(bytes.count)) { wrong = true }
        attachments.append(("f\(index)", .object(attachment)))
        parts.append(bytes)
      }
      var body = Array("--B\r\nContent-Type: application/json\r\n\r\n".utf8)
      body += JSONWriter.bytes(["_attachments": .object(JSONObject(attachments))])
      for part in parts { body += Array("\r\n--B\r\n\r\n".utf8) + part }
      body += Array("\r\n--B--".utf8)
      let answer = try RawHTTP.send(
        WireMessage(
          method: "PUT", path: "/db/m\(number)",
          headers: [("Content-Type", "multipart/related; boundary=B")], body: body), to: server)
      let context = "\(count) parts, a wrong length: \(wrong), seed \(Self.seed)"
      if wrong {
        #expect(answer.status == 400, "\(context): \(answer.status)")
        let reason = answer.json?["reason"]?.stringValue ?? ""
        #expect(
          reason.contains("than expected") || reason.contains("not an integer"),
          "\(context): \(reason)")
      } else {
        #expect(
          answer.status == 201,
          "\(context): \(answer.status) \(String(decoding: answer.body.prefix(300), as: UTF8.self))"
        )
        let stored = try RawHTTP.send(
          WireMessage(method: "GET", path: "/db/m\(number)"), to: server)
        #expect((stored.json?["_attachments"]?.objectValue?.count ?? 0) == count, "\(context)")
      }
    }
    try Self.expectAlive(server, "multipart")
  }

  // MARK: - Ids

  enum IDKind: CaseIterable { case plain, design, bareDesign, reserved, empty, nul }

  static func id(_ kind: IDKind, _ random: inout SplitMix64) -> String {
    let alphabet = Array("abcXYZ019-._~!$&'()*+,;=:@/ é雪🙂%?#")
    let text = String(
      (0..<Int.random(in: 1...40, using: &random)).map { _ in
        alphabet.randomElement(using: &random)!
      })
    switch kind {
    case .plain: return text.hasPrefix("_") ? "x" + text : text
    case .design: return "_design/" + text
    case .bareDesign: return "_design/"
    case .reserved:
      return "_" + ["users", "all_docs", "x", "replicator", "changes"].randomElement(
        using: &random)! + text
    case .empty: return ""
    case .nul: return "a\u{0}" + text
    }
  }

  /// Ids (and attachment names on them) as CouchDB takes or refuses them; and what the
  /// server leaves in its temporary directory: nothing (the probe's `TemporaryDirectory.*`
  /// folders were SwiftPM's, which `swift build` and `swift test` leave in /tmp).
  @Test func idsAreTakenOrRefusedAsCouchDBDoes() throws {
    let temporary = directory.path("tmp-ids")
    try FileManager.default.createDirectory(atPath: temporary, withIntermediateDirectories: true)
    let server = try serving("ids", environment: ["TMPDIR": temporary])
    defer {
      server.stop()
      let left = (try? FileManager.default.contentsOfDirectory(atPath: temporary)) ?? ["?"]
      #expect(left == [], "left in the server's temporary directory, seed \(Self.seed)")
    }
    var random = SplitMix64(seed: Self.seed &+ 3)
    var uploads = 0
    for number in 0..<60 {
      let kind = IDKind.allCases.randomElement(using: &random)!
      let id = Self.id(kind, &random)
      let accepted = kind == .plain || kind == .design
      let context = "\(kind) id \(id.debugDescription), seed \(Self.seed)"
      // In a POST body: the id as it is.
      let posted = try RawHTTP.send(
        WireMessage(
          method: "POST", path: "/db", headers: [("Content-Type", "application/json")],
          body: JSONWriter.bytes(["_id": .string(id), "n": .int(Int64(number))])), to: server)
      if accepted {
        #expect(posted.status == 201 || posted.status == 409, "\(context): \(posted.status)")
        let path = "/db/" + id.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let read = try RawHTTP.send(WireMessage(method: "GET", path: path), to: server)
        #expect(read.json?["_id"]?.stringValue == id, "\(context): \(read.status)")
        if uploads < 3, let rev = read.json?["_rev"]?.stringValue {
          uploads += 1
          // An attachment named like an id, large enough to wait in a temporary file.
          let name = Self.id(.plain, &random).addingPercentEncoding(
            withAllowedCharacters: .alphanumerics)!
          let upload = try RawHTTP.send(
            WireMessage(
              method: "PUT", path: path + "/" + name + "?rev=" + rev,
              headers: [("Content-Type", "application/octet-stream")],
              body: [UInt8](repeating: UInt8(number), count: 3 << 20)), to: server)
          #expect(upload.status == 201, "\(context): attachment \(name): \(upload.status)")
        }
      } else {
        #expect(
          posted.status == 400,
          "\(context): \(posted.status) \(String(decoding: posted.body, as: UTF8.self))")
      }
      // An _id that is not a string.
      let odd: [JSON] = [.int(Int64(number)), ["x": 1], [1, 2], true]
      let notString = try RawHTTP.send(
        WireMessage(
          method: "POST", path: "/db", headers: [("Content-Type", "application/json")],
          body: JSONWriter.bytes(["_id": odd.randomElement(using: &random)!])), to: server)
      #expect(notString.status == 400, "seed \(Self.seed): \(notString.status)")
    }
    #expect(uploads == 3, "seed \(Self.seed)")
    try Self.expectAlive(server, "ids")
  }

  // MARK: - Slow clients

  /// Slow heads and bodies, small and large, beside a client that keeps the pace: every
  /// slow one is cut within a few idle timeouts, the steady one is answered, and the
  /// server stays under 200 MB.
  @Test func slowClientsAreCutAndTheOthersServed() throws {
    let server = try serving("slow", ["--log-level", "none", "--idle-timeout", "1"])
    defer { server.stop() }
    var random = SplitMix64(seed: Self.seed &+ 4)
    struct Client: Sendable {
      var start: [UInt8]
    }
    var clients: [Client] = []
    for number in 0..<12 {
      let head = "PUT /db/slow\(number) HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
      switch Int.random(in: 0..<3, using: &random) {
      case 0:
        // A head that never ends.
        let cut = Int.random(in: 1..<head.utf8.count, using: &random)
        clients.append(Client(start: Array(head.utf8.prefix(cut))))
      case 1:
        clients.append(
          Client(start: Array((head + "Content-Length: 5000\r\n\r\n{\"a\":\"").utf8)))
      default:
        let burst = Int.random(in: 0...(4 << 20), using: &random)
        clients.append(
          Client(
            start: Array((head + "Content-Length: \(burst + 100)\r\n\r\n{\"a\":\"").utf8)
              + [UInt8](repeating: UInt8(ascii: "x"), count: burst)))
      }
    }
    let slow = clients
    let peak = PeakMemory(of: server, every: 0.2)
    Self.concurrently(Array(clients.indices) + [-1]) { index in
      if index == -1 {
        // The steady client: 4 KB a second, against 500 bytes a second asked.
        let body = Array(("{\"a\":\"" + String(repeating: "s", count: 8_000) + "\"}").utf8)
        guard
          let fd = try? server.connectAndSend(
            Array(
              "PUT /db/steady HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: \(body.count)\r\nConnection: close\r\n\r\n"
                .utf8))
        else { return ["cannot connect"] }
        defer { close(fd) }
        for start in stride(from: 0, to: body.count, by: 400) {
          Thread.sleep(forTimeInterval: 0.1)
          let slice = Array(body[start..<min(body.count, start + 400)])
          _ = slice.withUnsafeBytes { sendRetrying(fd, $0) }
        }
        let answer = server.receive(fd, timeout: 10)
        return answer.hasPrefix("HTTP/1.1 201") ? [] : ["the steady client: \(answer.prefix(200))"]
      }
      let client = slow[index]
      guard let fd = try? server.connectAndSend(client.start) else { return ["cannot connect"] }
      defer { close(fd) }
      let sent = Date()
      var cut = false
      while !cut && Date().timeIntervalSince(sent) < 10 {
        Thread.sleep(forTimeInterval: 0.5)
        cut = SlowClientTests.poll(fd, sending: 1) != nil
      }
      let seconds = Date().timeIntervalSince(sent)
      if !cut { return ["client \(index) was never cut"] }
      return seconds < 5 ? [] : ["client \(index) was cut after \(seconds) s"]
    }
    let highest = peak.stop()
    #if os(Linux)
      #expect(highest < 200 << 20, "the server grew to \(highest >> 20) MB (seed \(Self.seed))")
    #endif
    try Self.expectAlive(server, "slow clients")
  }
}
