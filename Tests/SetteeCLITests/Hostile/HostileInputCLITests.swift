import Foundation
import Settee
import SetteeCore
import SetteeTestSupport
import Testing

/// Every hostile input of ``HostileInput`` through the built binary, each on its own copy
/// of one database: a typed JSON error or success, no signal, an answer in time, and after
/// a rejected write the same content and a sound file.
@Suite("Hostile input through the binary")
struct HostileInputCLITests {
  /// The database every case starts from, and its fingerprint.
  final class Template: Sendable {
    // Written once, before any test reads the template, and read only at exit.
    nonisolated(unsafe) static var leftover: URL?

    let directory = TemporaryDirectory()
    let path: String
    let fingerprint: String

    init() {
      path = directory.path("template.db")
      do {
        let people = try Database(path: path).collection()
        var documents: [JSONObject] = (0..<40).map {
          [
            "_id": .string("p\($0)"), "n": .int(Int64($0)), "s": .string("v\($0)"),
            "tags": ["a", "b"],
          ]
        }
        documents.append(["_id": "aaa", "s": .string(String(repeating: "a", count: 30) + "!")])
        documents.append(["_id": "nul", "s": "y\u{0}z"])
        try people.putAll(documents)
        try people.ensureIndexed(["n"], name: "byN")
        // The faces after find: a view, where settings, metadata.
        _ = try people.defineView(
          json: ["name": "t", "key": ["s", "n"], "value": "n", "reduce": "_count"]
        ).query()
        try people.addIndex("[n]")
        try people.setAliases(["num": "[n]"])
        try people.database.setMetadata(["v": 1], forKey: "config")
        fingerprint = try HostileInputCLITests.fingerprint(path)
        // Statics are never deinitialized, so the directory goes when the process exits.
        Template.leftover = directory.url
        atexit { if let url = Template.leftover { try? FileManager.default.removeItem(at: url) } }
      } catch {
        fatalError("cannot build the template database: \(error)")
      }
    }
  }

  static let template = Template()

  /// The content of a database (every collection's export, indexes and sequence), after
  /// `check` found it sound.
  static func fingerprint(_ path: String) throws -> String {
    let db = try Database(path: path, configuration: .init(readOnly: true))
    let report = try db.check()
    guard report.isHealthy else { return "damaged: \(report)" }
    var text = ""
    for name in try db.collectionNames() {
      let collection = db.collection(name)
      text += "\(name) \(try collection.lastSequence()) \(try collection.indexes())\n"
      try collection.exportDocuments { text += String(decoding: $0, as: UTF8.self) }
    }
    return text
  }

  @Test(arguments: HostileInput.all)
  func answersWithoutHarm(_ input: HostileInput) throws {
    let directory = TemporaryDirectory()
    let db = directory.path("case.db")
    try FileManager.default.copyItem(atPath: Self.template.path, toPath: db)
    let run = try SetteeBinary.run(["--db", db] + input.arguments, stdin: input.stdin, timeout: 30)
    #expect(!run.signaled, "killed by a signal: \(run.stderr)")
    #expect(!run.timedOut && run.seconds < 20, "took \(run.seconds) s")
    if run.status != 0 {
      let line = run.stderr.split(separator: "\n").last.map(String.init) ?? ""
      let error = try? JSONParser.parse(line)
      #expect(
        error?["error"]?.stringValue != nil && error?["reason"]?.stringValue != nil,
        "not a JSON error: \(run.stderr)")
      #expect(error?["error"]?.stringValue != "storage_error", "a raw error: \(run.stderr)")
      if input.writes {
        #expect(
          try Self.fingerprint(db) == Self.template.fingerprint, "a rejected write changed it")
      }
    }
    switch input.outcome {
    case .success: #expect(run.status == 0, "\(run.stderr)")
    case .usage: #expect(run.status == 2, "\(run.stderr)")
    case .error(let name):
      #expect(run.status == 1, "\(run.stdout.prefix(200))")
      #expect(run.stderr.contains(#""error":"\#(name)""#), "\(run.stderr)")
    case .anyAnswer: #expect([0, 1, 2].contains(run.status))
    }
  }

  /// A usage error quotes a huge argument cut short, not whole.
  @Test func usageErrorsQuoteHugeArgumentsShort() throws {
    let huge = String(repeating: "-", count: 60_000) + "1 = 1"
    let run = try SetteeBinary.run(["--db", Self.template.path, "where", huge])
    #expect(run.status == 2 && run.stderr.contains(#""error":"usage""#))
    #expect(run.stderr.utf8.count < 1_000, "\(run.stderr.utf8.count) bytes")
  }

  /// Searches that FTS4 refuses, or that SQLite would cut short, are `invalid_query`.
  @Test(arguments: ["doctor AND", "AND doctor", #"doc\u0000tor"#, "NEAR", "(doctor OR) nurse"])
  func malformedTextSearchesAreInvalidQueries(_ search: String) throws {
    let directory = TemporaryDirectory()
    let db = directory.path("text.db")
    for arguments in [
      ["put", #"{"_id": "a", "c": "doctor books"}"#],
      ["index", "create", #"{"index": {"fields": ["c"]}, "name": "t", "type": "text"}"#],
    ] {
      #expect(try SetteeBinary.run(["--db", db] + arguments).status == 0)
    }
    let run = try SetteeBinary.run(
      ["--db", db, "find", #"{"selector": {"$text": {"$search": "\#(search)"}}}"#])
    #expect(run.status == 1 && run.stderr.contains(#""error":"invalid_query""#), "\(run.stderr)")
  }
}
