import Foundation
import Settee
import SetteeCore
import SetteeJavaScript
import SetteeTestSupport
import Testing

@Suite("The settee command")
struct CLITests {
  let directory = TemporaryDirectory()
  var db: String { directory.path("test.db") }

  func settee(_ arguments: String..., stdin: String? = nil) throws -> SetteeBinary.Run {
    try SetteeBinary.run(["--db", db] + arguments, stdin: stdin.map { Array($0.utf8) })
  }

  /// The JSON error object printed on stderr.
  func errorJSON(_ run: SetteeBinary.Run) throws -> JSON {
    try JSONParser.parse(run.stderr.trimmingCharacters(in: .whitespacesAndNewlines))
  }

  @Test func importExportRoundTripIsByteForByteStable() throws {
    // Documents without ids get generated ids; the export is the reference.
    let input = directory.path("in.ndjson")
    try SampleData.ndjson(2_000, withIDs: false).write(
      toFile: input, atomically: false, encoding: .utf8)
    let imported = try settee("import", input)
    #expect(imported.status == 0)
    #expect(
      try JSONParser.parse(imported.stdout.trimmingCharacters(in: .newlines)) == [
        "ok": true, "docs": 2000, "batches": 1,
      ])
    let first = try settee("export")
    #expect(first.status == 0)
    #expect(first.stdout.split(separator: "\n").count == 2_000)

    let exportFile = directory.path("export.ndjson")
    try Data(first.stdoutBytes).write(to: URL(fileURLWithPath: exportFile))
    let copyDB = directory.path("copy.db")
    #expect(try SetteeBinary.run(["--db", copyDB, "import", exportFile]).status == 0)
    let second = try SetteeBinary.run(["--db", copyDB, "export"])
    #expect(second.stdoutBytes == first.stdoutBytes)

    // Through stdin, into another collection, as a JSON array.
    let array = "[" + first.stdout.split(separator: "\n").joined(separator: ",\n") + "]"
    #expect(try settee("--collection", "again", "import", "-", stdin: array).status == 0)
    #expect(try settee("export", "--collection", "again").stdoutBytes == first.stdoutBytes)
  }

  /// An integer past 64 bits comes back as it was written: `get`, `find`, `export` and an
  /// import of that export (issue 55, item 2).
  @Test func integersPast64BitsComeBackExactly() throws {
    let document = #"{"_id":"big","big":18446744073709551616,"neg":-18446744073709551617}"#
    #expect(try settee("put", document).status == 0)
    let digits = #""big":18446744073709551616,"neg":-18446744073709551617"#
    #expect(try settee("get", "big").stdout.contains(digits))
    let found = try settee("find", #"{"selector": {"big": {"$gt": 1e19}}}"#)
    #expect(found.status == 0 && found.stdout.contains(digits), "\(found.stderr)")
    let exported = try settee("export")
    #expect(exported.stdout.contains(digits))
    let copy = directory.path("copy.db")
    #expect(
      try SetteeBinary.run(["--db", copy, "import", "-"], stdin: exported.stdoutBytes).status == 0)
    #expect(try SetteeBinary.run(["--db", copy, "get", "big"]).stdout.contains(digits))
  }

  @Test func putUpsertReplacesWithoutARevision() throws {
    #expect(try settee("put", "--upsert", #"{"_id":"u","v":1}"#).status == 0)
    #expect(try settee("put", #"{"_id":"u","v":2}"#).status == 1)  // put still needs _rev
    let replaced = try settee("put", "--upsert", #"{"_id":"u","v":3}"#)
    #expect(replaced.status == 0 && replaced.stdout.contains(#""rev":"2-"#))
    #expect(try settee("get", "u").stdout.contains(#""v":3"#))
    #expect(try errorJSON(settee("put", "--upsert", #"{"_id":""}"#))["error"] == "illegal_docid")
  }

  @Test func putGetDeleteSpeakCouchDBShapes() throws {
    let put = try settee("put", #"{"_id":"mike","name":"mike","age":12}"#)
    #expect(put.status == 0)
    let answer = try JSONParser.parse(put.stdout)
    #expect(answer["ok"] == true && answer["id"] == "mike")
    let rev = try #require(answer["rev"]?.stringValue)
    #expect(rev.hasPrefix("1-"))

    let got = try settee("get", "mike")
    #expect(got.stdout == #"{"_id":"mike","_rev":"\#(rev)","name":"mike","age":12}"# + "\n")

    let conflict = try settee("put", #"{"_id":"mike","age":13}"#)
    #expect(conflict.status == 1)
    #expect(try errorJSON(conflict)["error"] == "conflict")

    let update = try settee("put", "-", stdin: #"{"_id":"mike","_rev":"\#(rev)","age":13}"#)
    #expect(update.status == 0)
    let rev2 = try #require(try JSONParser.parse(update.stdout)["rev"]?.stringValue)

    let delete = try settee("delete", "mike", "--rev", rev2)
    #expect(delete.status == 0)
    let missing = try settee("get", "mike")
    #expect(missing.status == 1)
    #expect(try errorJSON(missing)["error"] == "not_found")
    #expect(missing.stderr.contains("deleted"))

    let changes = try JSONParser.parse(try settee("changes").stdout)
    #expect(changes["last_seq"] == 3)
    #expect(changes["results"]?[0]?["deleted"] == true)
  }

  /// Every failure is one JSON line on stderr with status 1, or 2 for usage errors.
  @Test(arguments: [
    (["put", #"{"a":1,}"#], 1, "bad_request"),
    (["put", "[1,2]"], 1, "doc_validation"),
    (["put", #"{"_id":""}"#], 1, "illegal_docid"),
    (["put", #"{"_x":1}"#], 1, "doc_validation"),
    (["get", "nobody"], 1, "not_found"),
    (["delete", "nobody", "--rev", "1-abc"], 1, "not_found"),
    (["delete", "nobody", "--rev", "bogus"], 1, "bad_request"),
    (["import", "/no/such/file"], 1, "io_error"),
    (["get"], 2, "usage"),
    (["frobnicate"], 2, "usage"),
    (["import", "x", "--batch-size", "0"], 2, "usage"),
  ])
  func errorsAreJSONOnStderr(_ arguments: [String], _ status: Int32, _ name: String) throws {
    let run = try SetteeBinary.run(["--db", db] + arguments)
    #expect(run.status == status)
    #expect(run.stdout.isEmpty)
    #expect(run.stderr.split(separator: "\n").count == 1)
    let error = try errorJSON(run)
    #expect(error["error"] == .string(name))
    #expect(error["reason"]?.stringValue?.isEmpty == false)
  }

  @Test func aBadRecordAbortsTheImportAndNamesItsLine() throws {
    let input = directory.path("bad.ndjson")
    try (SampleData.ndjson(100) + "{\"name\": oops}\n" + SampleData.ndjson(10, withIDs: false))
      .write(toFile: input, atomically: false, encoding: .utf8)
    let run = try settee("import", input)
    #expect(run.status == 1)
    let error = try errorJSON(run)
    #expect(error["error"] == "bad_request")
    #expect(error["line"] == 101)
    #expect(error["column"] == 10)
    #expect(try settee("export").stdout.isEmpty)
  }

  /// An import streams its input (README: "bounded memory for any size"): four times the
  /// input, 16 MB against 64 MB, raises the process's peak by less than a tenth of the
  /// difference. (The peak grows while the 16 MiB page cache a large write is given fills,
  /// from about 39 MB at 4 MB of input to about 51 MB at 16 MB, and stays there;
  /// docs/performance.md, "An import's memory".)
  @Test func anImportStreamsItsInputInBoundedMemory() throws {
    let time = "/usr/bin/time"
    try #require(FileManager.default.isExecutableFile(atPath: time), "GNU time measures memory")
    // About 3.8 KB a document, each its own id and number.
    let words = (0..<600).map { ["alpha", "beta", "gamma", "delta", "epsilon"][$0 * 7 % 5] }
    let text = words.joined(separator: " ")
    func write(_ path: String, megabytes: Int) throws {
      var bytes: [UInt8] = []
      bytes.reserveCapacity(megabytes << 20 + 4096)
      var number = 0
      while bytes.count < megabytes << 20 {
        bytes += #"{"_id":"d\#(number)","n":\#(number),"text":"\#(text)","tags":[1,2,3]}"#.utf8
        bytes.append(UInt8(ascii: "\n"))
        number += 1
      }
      try Data(bytes).write(to: URL(fileURLWithPath: path))
    }
    var peaks: [Int] = []
    for megabytes in [16, 64] {
      let input = directory.path("import\(megabytes).ndjson")
      try write(input, megabytes: megabytes)
      let run = try SetteeBinary.runShell(
        #"\#(time) -f 'peak %M' "$0" --db '\#(directory.path("import\(megabytes).db"))' import '\#(input)' >/dev/null"#
      )
      #expect(run.status == 0, "\(run.stderr)")
      let line = run.stderr.split(separator: "\n").last { $0.hasPrefix("peak ") }
      peaks.append(try #require(line.flatMap { Int($0.dropFirst("peak ".count)) }, "\(run.stderr)"))
      try FileManager.default.removeItem(atPath: input)
    }
    #expect(peaks[1] - peaks[0] < 4_800, "peaks \(peaks) KB for 16 MB and 64 MB of input")
  }

  /// `settee check` finds a damaged index; `settee rebuild` repairs it; a missing file is
  /// not made anew.
  @Test func rebuildRepairsWhatCheckFinds() throws {
    #expect(try settee("put", #"{"_id":"a","n":1}"#).status == 0)
    #expect(try settee("--collection", "b", "put", #"{"_id":"b","n":2}"#).status == 0)
    #expect(try settee("index", "create", #"{"index":{"fields":["n"]},"name":"n"}"#).status == 0)
    let damaged = try Database(path: db)
    try damaged.damage("DELETE FROM ix_1")
    #expect(try settee("check").status == 1)
    let rebuilt = try settee("rebuild", "--all")
    #expect(rebuilt.status == 0, "\(rebuilt.stderr)")
    #expect(try json(rebuilt) == ["ok": true, "collections": ["_default", "b"]])
    #expect(try settee("check").status == 0)
    #expect(try settee("rebuild").status == 0)
    // describe lists the index (kept by every write) and the documents.
    #expect(
      try json(try settee("describe")) == [
        "collection": "_default", "documents": 1,
        "secondary": [["kind": "json", "name": "n", "upkeep": "in_write", "rows": 1]],
      ])
    let missing = try SetteeBinary.run(["--db", directory.path("none.db"), "rebuild"])
    #expect(missing.status != 0 && missing.stderr.contains("not_found"))
    #expect(!FileManager.default.fileExists(atPath: directory.path("none.db")))
  }

  @Test func demoRuns() throws {
    let run = try SetteeBinary.run(["demo", "--db", directory.path("demo.db")])
    #expect(run.status == 0, "\(run.stderr)")
    #expect(run.stdout.contains("imported 24 documents"))
    #expect(run.stdout.contains("conflict"))
    #expect(run.stdout.contains(#"conflicted ids -> ["note"]"#))
    #expect(run.stdout.contains(#""conflicts":0"#))
    #expect(run.stdout.contains("attachment list.txt"))
    let again = try SetteeBinary.run(["demo", "--db", directory.path("demo.db")])
    #expect(again.status == 2)
  }

  @Test func helpIsPrintedOnStdout() throws {
    let run = try SetteeBinary.run(["--help"])
    #expect(run.status == 0)
    #expect(run.stdout.contains("import") && run.stdout.contains("export"))
  }

  /// `settee view query d/v` runs the design document's JavaScript view (issue 47).
  @Test(.enabled(if: DesignFunctions.isAvailable))
  func viewQueryRunsADesignDocumentsJavaScript() throws {
    for document in [
      #"{"_id":"a","name":"Zoë","age":30}"#, #"{"_id":"b","name":"adam","age":25}"#,
      #"{"_id":"_design/p","views":{"n":{"map":"function (doc) { if (doc.name) emit(doc.name, doc.age); }","reduce":"_sum"}}}"#,
    ] {
      #expect(try settee("put", document).status == 0)
    }
    let rows = try settee("view", "query", "p/n", #"{"reduce":false}"#)
    #expect(rows.status == 0, "\(rows.stderr)")
    #expect(
      try JSONParser.parse(rows.stdout)["rows"]
        == [["id": "b", "key": "adam", "value": 25], ["id": "a", "key": "Zoë", "value": 30]])
    let reduced = try settee("view", "query", "p/n")
    #expect(try JSONParser.parse(reduced.stdout)["rows"] == [["key": nil, "value": 55]])
  }

  @Test func benchRunsChosenWorkloadsAndPrintsJSON() throws {
    let run = try SetteeBinary.run([
      "bench", "--quick", "--json", "--only", "get,equality", "--db", directory.path("bench.db"),
    ])
    #expect(run.status == 0, "\(run.stderr)")
    let report = try JSONParser.parse(run.stdout)
    let names = report["benchmarks"]?.arrayValue?.compactMap { $0["name"]?.stringValue } ?? []
    #expect(names == ["get by id", "indexed equality, 3 fields"])
    for benchmark in report["benchmarks"]?.arrayValue ?? [] {
      #expect((benchmark["settee_s"]?.doubleValue ?? 0) > 0)
      #expect((benchmark["baseline_s"]?.doubleValue ?? 0) > 0)
    }
    let unknown = try SetteeBinary.run(["bench", "--quick", "--only", "nonsense"])
    #expect(unknown.status == 2)
    #expect(unknown.stderr.contains("nonsense"))

    // --compare names a row whose ratio left the earlier run's range, and only that one:
    // an earlier report where `get by id` was 50 times its baseline, and the equality row
    // as it was measured (both runs alternate Settee and the baseline, so each row has a
    // range of ratios).
    var rows = report["benchmarks"]?.arrayValue ?? []
    #expect(rows.allSatisfy { $0["ratio_low"] != nil && $0["ratio_high"] != nil })
    guard case .object(var get) = rows.first else { return }
    get["ratio"] = 50
    get["ratio_low"] = 49
    get["ratio_high"] = 51
    rows[0] = .object(get)
    rows.removeLast()
    let earlier = directory.path("earlier.json")
    try JSONWriter.string(["benchmarks": .array(rows)]).write(
      toFile: earlier, atomically: true, encoding: .utf8)
    let compared = try SetteeBinary.run([
      "bench", "--quick", "--only", "get,equality", "--compare", earlier,
    ])
    #expect(compared.status == 0, "\(compared.stderr)")
    let moved = compared.stdout.split(separator: "\n").filter { $0.hasPrefix("moved: ") }
    #expect(moved.count == 1)
    #expect(moved.first?.contains("get by id (n=100): ratio 50.00 (49.00-51.00) before") == true)
    #expect(moved.first?.hasSuffix("faster than its noise explains") == true)
  }

  /// An installed `settee`, run by name from `PATH` in another directory, finds itself
  /// for the whole-process comparison (it used to look in the current directory).
  @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/sqlite3")))
  func compareSQLite3RunsFromPATH() throws {
    let elsewhere = directory.path("elsewhere")
    try FileManager.default.createDirectory(atPath: elsewhere, withIntermediateDirectories: true)
    let run = try SetteeBinary.runShell(
      #"cd "\#(elsewhere)" && PATH="$(dirname "$0"):$PATH" settee bench --compare-sqlite3 --quick"#)
    #expect(run.status == 0, "\(run.stderr)")
    #expect(run.stdout.contains("indexed find"), "\(run.stdout)")
  }
}
