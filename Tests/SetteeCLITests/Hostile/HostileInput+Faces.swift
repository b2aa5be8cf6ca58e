import Foundation
import SetteeCore

/// Hostile inputs for the faces after `find`: `where` strings and their settings (indexes,
/// queryable fields, aliases, defaults), views, metadata and the changes feed. Generated
/// in families (every nesting construct at depths below, at and far past the limits), so
/// that a new construct gets the same treatment.
extension HostileInput {
  static func whereString(_ text: String, _ outcome: Outcome, args: String? = nil)
    -> HostileInput
  {
    HostileInput(
      kind: "where",
      arguments: ["where", "--count"] + (args.map { ["--args", $0] } ?? []) + ["--", text],
      outcome: outcome)
  }

  static func command(_ kind: String, _ arguments: [String], _ outcome: Outcome) -> HostileInput {
    HostileInput(kind: kind, arguments: arguments, outcome: outcome)
  }

  static func repeated(_ part: String, _ count: Int, _ separator: String = "") -> String {
    Array(repeating: part, count: count).joined(separator: separator)
  }

  /// Each way a `where` string nests, wrapped around `[n]` `depth` times.
  static func nesting(_ depth: Int) -> [String] {
    [
      repeated("(", depth) + "[n]" + repeated(")", depth) + " = 1",
      repeated("abs(", depth) + "[n]" + repeated(")", depth) + " = 1",
      repeated("CASE WHEN 1 THEN ", depth) + "[n]" + repeated(" END", depth) + " = 1",
      repeated("CAST(", depth) + "[n]" + repeated(" AS TEXT)", depth) + " = 1",
      repeated("coalesce(", depth) + "[n]" + repeated(", 0)", depth) + " = 1",
      repeated("- ", depth) + "[n] = 1",
      repeated("NOT ", depth) + "[n] = 1",
      repeated("[n]", depth + 1, " + ") + " = 1",
      repeated("[n]", depth + 1, " || ") + " = '1'",
      repeated("[n] = 1", depth + 1, " AND "),
      repeated("[n] = 1", depth + 1, " OR "),
      "[n] IN (" + repeated("1", depth + 1, ", ") + ")",
    ]
  }

  static let whereStrings: [HostileInput] =
    // Within the grammar's depth: an answer, or SQLite's own parser refusing it (named).
    nesting(10).map { whereString($0, .success) }
    + nesting(40).map { whereString($0, .anyAnswer) }
    // Far past it: limit_exceeded, as the attack sent them.
    + nesting(3_000).filter {
      !$0.contains(" AND ") && !$0.contains(" OR ") && !$0.contains(" IN (")
    }
    .map { whereString($0, .error("limit_exceeded")) }
    + [
      whereString(repeated("[n] = 1", 10_000, " OR "), .success),
      whereString(repeated("[x] >= 0", 50, " AND "), .success),
      whereString(repeated("NOT ", 30) + "[n] = 1", .success),
      whereString("length(printf('%100000000d', [n])) > 0", .success),
      whereString("[n] LIKE 'a' ESCAPE 'ab'", .error("invalid_query")),
      whereString("abs([n] - 9223372036854775807 - 2) > 0", .error("invalid_query")),
      whereString("[s] LIKE '" + repeated("%", 60_000) + "'", .error("limit_exceeded")),
      whereString("like('v%', [s]) AND glob('v*', [s])", .success),
      whereString("[" + repeated("a", 101, ".") + "] = 1", .error("limit_exceeded")),
      whereString("[a\\\\b] = 1 OR [t\tb] = 1 OR [u\u{1}] = 1", .success),
      whereString("[a\"b] = 1", .error("invalid_query")),
      whereString("[$weird] = 1 OR [\\$weird] = 1", .success),
      whereString("[s] = ?", .success, args: #"["y\u0000z"]"#),
      whereString("[s] = ?", .success, args: #"["'; DROP TABLE documents; --"]"#),
      whereString("[n] > 1; DROP TABLE documents", .error("invalid_query")),
      whereString("[n] = (SELECT 1)", .error("invalid_query")),
      whereString("load_extension('x') = 1", .error("invalid_query")),
      whereString("readfile('/etc/passwd') IS NOT NULL", .error("invalid_query")),
      whereString("[n] = ?", .error("invalid_query"), args: "[1, 2]"),
      whereString("[n] = ?", .error("bad_request"), args: "[1"),
      command(
        "where", ["where", "1", "--order-by", repeated("[n]", 3_000, ", ")],
        .error("limit_exceeded")),
      command(
        "where", ["where", "1", "--order-by", repeated("(", 3_000) + "[n]" + repeated(")", 3_000)],
        .error("limit_exceeded")),
      // Past one argument's 128 KiB, the string comes on standard input.
      HostileInput(
        kind: "where", arguments: ["where", "--count", "-"],
        stdin: Array((0..<12_000).map { "[n] = \($0)" }.joined(separator: " OR ").utf8),
        outcome: .success),
      HostileInput(
        kind: "where", arguments: ["where", "--count", "-"],
        stdin: Array(repeated("[n] = 1", 20_000, " OR ").utf8), outcome: .error("limit_exceeded")),
      HostileInput(
        kind: "where", arguments: ["where", "-"], stdin: [0x5B, 0xFF, 0x5D],
        outcome: .error("bad_request")),
      command("where", ["where", "1", "--limit", "-1"], .anyAnswer),
      command("where", ["where", "1", "--limit", "99999999999999999999"], .usage),
    ]

  static let whereSettings: [HostileInput] =
    nesting(3_000).prefix(6).flatMap { deep in
      [
        command("where settings", ["where-index", "add", "--", deep], .error("limit_exceeded")),
        command("where settings", ["where-index", "remove", "--", deep], .error("limit_exceeded")),
        command("where settings", ["queryable", "add", "--", deep], .error("limit_exceeded")),
        command("where settings", ["queryable", "remove", "--", deep], .error("limit_exceeded")),
        command("where settings", ["alias", "set", "big", "--", deep], .error("limit_exceeded")),
      ]
    } + [
      command(
        "where settings", ["alias", "set", "big", repeated("[n]", 20_000, " + ")],
        .error("limit_exceeded")),
      command("where settings", ["alias", "set", "and", "[n]"], .error("invalid_query")),
      command("where settings", ["alias", "set", "select", "[n]"], .anyAnswer),
      command("where settings", ["alias", "set", "a\u{1}", "[n]"], .anyAnswer),
      command(
        "where settings", ["where-index", "add", "--unique", "[a\"b]"], .error("invalid_query")),
      command("where settings", ["where-index", "add", "--unique", "[s]"], .success),
      command("where settings", ["where-index", "add", "[n] + 1"], .error("invalid_query")),
      command("where settings", ["queryable", "add", "[_id]"], .error("invalid_query")),
      command("where settings", ["defaults", "set", #"{"n": "\u0000"}"#], .success),
      command("where settings", ["defaults", "set", "[1]"], .anyAnswer),
      command(
        "where settings", ["defaults", "set", "{" + repeated(#""a":{"#, 200)], .error("bad_request")
      ),
    ]

  static func view(_ definition: String, _ outcome: Outcome) -> HostileInput {
    json("view", ["view", "create"], definition, outcome)
  }

  static func viewQuery(_ options: String, _ outcome: Outcome) -> HostileInput {
    json("view query", ["view", "query", "t"], options, outcome)
  }

  static let views: [HostileInput] = [
    view(#"{"name": "x", "key": "\#(repeated("a", 101, "."))"}"#, .error("limit_exceeded")),
    view(#"{"name": "x", "key": "a..b"}"#, .error("bad_request")),
    view(#"{"name": "x", "key": "s", "filter": {"s": {"$regex": "(a+)+b"}}}"#, .success),
    view(#"{"name": "x", "key": "s", "filter": {"s": {"$regex": "("}}}"#, .anyAnswer),
    view(#"{"name": "x", "key": "s", "reduce": "_median"}"#, .anyAnswer),
    view(#"{"name": "\u0000", "key": "s"}"#, .anyAnswer),
    view(#"{"name": "x"}"#, .anyAnswer),
    view("{", .error("bad_request")),
    view(#"{"name": "x", "key": "s", "filter": \#(nested(150))}"#, .error("bad_request")),
    viewQuery(#"{"limit": -1}"#, .error("invalid_query")),
    viewQuery(#"{"skip": 1e300}"#, .anyAnswer),
    viewQuery(#"{"limit": 9223372036854775807, "skip": 9223372036854775807}"#, .success),
    viewQuery(#"{"group_level": -3}"#, .anyAnswer),
    viewQuery(#"{"group": true}"#, .success),
    viewQuery(#"{"group_level": 99999999999}"#, .anyAnswer),
    viewQuery(#"{"keys": [\#(repeated("1", 100_000, ","))], "group": true}"#, .success),
    viewQuery(#"{"startkey": "z", "endkey": "a"}"#, .error("invalid_query")),
    viewQuery(#"{"stale": "sometimes"}"#, .anyAnswer),
    viewQuery(#"{"key": \#(nested(150))}"#, .success),
    viewQuery(#"{"key": \#(nested(100_000))}"#, .error("bad_request")),
    viewQuery(#"{"bogus": 1}"#, .anyAnswer),
    command("view query", ["view", "query", "nope"], .error("not_found")),
    command("view query", ["all-docs", #"{"limit": -5}"#], .error("invalid_query")),
    command("view query", ["all-docs", #"{"keys": "x"}"#], .anyAnswer),
  ]

  static let metadataAndChanges: [HostileInput] = [
    command("metadata", ["metadata", "set", "k", nested(150)], .success),
    HostileInput(
      kind: "metadata", arguments: ["metadata", "set", "k", "-"],
      stdin: Array(nested(100_000).utf8), outcome: .error("bad_request")),
    command("metadata", ["metadata", "set", "k", "{"], .error("bad_request")),
    command("metadata", ["metadata", "set", "k\u{1}", "1"], .anyAnswer),
    command("metadata", ["metadata", "set", "", "1"], .anyAnswer),
    command("metadata", ["metadata", "set", "k", #""\u0000""#], .success),
    command("metadata", ["metadata", "get", "none"], .error("not_found")),
    command("metadata", ["metadata", "get", repeated("k", 100_000)], .error("not_found")),
    command(
      "changes", ["changes", "--feed", "longpoll", "--since", "0", "--timeout", "100000000000000"],
      .anyAnswer),
    command(
      "changes",
      ["changes", "--feed", "longpoll", "--since", "99999", "--timeout", "100000000000000"],
      .error("bad_request")),
    command(
      "changes", ["changes", "--feed", "longpoll", "--since", "99999", "--timeout", "-5"],
      .anyAnswer),
    command("changes", ["changes", "--limit=-5"], .anyAnswer),
    command("changes", ["changes", "--since=-5"], .success),
    command("changes", ["changes", "--feed", "sideways"], .anyAnswer),
    command("changes", ["--busy-timeout", "1e300", "put", "{}"], .error("bad_request")),
    command("changes", ["--query-time-limit=-1", "where", "1"], .error("bad_request")),
    command("changes", ["--db", "", "get", "x"], .anyAnswer),
  ]

  static let faces = whereStrings + whereSettings + views + metadataAndChanges
}
