import Foundation
import Settee
import SetteeCore
import SetteeReplication
import SetteeTestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// `multipart/related` document PUTs, the form CouchDB's replicator writes documents with
/// attachments in, read as they arrive (issue 45): the attachments wait in a temporary
/// file and are stored a chunk at a time, so a document with a 200 MB attachment passes
/// with the server under 128 MB (it was read whole, and past the 64 MiB request limit
/// refused with 413).
@Suite("Multipart uploads")
struct MultipartUploadTests {
  let directory = TemporaryDirectory()
  static let boundary = "settee-test-7f3a9c"

  /// The streaming reader splits a body exactly as the whole-body parser does, whatever
  /// the chunks it arrives in (random sizes, 1 byte up to the whole), on 60 random bodies.
  @Test func theReaderAgreesWithTheWholeBodyParser() throws {
    var generator = SystemRandomNumberGenerator()
    for round in 0..<60 {
      var body: [UInt8] = Array("preamble\r\n".utf8)
      var expected: [([String: String], [UInt8])] = []
      for part in 0..<Int.random(in: 1...5, using: &generator) {
        let data = (0..<Int.random(in: 0...300, using: &generator)).map { _ in
          // Dashes and line ends, to make near-delimiters.
          [UInt8(ascii: "-"), 13, 10, UInt8(ascii: "s"), UInt8.random(in: 0...255)]
            .randomElement(using: &generator)!
        }
        let headers = ["content-type": "text/plain", "x-part": "\(part)"]
        body += Array("--\(Self.boundary)\r\nContent-Type: text/plain\r\nX-Part: \(part)\r\n\r\n".utf8)
        body += data + Array("\r\n".utf8)
        expected.append((headers, data))
      }
      body += Array("--\(Self.boundary)--\r\nepilogue".utf8)
      let whole = try Multipart.parts(body, boundary: Self.boundary)
      #expect(whole.map(\.body) == expected.map(\.1), "round \(round)")
      var reader = MultipartReader(boundary: Self.boundary)
      var parts: [([String: String], [UInt8])] = []
      var offset = 0
      while offset < body.count {
        let size = Int.random(in: 1...max(1, body.count / 3), using: &generator)
        let end = min(body.count, offset + size)
        try reader.feed(body[offset..<end]) { event in
          switch event {
          case .part(let headers): parts.append((headers, []))
          case .data(let bytes): parts[parts.count - 1].1 += bytes
          }
        }
        offset = end
      }
      #expect(reader.isComplete, "round \(round)")
      #expect(parts.map(\.1) == expected.map(\.1), "round \(round)")
      #expect(parts.map(\.0) == expected.map(\.0), "round \(round)")
    }
  }

  /// A replicated revision (`new_edits=false`) with a 200 MB attachment and a gzip-encoded
  /// one, sent as CouchDB's replicator sends it: stored whole, the server under 128 MB,
  /// the digest that of the bytes sent, the encoded one read back decoded.
  @Test func aLargeReplicatedDocumentStreams() async throws {
    // Sent and waited for on a thread of its own: its 200 MB of blocking socket writes must
    // not hold one of the two threads every test's tasks share.
    try await onThread { try Self.largeReplicatedDocumentStreams(in: directory) }
  }

  private static func largeReplicatedDocumentStreams(in directory: TemporaryDirectory) throws {
    #if os(Linux)
      let server = try ServerProcess(db: directory.path("multipart.db"), ["--log-level", "none"])
      defer { server.stop() }
      _ = try RawHTTP.send(WireMessage(method: "PUT", path: "/db"), to: server)
      let total = 200 << 20
      var chunk = [UInt8](repeating: 0, count: 1 << 20)
      for index in chunk.indices { chunk[index] = UInt8(truncatingIfNeeded: index &* 31 &+ 7) }
      let text = Array(String(repeating: "a line of text\n", count: 2_000).utf8)
      let gzipped = Gzip.encode(text)
      let hash = String(repeating: "ab", count: 16)
      let document: JSON = [
        "_id": "doc", "_rev": .string("1-\(hash)"),
        "_revisions": ["start": 1, "ids": [.string(hash)]], "n": 1,
        "_attachments": [
          "big.bin": [
            "content_type": "application/octet-stream", "length": .int(Int64(total)),
            "follows": true, "revpos": 1, "digest": "md5-AAAAAAAAAAAAAAAAAAAAAA==",
          ],
          "note.txt": [
            "content_type": "text/plain", "length": .int(Int64(text.count)), "encoding": "gzip",
            "encoded_length": .int(Int64(gzipped.count)), "follows": true, "revpos": 1,
            "digest": "md5-AAAAAAAAAAAAAAAAAAAAAA==",
          ],
        ],
      ]
      let head = Array(
        "--\(Self.boundary)\r\nContent-Type: application/json\r\n\r\n\(JSONWriter.string(document))\r\n--\(Self.boundary)\r\nContent-Disposition: attachment; filename=\"big.bin\"\r\nContent-Type: application/octet-stream\r\n\r\n"
          .utf8)
      let tail =
        Array(
          "\r\n--\(Self.boundary)\r\nContent-Disposition: attachment; filename=\"note.txt\"\r\nContent-Type: text/plain\r\nContent-Encoding: gzip\r\n\r\n"
            .utf8) + gzipped + Array("\r\n--\(Self.boundary)--".utf8)
      let length = head.count + total + tail.count
      let peak = PeakMemory(of: server, every: 0.05)
      let upload = try server.connectAndSend(
        Array(
          "PUT /db/doc?new_edits=false HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: multipart/related; boundary=\"\(Self.boundary)\"\r\nContent-Length: \(length)\r\n\r\n"
            .utf8) + head)
      defer { close(upload) }
      for _ in 0..<(total / chunk.count) { try Self.send(upload, chunk[...]) }
      try Self.send(upload, tail[...])
      let answer = server.receive(upload, timeout: 300)
      let highest = peak.stop()
      #expect(answer.hasPrefix("HTTP/1.1 201"), "\(answer)")
      #expect(highest < 128 << 20, "the server grew to \(highest >> 20) MB")
      let stub = try RawHTTP.send(WireMessage(method: "GET", path: "/db/doc"), to: server)
      #expect(stub.json?["_rev"] == .string("1-\(hash)"))
      let big = stub.json?["_attachments"]?["big.bin"]
      #expect(big?["length"] == .int(Int64(total)))
      #expect(big?["digest"] == .string(try Self.digest(multiplier: 31, adding: 7, megabytes: 200)))
      let note = try RawHTTP.send(
        WireMessage(method: "GET", path: "/db/doc/note.txt"), to: server)
      #expect(note.status == 200 && note.body == text)
    #endif
  }

  /// A part shorter than its attachment declares, or a body cut before its closing
  /// boundary, is the client's error, named; nothing is written.
  @Test func cutUploadsAreRefused() async throws {
    let server = try await ServerProcess(db: directory.path("cut.db"))
    defer { server.stop() }
    try await server.request("PUT", "/db")
    func put(_ declared: Int, closed: Bool) throws -> WireMessage {
      let document: JSON = [
        "_attachments": [
          "a.bin": ["content_type": "application/octet-stream", "length": .int(Int64(declared)), "follows": true]
        ]
      ]
      var body = Array(
        "--\(Self.boundary)\r\nContent-Type: application/json\r\n\r\n\(JSONWriter.string(document))\r\n--\(Self.boundary)\r\n\r\n12345\r\n"
          .utf8)
      if closed { body += Array("--\(Self.boundary)--".utf8) }
      return try RawHTTP.send(
        WireMessage(
          method: "PUT", path: "/db/cut",
          headers: [("Content-Type", "multipart/related; boundary=\"\(Self.boundary)\"")],
          body: body), to: server)
    }
    let short = try put(9, closed: true)
    #expect(short.status == 400, "\(String(decoding: short.body, as: UTF8.self))")
    #expect(String(decoding: short.body, as: UTF8.self).contains("shorter than expected"))
    let unclosed = try put(5, closed: false)
    #expect(unclosed.status == 400)
    #expect(String(decoding: unclosed.body, as: UTF8.self).contains("closing boundary"))
    #expect(try await server.get("/db/cut").status == 404)
    let whole = try put(5, closed: true)
    #expect(whole.status == 201, "\(String(decoding: whole.body, as: UTF8.self))")
  }

  /// A document with a 40 MB attachment replicates server to server, server to file and
  /// file to server through `settee replicate`, each process under 100 MB: the
  /// replicator reads it as `open_revs` multipart as it arrives, into a temporary file,
  /// and sends it as a streamed `multipart/related` PUT (it read it whole through
  /// `_bulk_get`, base64 inside JSON, and held several copies). Every copy has the digest
  /// of the bytes sent.
  @Test func aLargeDocumentReplicatesInBoundedMemory() async throws {
    #if os(Linux)
      let first = try await ServerProcess(db: directory.path("first.db"), ["--log-level", "none"])
      let second = try await ServerProcess(db: directory.path("second.db"), ["--log-level", "none"])
      defer {
        first.stop()
        second.stop()
      }
      _ = try await RawHTTP.send(WireMessage(method: "PUT", path: "/db"), to: first)
      let total = 40 << 20
      var chunk = [UInt8](repeating: 0, count: 1 << 20)
      for index in chunk.indices { chunk[index] = UInt8(truncatingIfNeeded: index &* 29 &+ 3) }
      let upload = try first.connectAndSend(
        Array(
          "PUT /db/doc/big.bin HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/octet-stream\r\nContent-Length: \(total)\r\n\r\n"
            .utf8))
      defer { close(upload) }
      for _ in 0..<(total / chunk.count) { try Self.send(upload, chunk[...]) }
      #expect(await first.receive(upload, timeout: 300).hasPrefix("HTTP/1.1 201"))
      let digest = try Self.digest(multiplier: 29, adding: 3, megabytes: 40)
      let file = directory.path("copy.db")
      for (from, to) in [
        (first.url + "db", second.url + "db"), (second.url + "db", file + "#db"),
        (file + "#db", first.url + "back"),
      ] {
        let run = try await SetteeBinary.runShell(
          "/usr/bin/time -v \"$0\" replicate '\(from)' '\(to)' --create-target")
        #expect(run.status == 0, "\(from) → \(to): \(run.stderr)")
        let summary = try? JSONParser.parse(run.stdout)
        #expect(summary?["history"]?[0]?["docs_written"] == 1, "\(run.stdout)")
        let peak = run.stderr.split(separator: "\n").first { $0.contains("Maximum resident set size") }
        let kilobytes = peak.flatMap { Int($0.split(separator: ":").last!.trimmingCharacters(in: .whitespaces)) }
        #expect((kilobytes ?? .max) < 100_000, "\(from) → \(to): \(peak ?? "no peak")")
      }
      for (server, path) in [(second, "/db/doc"), (first, "/back/doc")] {
        let stub = try await RawHTTP.send(WireMessage(method: "GET", path: path), to: server)
        #expect(stub.json?["_attachments"]?["big.bin"]?["digest"] == .string(digest), "\(path)")
      }
      let copy = try Database(path: file).collection("db")
      #expect(try await copy.attachment("big.bin", of: "doc")?.digest == digest)
    #endif
  }

  /// CouchDB's digest of `megabytes` repetitions of the 1 MiB pattern whose byte `i` is
  /// `i * multiplier + adding`, computed by Python's hashlib (MD5 in a debug build of the
  /// tests took seconds of the suite's two cores).
  static func digest(multiplier: Int, adding: Int, megabytes: Int) throws -> String {
    let script = """
      import base64, hashlib
      chunk = bytes((i * \(multiplier) + \(adding)) & 255 for i in range(1 << 20))
      md5 = hashlib.md5()
      for _ in range(\(megabytes)): md5.update(chunk)
      print("md5-" + base64.b64encode(md5.digest()).decode())
      """
    return try ServerAuthTests.python(script)
  }

  private static func send(_ socket: Int32, _ bytes: ArraySlice<UInt8>) throws {
    try bytes.withUnsafeBytes { part in
      var offset = 0
      while offset < part.count {
        let written = Glibc.send(
          socket, part.baseAddress! + offset, part.count - offset, Int32(MSG_NOSIGNAL))
        guard written > 0 else { throw POSIXError(.EPIPE) }
        offset += written
      }
    }
  }
}
