import Foundation
import SetteeCore
import SetteeTestSupport
import Testing

/// Revision trees through the built binary: `put --new-edits=false`, `get` with CouchDB's
/// read options, `changes --style all_docs`, `conflicts`, `resolve`, `revs-limit`, and an
/// import of records carrying `_revisions`.
@Suite("The settee command: conflicts")
struct ConflictCLITests {
  let directory = TemporaryDirectory()

  @Test func aConflictFromPeersIsListedReadAndResolved() throws {
    let db = directory.path("conflicts.db")
    func settee(_ arguments: String...) throws -> SetteeBinary.Run {
      try SetteeBinary.run(["--db", db] + arguments)
    }
    func json(_ arguments: String...) throws -> JSON {
      let run = try SetteeBinary.run(["--db", db] + arguments)
      #expect(run.status == 0, "\(arguments): \(run.stderr)")
      return try JSONParser.parse(run.stdout)
    }
    #expect(
      try json(
        "put", "--new-edits=false",
        #"{"_id":"n","_rev":"2-b","text":"here","_revisions":{"start":2,"ids":["b","a"]}}"#)
        == ["ok": true, "id": "n", "rev": "2-b"])
    // The other branch arrives in an import, as an export of a peer's tree would bring it.
    let file = directory.path("peer.ndjson")
    try Data(
      #"{"_id":"n","_rev":"2-c","text":"there","_revisions":{"start":2,"ids":["c","a"]}}"#.utf8
    ).write(to: URL(fileURLWithPath: file))
    #expect(try settee("import", file).status == 0)
    #expect(try json("conflicts") == ["count": 1, "ids": ["n"]])
    #expect(
      try json("revs-diff", #"{"n":["2-b","3-z"],"m":["1-q"]}"#) == [
        "m": ["missing": ["1-q"]],
        "n": ["missing": ["3-z"], "possible_ancestors": ["2-c", "2-b"]],
      ])
    #expect(
      try json("get", "n", "--conflicts", "--revs") == [
        "_id": "n", "_rev": "2-c", "text": "there",
        "_revisions": ["start": 2, "ids": ["c", "a"]], "_conflicts": ["2-b"],
      ])
    #expect(try json("get", "n", "--rev", "2-b") == ["_id": "n", "_rev": "2-b", "text": "here"])
    let missing = try settee("get", "n", "--rev", "1-a")
    #expect(missing.status == 1 && missing.stderr.contains("no revision 1-a with a body"))
    #expect(
      try json("get", "n", "--open-revs", #"["2-b","9-x"]"#) == [
        ["ok": ["_id": "n", "_rev": "2-b", "text": "here"]], ["missing": "9-x"],
      ])
    #expect(
      try json("changes", "--style", "all_docs")["results"]?[0]?["changes"] == [
        ["rev": "2-c"], ["rev": "2-b"],
      ])
    #expect(try json("changes")["results"]?[0]?["changes"] == [["rev": "2-c"]])
    #expect(try json("resolve", "n", "--keep", "2-b")["rev"] == "2-b")
    #expect(try json("conflicts") == ["count": 0, "ids": []])
    #expect(try json("get", "n")["text"] == "here")
    #expect(try json("check")["ok"] == true)
    // Purged: gone for good, with no tombstone in the feed.
    let winner = try #require(try json("get", "n")["_rev"]?.stringValue)
    let loser = try #require(
      try json("get", "n", "--deleted-conflicts")["_deleted_conflicts"]?[0]?.stringValue)
    #expect(
      try json("purge", #"{"n":["\#(winner)","\#(loser)"]}"#)
        == ["purge_seq": 1, "purged": ["n": [.string(winner), .string(loser)]]])
    #expect(try json("changes")["results"] == [])
  }

  @Test func badPeerRevisionsAndResolutionsAreTypedErrors() throws {
    let db = directory.path("bad.db")
    func settee(_ arguments: String...) throws -> SetteeBinary.Run {
      try SetteeBinary.run(["--db", db] + arguments)
    }
    let noRev = try settee("put", "--new-edits=false", #"{"_id":"x"}"#)
    #expect(noRev.status == 1 && noRev.stderr.contains("needs the revision"))
    #expect(!FileManager.default.fileExists(atPath: db), "bad input touches no file")
    #expect(try settee("put", "--new-edits=false", "--upsert", #"{"_id":"x"}"#).status == 2)
    #expect(try settee("resolve", "x").status == 2)
    #expect(try settee("put", "--new-edits=false", #"{"_id":"x","_rev":"1-a"}"#).status == 0)
    #expect(try settee("put", "--new-edits=false", #"{"_id":"x","_rev":"1-b"}"#).status == 0)
    let notALeaf = try settee("resolve", "x", "--keep", "7-q")
    #expect(notALeaf.status == 1 && notALeaf.stderr.contains("not a live leaf"))
    #expect(try settee("revs-limit").stdout.hasPrefix("1000"))
    #expect(try settee("revs-limit", "10").status == 0)
    #expect(try settee("revs-limit").stdout.hasPrefix("10"))
    #expect(try settee("revs-limit", "0").stderr.contains("1 or more"))
  }
}

/// `settee local` through the built binary.
@Suite("The settee command: local documents")
struct LocalCLITests {
  let directory = TemporaryDirectory()

  @Test func putGetListDelete() throws {
    let db = directory.path("local.db")
    func json(_ arguments: String...) throws -> JSON {
      let run = try SetteeBinary.run(["--db", db] + arguments)
      #expect(run.status == 0, "\(arguments): \(run.stderr)")
      return try JSONParser.parse(run.stdout)
    }
    #expect(
      try json("local", "put", #"{"_id":"_local/cp","seq":3}"#)
        == ["ok": true, "id": "_local/cp", "rev": "0-1"])
    #expect(try json("local", "get", "cp") == ["_id": "_local/cp", "_rev": "0-1", "seq": 3])
    let bad = try SetteeBinary.run(["--db", db, "local", "put", #"{"_id":"_local/cp","_rev":"x"}"#])
    #expect(bad.status == 1 && bad.stderr.contains("0-N"))
    #expect(
      try json("local", "list", "--include-docs") == [
        "rows": [
          [
            "id": "_local/cp", "key": "_local/cp", "value": ["rev": "0-1"],
            "doc": ["_id": "_local/cp", "_rev": "0-1", "seq": 3],
          ]
        ]
      ])
    #expect(try json("changes") == ["results": [], "last_seq": 0])
    #expect(try json("local", "delete", "_local/cp", "--rev", "0-1")["ok"] == true)
    let gone = try SetteeBinary.run(["--db", db, "local", "get", "cp"])
    #expect(gone.status == 1 && gone.stderr.contains("not_found"))
  }
}

/// `settee backup` through the built binary, from a read-only file too.
@Suite("The settee command: backup")
struct BackupCLITests {
  let directory = TemporaryDirectory()

  @Test func aBackupIsACompleteCopyAndNeverOverwrites() throws {
    let db = directory.path("source.db")
    let copy = directory.path("copy.db")
    #expect(try SetteeBinary.run(["--db", db, "put", #"{"_id":"x","n":1}"#]).status == 0)
    #expect(
      try SetteeBinary.run(
        [
          "--db", db, "attachment", "put", "x", "a", "-", "--rev",
          JSONParser.parse(SetteeBinary.run(["--db", db, "get", "x"]).stdout)["_rev"]!.stringValue!,
        ],
        stdin: [9]
      ).status == 0)
    try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: db)
    let run = try SetteeBinary.run(["--db", db, "backup", copy])
    #expect(run.status == 0, "\(run.stderr)")
    #expect(try SetteeBinary.run(["--db", copy, "get", "x"]).stdout.contains(#""n":1"#))
    #expect(try SetteeBinary.run(["--db", copy, "attachment", "get", "x", "a"]).stdoutBytes == [9])
    #expect(try SetteeBinary.run(["--db", copy, "check"]).status == 0)
    let again = try SetteeBinary.run(["--db", db, "backup", copy])
    #expect(again.status == 1 && again.stderr.contains("exists already"))
  }
}

/// Two processes writing conflicting branches at the same time through `new_edits: false`
/// end with the same leaves and the same winner whichever commits first.
@Suite("The settee command: concurrent peers")
struct ConcurrentPeersCLITests {
  let directory = TemporaryDirectory()

  /// 200 documents, each edited on branch `side` from a common first revision.
  private func records(_ side: String) -> [UInt8] {
    Array(
      (0..<200).map { n in
        #"{"_id":"d\#(n)","v":"\#(side)","_revisions":{"start":2,"ids":["\#(side)\#(n)","root"]}}"#
      }.joined(separator: "\n").utf8)
  }

  @Test func theWinnerDoesNotDependOnWhichWriterCommitsFirst() throws {
    let (a, b) = (directory.path("a.ndjson"), directory.path("b.ndjson"))
    try Data(records("a")).write(to: URL(fileURLWithPath: a))
    try Data(records("b")).write(to: URL(fileURLWithPath: b))
    var answers: [JSON] = []
    for (index, order) in [[a, b], [b, a]].enumerated() {
      let db = directory.path("peers\(index).db")
      #expect(try SetteeBinary.run(["--db", db, "put", #"{"_id":"start"}"#]).status == 0)
      let statuses = Guarded([Int32]())
      DispatchQueue.concurrentPerform(iterations: 2) { writer in
        let run = try? SetteeBinary.run(["--db", db, "import", order[writer]])
        statuses.mutate { $0.append(run?.status ?? -1) }
      }
      #expect(statuses.value == [0, 0])
      let conflicts = try JSONParser.parse(SetteeBinary.run(["--db", db, "conflicts"]).stdout)
      #expect(conflicts["count"] == 200)
      let doc = try JSONParser.parse(
        SetteeBinary.run(["--db", db, "get", "d7", "--conflicts"]).stdout)
      #expect(doc["_rev"] == "2-b7")
      #expect(doc["v"] == "b")
      #expect(doc["_conflicts"] == ["2-a7"])
      answers.append(doc)
      #expect(try SetteeBinary.run(["--db", db, "check"]).status == 0)
    }
    #expect(answers[0] == answers[1])
  }
}
