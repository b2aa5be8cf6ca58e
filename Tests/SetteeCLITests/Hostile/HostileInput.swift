import Foundation
import Settee
import SetteeCore
import SetteeTestSupport

/// One hostile input for the binary: the arguments after `--db PATH`, standard input, and
/// what must come of it.
struct HostileInput: Sendable, CustomStringConvertible {
  enum Outcome: Sendable {
    /// Exit 0.
    case success
    /// Exit 1 with this CouchDB-style error name.
    case error(String)
    /// Exit 2, a usage error.
    case usage
    /// Success or any typed error (the point is only: no crash, no hang, no damage).
    case anyAnswer
  }

  var kind: String
  var arguments: [String]
  var stdin: [UInt8]? = nil
  var outcome: Outcome

  /// Whether the command writes (so a failure must leave the database as it was).
  var writes: Bool {
    let words = arguments.filter { !$0.hasPrefix("--") }
    return ["put", "delete", "import", "where-index", "queryable", "alias", "defaults"].contains(
      words.first ?? "")
      || words.starts(with: ["index", "create"]) || words.starts(with: ["index", "delete"])
      || words.starts(with: ["view", "create"]) || words.starts(with: ["metadata", "set"])
  }

  var description: String {
    let text = "\(kind): " + arguments.joined(separator: " ")
    return text.count > 100 ? String(text.prefix(97)) + "…" : text
  }
}

extension HostileInput {
  /// A command whose last argument is JSON; past the kernel's 128 KiB limit on one
  /// argument, the JSON goes through standard input (`-`).
  static func json(_ kind: String, _ command: [String], _ text: String, _ outcome: Outcome)
    -> HostileInput
  {
    text.utf8.count < 100_000
      ? HostileInput(kind: kind, arguments: command + [text], outcome: outcome)
      : HostileInput(
        kind: kind, arguments: command + ["-"], stdin: Array(text.utf8), outcome: outcome)
  }

  static func put(_ document: String, _ outcome: Outcome) -> HostileInput {
    json("document", ["put"], document, outcome)
  }

  static func putStdin(_ bytes: [UInt8], _ outcome: Outcome, _ label: String) -> HostileInput {
    HostileInput(
      kind: "document (\(label))", arguments: ["put", "-"], stdin: bytes, outcome: outcome)
  }

  static func find(_ query: String, _ outcome: Outcome) -> HostileInput {
    json("query", ["find"], query, outcome)
  }

  static func index(_ definition: String, _ outcome: Outcome) -> HostileInput {
    json("index", ["index", "create"], definition, outcome)
  }

  static func nested(_ depth: Int) -> String {
    String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
  }

  static let documents: [HostileInput] = [
    put(#"{"_id": "d1\u0000x", "hacked": true}"#, .error("illegal_docid")),
    put(#"{"_id": "\u0000"}"#, .error("illegal_docid")),
    put(#"{"_id": ""}"#, .error("illegal_docid")),
    put(#"{"_id": 7}"#, .error("illegal_docid")),
    put(#"{"_id": "_local/x"}"#, .error("illegal_docid")),
    put(#"{"_id": "p1", "_rev": "01-abcdef"}"#, .error("bad_request")),
    // A peer's spelling is a revision (issue 31); it is not p1's current one.
    put(#"{"_id": "p1", "_rev": "1-ABCDEF"}"#, .error("conflict")),
    put(#"{"_id": "p1", "_rev": "banana"}"#, .error("bad_request")),
    put(#"{"_id": "p1", "n": 2}"#, .error("conflict")),
    put(#"{"_id": "new", "_rev": "1-abc"}"#, .error("conflict")),
    put(#"{"_deleted": "yes"}"#, .error("doc_validation")),
    put(#"{"_secret": 1}"#, .error("doc_validation")),
    put(#"{"a\u0000b": 1}"#, .error("doc_validation")),
    put(#"{"a": {"b\u0000": 1}}"#, .error("doc_validation")),
    put(#"{"a": 1e400}"#, .error("bad_request")),
    put(#"{"a": 1e-400}"#, .error("bad_request")),
    put(#"{"a": NaN}"#, .error("bad_request")),
    put(#"{"a": "\ud800"}"#, .error("bad_request")),
    put(#"{"a": 1, "a": 2}"#, .error("bad_request")),
    put(#"{"a": 1,}"#, .error("bad_request")),
    put(#"{"a": 1} {"b": 2}"#, .error("bad_request")),
    put("{\"a\": \"tab\there\"}", .error("bad_request")),
    put("[]", .error("doc_validation")),
    put(#""text""#, .error("doc_validation")),
    put("null", .error("doc_validation")),
    put("", .error("bad_request")),
    put("   ", .error("bad_request")),
    put(#"{"deep": \#(nested(150))}"#, .error("bad_request")),
    put(#"{"deep": \#(nested(100_000))}"#, .error("bad_request")),
    put(
      #"{"_id": "x'); DROP TABLE documents; --", "v": "'; DELETE FROM documents; --"}"#, .success),
    put(#"{"_id": "_design/ok", "views": {}}"#, .success),
    putStdin(
      [0xEF, 0xBB, 0xBF] + Array(#"{"a": 1}"#.utf8), .error("bad_request"), "byte order mark"),
    putStdin(
      Array(#"{"v": "a"#.utf8) + [0xFF] + Array(#"b"}"#.utf8), .error("bad_request"),
      "invalid UTF-8"),
    putStdin(
      Array(#"{"v": "a"#.utf8) + [0xC0, 0x80] + Array(#""}"#.utf8), .error("bad_request"),
      "overlong NUL"),
    putStdin(Array(#"{"v": "a"#.utf8) + [0] + Array(#""}"#.utf8), .error("bad_request"), "raw NUL"),
    putStdin(
      Array(#"{"big": ""#.utf8) + Array(repeating: UInt8(ascii: "x"), count: 9 << 20)
        + Array(#""}"#.utf8), .error("document_too_large"), "9 MiB"),
  ]

  static let selectors: [HostileInput] = [
    find(#"{"selector": {"a": {"$foo": 1}}}"#, .error("invalid_query")),
    find(#"{"selector": {"$or": {}}}"#, .error("invalid_query")),
    find(#"{"selector": {"a": {"$in": 1}}}"#, .error("invalid_query")),
    find(#"{"selector": {"a": {"$regex": "("}}}"#, .error("invalid_query")),
    find(#"{"selector": {"s": {"$regex": "(a+)+b"}}}"#, .error("limit_exceeded")),
    find(#"{"selector": {"s": {"$regex": "(.*a){25}"}}}"#, .error("limit_exceeded")),
    find(#"{"selector": {"a": {"$mod": [0, 1]}}}"#, .error("invalid_query")),
    find(#"{"selector": {"a": {"$size": -1}}}"#, .error("invalid_query")),
    find(#"{"selector": {"a": {"$type": "date"}}}"#, .error("invalid_query")),
    find(#"{"selector": {"$text": {"$search": "x"}}}"#, .error("no_usable_index")),
    find(#"{"selector": {"a\u0000": 1}}"#, .error("invalid_query")),
    find(#"{"selector": {"": 1}}"#, .error("invalid_query")),
    find(#"{"selector": {"a..b": 1}}"#, .error("invalid_query")),
    find(#"{"selector": {"$where": "1"}}"#, .error("invalid_query")),
    find(#"{"selector": {}, "sort": [{"a": "sideways"}]}"#, .error("invalid_query")),
    find(#"{"selector": {}, "fields": "a"}"#, .error("invalid_query")),
    find(#"{"selector": {}, "limit": -1}"#, .error("invalid_query")),
    find(#"{"selector": {}, "limit": 9223372036854775807, "skip": 1}"#, .success),
    find(
      #"{"selector": {}, "use_index": "nope", "allow_fallback": false}"#, .error("no_usable_index")),
    find(#"{"selector": {}, "extra": 1}"#, .error("invalid_query")),
    find(#"{"selector": {"_id": "p1\u0000x"}}"#, .success),
    find(#"{"selector": {"s": "y\u0000z"}}"#, .success),
    find(#"{"selector": {"n": {"$gt": "'; DROP TABLE documents; --"}}}"#, .success),
    find(#"{"selector": {"\"); DROP TABLE documents; --": 1}}"#, .success),
    find(#"{"selector": {"a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q.r.s.t.u.v": 1}}"#, .success),
    find(
      #"{"selector": \#(String(repeating: #"{"$and": ["#, count: 300))"#
        + #"{"n": 1}"# + String(repeating: "]}", count: 300) + "}", .anyAnswer),
    find(
      #"{"selector": {"n": {"$in": [\#((0..<100_000).map(String.init).joined(separator: ","))]}}}"#,
      .success),
    find(
      #"{"selector": {"s": {"$nin": [\#((0..<100_000).map { "\"v\($0)\"" }.joined(separator: ","))]}}}"#,
      .success),
    find(
      #"{"selector": {"$or": [\#((0..<3_000).map { #"{"n": \#($0)}"# }.joined(separator: ","))]}}"#,
      .success),
    find(
      #"{"selector": {"tags": {"$all": [\#(Array(repeating: "\"a\"", count: 2_000).joined(separator: ","))]}}}"#,
      .success),
  ]

  static let indexDefinitions: [HostileInput] = [
    index(
      #"{"index": {"fields": [\#((0..<1_000).map { "\"f\($0)\"" }.joined(separator: ","))]}, "name": "wide"}"#,
      .error("limit_exceeded")),
    index(
      #"{"index": {"fields": [\#((0..<2_001).map { "\"f\($0)\"" }.joined(separator: ","))]}, "name": "t", "type": "text"}"#,
      .error("limit_exceeded")),
    index(
      #"{"index": {"fields": ["\#((0..<200).map { "p\($0)" }.joined(separator: "."))"]}, "name": "deep"}"#,
      .error("limit_exceeded")),
    index(#"{"index": {"fields": ["a"]}, "name": "_all_docs"}"#, .error("invalid_index")),
    index(#"{"index": {"fields": ["a"]}, "name": "\u0000"}"#, .error("invalid_index")),
    index(#"{"index": {"fields": ["a"]}, "name": "a\u0000b"}"#, .error("invalid_index")),
    index(#"{"index": {"fields": ["a"]}, "name": ""}"#, .error("invalid_index")),
    index(#"{"index": {"fields": ["a"]}, "name": "x", "type": "geo"}"#, .error("invalid_index")),
    index(
      #"{"index": {"fields": ["a"]}, "name": "x", "settings": {"tokenize": "simple"}}"#,
      .error("invalid_index")),
    index(
      #"{"index": {"fields": ["a"]}, "name": "x", "type": "text", "settings": {"tokenize": "icu"}}"#,
      .error("invalid_index")),
    index(#"{"index": {"fields": ["a", "a"]}, "name": "x"}"#, .error("invalid_index")),
    // CouchDB's index of no fields is a JSON index (every document, in id order); a TEXT
    // index needs a field.
    index(#"{"index": {"fields": []}, "name": "x"}"#, .success),
    index(#"{"index": {"fields": []}, "name": "x", "type": "text"}"#, .error("invalid_index")),
    index(#"{"index": {}, "name": "x"}"#, .anyAnswer),
    index(#"{"index": {"fields": ["$a"]}, "name": "x"}"#, .error("invalid_index")),
    index(#"{"index": {"fields": ["s"]}, "name": "byN"}"#, .error("invalid_index")),
    index(#"{"index": {"fields": ["n"]}, "name": "byN"}"#, .success),
    index(#"{"index": {"fields": ["x"]}, "name": "text2", "type": "text"}"#, .anyAnswer),
  ]

  static let idsAndCollections: [HostileInput] = [
    HostileInput(kind: "id", arguments: ["get", ""], outcome: .anyAnswer),
    HostileInput(kind: "id", arguments: ["get", "_design/none"], outcome: .error("not_found")),
    HostileInput(
      kind: "id", arguments: ["get", String(repeating: "x", count: 100_000)],
      outcome: .error("not_found")),
    HostileInput(
      kind: "id", arguments: ["delete", "p1", "--rev", "banana"], outcome: .error("bad_request")),
    HostileInput(
      kind: "id", arguments: ["delete", "p1", "--rev", "0-ABC"], outcome: .error("bad_request")),
    HostileInput(
      kind: "id", arguments: ["delete", "p1", "--rev", "1-ABC"], outcome: .error("conflict")),
    HostileInput(
      kind: "id", arguments: ["delete", "p1", "--rev", "1-abc"], outcome: .error("conflict")),
    HostileInput(
      kind: "id", arguments: ["delete", "_bad", "--rev", "1-abc"], outcome: .error("illegal_docid")),
    HostileInput(
      kind: "collection", arguments: ["--collection", "", "put", "{}"],
      outcome: .error("bad_request")),
    HostileInput(
      kind: "collection", arguments: ["--collection", "a\u{1}\u{7F}", "get", "x"],
      outcome: .error("not_found")),
    HostileInput(
      kind: "collection", arguments: ["--collection", "'; DROP TABLE collections; --", "get", "x"],
      outcome: .error("not_found")),
    HostileInput(
      kind: "collection",
      arguments: [
        "--collection", String(repeating: "c", count: 100_000), "find", #"{"selector": {}}"#,
      ], outcome: .success),
  ]

  static let commandLines: [HostileInput] = [
    HostileInput(kind: "arguments", arguments: ["frobnicate"], outcome: .usage),
    HostileInput(kind: "arguments", arguments: ["put"], outcome: .usage),
    HostileInput(
      kind: "arguments", arguments: ["--busy-timeout", "soon", "put", "{}"], outcome: .usage),
    HostileInput(
      kind: "arguments", arguments: ["import", "-", "--batch-size", "0"], stdin: [], outcome: .usage
    ),
    HostileInput(
      kind: "arguments", arguments: ["import", "/no/such/file"], outcome: .error("io_error")),
    HostileInput(kind: "arguments", arguments: ["import", "/"], outcome: .error("io_error")),
    HostileInput(
      kind: "arguments", arguments: ["import", "-"],
      stdin: Array(#"{"a": 1}"#.utf8) + [0x0A, 0xFF, 0x0A], outcome: .error("bad_request")),
    HostileInput(
      kind: "arguments", arguments: ["import", "-"],
      stdin: Array("{\"_id\": \"i1\"}\n{\"_id\": \"d1\\u0000\"}\n".utf8),
      outcome: .error("illegal_docid")),
    HostileInput(
      kind: "arguments", arguments: ["import", "-"], stdin: Array(#"[{"a": 1}, 2]"#.utf8),
      outcome: .error("doc_validation")),
    HostileInput(
      kind: "arguments", arguments: ["find", "-"], stdin: [], outcome: .error("bad_request")),
    HostileInput(
      kind: "arguments", arguments: ["index", "delete", "nope"], outcome: .error("not_found")),
    HostileInput(
      kind: "arguments", arguments: ["changes", "--since", "99999999999999999999"], outcome: .usage),
    HostileInput(kind: "arguments", arguments: ["check"], outcome: .success),
  ]

  static let all =
    documents + selectors + indexDefinitions + idsAndCollections + commandLines + faces
}
