import Foundation
import SetteeCore
import SetteeTestSupport
import Testing

/// `settee attachment` through the built binary: files and standard input in, raw bytes
/// out, and a large attachment streamed both ways in bounded memory.
@Suite("The settee command: attachments")
struct AttachmentCLITests {
  let directory = TemporaryDirectory()

  @Test func putListGetDelete() throws {
    let db = directory.path("att.db")
    func settee(_ arguments: [String], stdin: [UInt8]? = nil) throws -> SetteeBinary.Run {
      let run = try SetteeBinary.run(["--db", db] + arguments, stdin: stdin)
      #expect(run.status == 0, "\(arguments): \(run.stderr)")
      return run
    }
    let file = directory.path("note.txt")
    try Data("hello".utf8).write(to: URL(fileURLWithPath: file))
    let first = try JSONParser.parse(
      settee(["attachment", "put", "d", "note.txt", file, "--content-type", "text/plain"]).stdout)
    let rev = try #require(first["rev"]?.stringValue)
    let second = try JSONParser.parse(
      settee(["attachment", "put", "d", "raw", "-", "--rev", rev], stdin: [0, 1, 2]).stdout)
    #expect(
      try JSONParser.parse(settee(["attachment", "list", "d"]).stdout) == [
        "note.txt": [
          "content_type": "text/plain", "revpos": 1, "digest": "md5-iMaiC8wqiFlD2NjLTemvCQ==",
          "length": 5, "stub": true, "encoding": "gzip", "encoded_length": 25,
        ],
        "raw": [
          "content_type": "application/octet-stream", "revpos": 2,
          "digest": .string(Attachment.digest(of: [0, 1, 2])), "length": 3, "stub": true,
        ],
      ])
    #expect(try settee(["attachment", "get", "d", "raw"]).stdoutBytes == [0, 1, 2])
    #expect(
      try settee(["attachment", "get", "d", "note.txt", "--rev", second["rev"]!.stringValue!])
        .stdout == "hello")
    // A replaced revision keeps its attachments until compaction, as in CouchDB.
    #expect(
      try settee(["attachment", "get", "d", "note.txt", "--rev", rev]).stdout == "hello")
    #expect(try JSONParser.parse(settee(["compact"]).stdout) == ["ok": true, "cleared": 1])
    let old = try SetteeBinary.run(["--db", db, "attachment", "get", "d", "note.txt", "--rev", rev])
    #expect(old.status == 1 && old.stderr.contains("not_found"))
    #expect(
      try JSONParser.parse(settee(["get", "d"]).stdout)["_attachments"]?["raw"]?["stub"] == true)
    let third = try JSONParser.parse(
      settee(["attachment", "delete", "d", "note.txt", "--rev", second["rev"]!.stringValue!]).stdout
    )
    #expect(third["ok"] == true)
    let gone = try SetteeBinary.run(["--db", db, "attachment", "get", "d", "note.txt"])
    #expect(gone.status == 1 && gone.stderr.contains("not_found"))
    let conflict = try SetteeBinary.run(["--db", db, "attachment", "put", "d", "x", file])
    #expect(conflict.status == 1 && conflict.stderr.contains("conflict"))
  }

  /// 64 MB in and out: the process stays far below the attachment's size.
  @Test func aLargeAttachmentIsStreamedInBoundedMemory() throws {
    let time = "/usr/bin/time"
    try #require(FileManager.default.isExecutableFile(atPath: time), "GNU time measures memory")
    let db = directory.path("large.db")
    let file = directory.path("large.bin")
    var random = SplitMix64(seed: 3)
    var bytes = [UInt8](repeating: 0, count: 64 << 20)
    for index in stride(from: 0, to: bytes.count, by: 8) {
      withUnsafeBytes(of: random.next()) { word in
        for offset in 0..<8 { bytes[index + offset] = word[offset] }
      }
    }
    try Data(bytes).write(to: URL(fileURLWithPath: file))
    let out = directory.path("large.out")
    let run = try SetteeBinary.runShell(
      """
      \(time) -f 'put %M' "$0" --db '\(db)' attachment put big blob '\(file)' >/dev/null &&
      \(time) -f 'get %M' "$0" --db '\(db)' attachment get big blob > '\(out)'
      """)
    #expect(run.status == 0, "\(run.stderr)")
    #expect(FileManager.default.contentsEqual(atPath: file, andPath: out))
    for line in run.stderr.split(separator: "\n") {
      let parts = line.split(separator: " ")
      guard parts.count == 2, let kilobytes = Int(parts[1]) else { continue }
      #expect(kilobytes < 48_000, "\(parts[0]) used \(kilobytes) KB for a 64 MB attachment")
    }
    #expect(run.stderr.contains("put ") && run.stderr.contains("get "))
  }
}
