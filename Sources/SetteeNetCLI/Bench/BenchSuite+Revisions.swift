import Foundation
import SetteeCLI
import GRDB
import Settee
import SetteeCore

// The revision-tree workloads (issue 31): a peer's bulk write, an attachment of 50 MB,
// revs_diff.
extension BenchSuite {
  /// `new_edits: false` of every document with a history of three revisions (as a
  /// replicator writes them, in one batch), against the same rows written by hand (each
  /// document's row and its three revisions' rows) and, for scale, against the plain
  /// hand-written insert of the same bodies (issue 31's comparison).
  mutating func graftedInsert() throws -> [BenchResult] {
    let ids = (0..<count).map { BenchData.id($0, prefix: "p") }
    var grafts: [JSONObject] = []
    var histories: [[String]] = []
    grafts.reserveCapacity(count)
    for (number, line) in people.enumerated() {
      guard case .object(var object) = try JSONParser.parse(line) else { continue }
      let suffixes = (1...3).reversed().map { String(format: "%08x%024x", number, $0) }
      object["_rev"] = .string("3-" + suffixes[0])
      object["_revisions"] = ["start": 3, "ids": .array(suffixes.map { .string($0) })]
      grafts.append(object)
      histories.append(suffixes.enumerated().map { "\(3 - $0.offset)-\($0.element)" })
    }
    let runs = quick ? 1 : 3
    // By hand: the body as Settee stores it (without _id), the document row at its
    // newest revision, and one row per revision with its parent.
    let bodies = grafts.map { graft -> String in
      var body = graft
      for key in ["_id", "_rev", "_revisions"] { body.removeValue(forKey: key) }
      return JSONWriter.string(.object(body))
    }
    let timed = try pairedWrites(
      repetitions: runs, prepare: { "graft-s\($0)" },
      settee: { name in try database.collection(name).putAll(grafts, newEdits: false) },
      prepareBaseline: { "graft-h\($0)" }
    ) { name in
      try pool.write { db in
        try Self.largePageCache(db) {
          try db.execute(sql: "INSERT INTO collections (name) VALUES (?)", arguments: [name])
          let cid = db.lastInsertedRowID
          let document = try db.makeStatement(
            sql:
              "INSERT INTO documents (cid, id, rev, deleted, seq, body) VALUES (?, ?, ?, 0, ?, ?)")
          let revision = try db.makeStatement(
            sql: "INSERT INTO revisions (rid, rev, parent, deleted, seq) VALUES (?, ?, ?, 0, ?)")
          for number in ids.indices {
            let history = histories[number]
            try document.execute(arguments: [
              cid, ids[number], history[0], number + 1, bodies[number],
            ])
            let rid = db.lastInsertedRowID
            for (position, rev) in history.enumerated() {
              let parent = position + 1 < history.count ? history[position + 1] : nil
              try revision.execute(arguments: [rid, rev, parent, number + 1])
            }
          }
          try db.execute(
            sql: "UPDATE collections SET last_seq = ?, doc_count = doc_count + ? WHERE cid = ?",
            arguments: [ids.count, ids.count, cid])
        }
      }
    }
    let lines = people
    let plain = try medianOfWrites(repetitions: runs, prepare: { "graft-b\($0)" }) { name in
      try handInsert(name, ids: ids) { lines[$0] }
    }
    // Both hold every document with its three revisions.
    let stored = database.collection("graft-s0")
    let byHand = database.collection("graft-h0")
    try check("new_edits=false: documents", try stored.count(), try byHand.count())
    for id in [ids[0], ids[ids.count / 2], ids[ids.count - 1]] {
      try check(
        "new_edits=false: \(id)", try stored.revisions(of: id).map(\.rev),
        try byHand.revisions(of: id).map(\.rev))
      try check("new_edits=false: \(id) body", try stored.get(id), try byHand.get(id))
    }
    return [
      BenchResult(
        name: "new_edits=false bulk write, 3-revision histories", n: count, timed, target: 1.5),
      BenchResult(
        name: "  the same against plain inserts (1 row each)", n: count, settee: timed.settee,
        baseline: plain, target: nil),
    ]
  }

  /// An attachment of 50 MB written from a file and read back whole, streamed, against the
  /// same chunks written and read by hand (256 KiB chunks, MD5 on the way in). The name
  /// carries the peak memory of the `settee attachment put` and `get` processes for the
  /// same file (target: under 64 MB).
  mutating func attachmentRoundTrip() throws -> BenchResult {
    let size = quick ? 4 << 20 : 50 << 20
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
      "settee-bench-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let file = directory.appendingPathComponent("blob.bin")
    // Written a MiB at a time: the bench's peak is not this file held in memory.
    guard FileManager.default.createFile(atPath: file.path, contents: nil) else {
      throw SetteeError(.storage, "bench: cannot create \(file.path)")
    }
    let output = try FileHandle(forWritingTo: file)
    var chunk = [UInt8](repeating: 0, count: 1 << 20)
    for start in stride(from: 0, to: size, by: chunk.count) {
      for index in stride(from: 0, to: chunk.count, by: 8) {
        let word = data.next()
        for offset in 0..<8 { chunk[index + offset] = UInt8(truncatingIfNeeded: word >> (8 * offset)) }
      }
      try output.write(contentsOf: chunk[0..<min(chunk.count, size - start)])
    }
    try output.close()
    let collection = database.collection("attachments")
    var round = 0
    var read = 0
    var handRead = 0
    let timed = try Measure.medians(repetitions: quick ? 1 : 3) {
      round += 1
      try collection.putAttachment(
        "blob", to: "a\(round)", rev: nil, contentType: "application/octet-stream",
        contentsOf: file)
      read = 0
      try collection.readAttachment("blob", of: "a\(round)") { read += $0.count }
    } _: {
      handRead = 0
      try pool.write { db in
        try db.execute(
          sql: "CREATE TABLE IF NOT EXISTS bench_blobs (n INTEGER PRIMARY KEY, data BLOB)")
        try db.execute(sql: "DELETE FROM bench_blobs")
        let handle = try FileHandle(forReadingFrom: file)
        defer { try? handle.close() }
        var md5 = MD5()
        var n = 0
        let insert = try db.makeStatement(sql: "INSERT INTO bench_blobs (n, data) VALUES (?, ?)")
        while let chunk = try handle.read(upToCount: 256 * 1024), !chunk.isEmpty {
          chunk.withUnsafeBytes { md5.update($0) }
          try insert.execute(arguments: [n, chunk])
          n += 1
        }
        _ = md5.finalize()
      }
      try pool.read { db in
        let rows = try Data.fetchCursor(db, sql: "SELECT data FROM bench_blobs ORDER BY n")
        while let chunk = try rows.next() { handRead += chunk.count }
      }
    }
    try check("attachment: bytes read back", read, size)
    try check("attachment: bytes read back by hand", handRead, size)
    let peak = try Self.peakMemoryOfAttachmentCommands(file: file, directory: directory)
    return BenchResult(
      name:
        "attachment \(size >> 20) MB write + read (CLI peak \(peak.map { "\($0) MB" } ?? "n/a"))",
      n: 1, timed, target: 1.5)
  }

  /// The larger peak resident memory, in MB, of `settee attachment put` and `get` of
  /// `file` run as processes of this binary, as GNU time measures it; `nil` without it.
  /// (Not `getrusage(RUSAGE_CHILDREN)`: on Linux a child spawned from this process
  /// inherits its high-water mark, a few hundred MB here.)
  static func peakMemoryOfAttachmentCommands(file: URL, directory: URL) throws -> Int? {
    let time = "/usr/bin/time"
    guard FileManager.default.isExecutableFile(atPath: time) else { return nil }
    let executable = CompareSQLite3.runningExecutable()
    let db = directory.appendingPathComponent("peak.db").path
    var peak = 0
    for arguments in [
      ["--db", db, "attachment", "put", "x", "blob", file.path],
      ["--db", db, "attachment", "get", "x", "blob"],
    ] {
      let process = Process()
      process.executableURL = URL(fileURLWithPath: time)
      process.arguments = ["-f", "%M", executable] + arguments
      let errors = Pipe()
      process.standardOutput = FileHandle.nullDevice
      process.standardError = errors
      try process.run()
      let report = try InputFile(errors.fileHandleForReading, name: time).readAll()
      process.waitUntilExit()
      guard process.terminationStatus == 0,
        let kilobytes = String(decoding: report, as: UTF8.self)
          .split(separator: "\n").last.flatMap({ Int($0) })
      else {
        throw SetteeError(
          .storage, "bench: settee \(arguments[2...].joined(separator: " ")) failed")
      }
      peak = max(peak, kilobytes / 1024)
    }
    return peak
  }

  /// `revsDiff` of 10,000 ids, each offering its held revision and one it lacks, against
  /// the same answer computed by hand from the rows (the documents' revisions read by id).
  mutating func revsDiff(_ collection: DocumentCollection, _ cid: Int64) throws -> BenchResult {
    let ids = Array(Set(sampleIDs(quick ? 500 : 10_000))).sorted()
    var offered: [String: [RevisionID]] = [:]
    for document in try collection.get(ids) {
      guard let document, let rev = document.rev else { continue }
      offered[document.id] = [rev, RevisionID(generation: rev.generation + 1, digest: "peer")]
    }
    var answer: [String: RevisionDifference] = [:]
    var handAnswer: [String: [String]] = [:]
    let timed = try Measure.medians(repetitions: repetitions) {
      answer = try collection.revsDiff(offered)
    } _: {
      handAnswer = try read { db in
        let statement = try db.cachedStatement(
          sql: """
            SELECT d.rev FROM documents d WHERE d.cid = ? AND d.id = ?
            UNION ALL SELECT r.rev FROM revisions r JOIN documents d ON d.rid = r.rid
            WHERE d.cid = ? AND d.id = ?
            """)
        var missing: [String: [String]] = [:]
        for (id, revs) in offered {
          let held = Set(try String.fetchAll(statement, arguments: [cid, id, cid, id]))
          let lacking = revs.map(\.description).filter { !held.contains($0) }
          if !lacking.isEmpty { missing[id] = lacking }
        }
        return missing
      }
    }
    try check(
      "revs_diff: missing revisions", answer.mapValues { $0.missing.map(\.description) },
      handAnswer)
    return BenchResult(
      name: "revs_diff, 2 revisions each", n: offered.count, timed, target: 2)
  }
}
