import Foundation
import Settee
import SetteeCore
import SetteeTestSupport
import Testing

/// `where` strings of any size and depth answer: reasonable ones run, and ones that nest or
/// grow past the limits are `limit_exceeded` (never a crash of the host, whatever thread it
/// calls from), through every face that parses them.
@Suite("where strings: size and depth")
struct WhereSizeTests {
  let docs: DocumentCollection

  init() throws {
    docs = try Database(inMemoryWith: .init()).collection()
    try docs.putAll((0..<5).map { ["_id": .string("d\($0)"), "x": .int(Int64($0))] })
  }

  static func repeated(_ part: String, _ count: Int, separator: String = "") -> String {
    Array(repeating: part, count: count).joined(separator: separator)
  }

  /// Queries people write, however long: each runs and counts what SQLite would.
  static let reasonable: [(String, Int)] = [
    (repeated("[x] >= 0", 50, separator: " AND "), 5),
    (repeated("[x] >= 1", 2_000, separator: " AND "), 4),
    ((0..<3_000).map { "[x] = \($0)" }.joined(separator: " OR "), 5),
    (repeated("NOT ", 30) + "[x] = 1", 1),
    (repeated("NOT ", 29) + "[x] = 1", 4),
    (repeated("(", 40) + "[x] = 1" + repeated(")", 40), 1),
    (repeated("[x]", 45, separator: " + ") + " > 40", 4),
    (repeated("abs(", 15) + "[x]" + repeated(")", 15) + " = 2", 1),
    ("[x] IN (" + repeated("1", 10_000, separator: ", ") + ")", 1),
    ("like('1', [x]) OR glob('2*', [x])", 2),
    ("[x] LIKE ('3')", 1),
    ("[x] - 1 - 1 = 0", 1),  // left-associative: (x - 1) - 1
    ("[x] / 2 * 2 = [x]", 3),  // (x / 2) * 2
    ("[x] || 'a' || 'b' = '1ab'", 1),
  ]

  @Test(arguments: reasonable.indices)
  func reasonableQueriesRun(_ index: Int) throws {
    let (text, expected) = Self.reasonable[index]
    #expect(try docs.count(where: text) == expected)
    #expect(try docs.find(where: text).count == expected)
  }

  /// Inputs that nest or grow past the limits, as the attack used them.
  static let tooLarge: [String] = [
    repeated("(", 3_000) + "[x]" + repeated(")", 3_000) + " = 1",
    repeated("[x]", 20_000, separator: " + ") + " = 1",
    repeated("abs(", 3_000) + "[x]" + repeated(")", 3_000) + " = 1",
    repeated("CASE WHEN 1 THEN ", 3_000) + "[x]" + repeated(" END", 3_000) + " = 1",
    repeated("CAST(", 3_000) + "[x]" + repeated(" AS TEXT)", 3_000) + " = 1",
    repeated("- ", 60_000) + "1 = 1",
    repeated("NOT ", 60_000) + "1",
    repeated("[x] = 1", 60_000, separator: " OR "),
  ]

  @Test(arguments: tooLarge.indices)
  func tooDeepOrTooLargeIsLimitExceededEverywhere(_ index: Int) async throws {
    let text = Self.tooLarge[index]
    let docs = self.docs
    // From a cooperative thread (a small stack), as an app's async code calls.
    let errors = await Task.detached {
      var codes: [SetteeError.Code?] = []
      for attempt in [
        { _ = try docs.count(where: text) },
        { _ = try docs.find(where: "1", orderBy: text) },
        { try docs.setAliases(["big": text]) },
      ] as [() throws -> Void] {
        do {
          try attempt()
          codes.append(nil)
        } catch let error as SetteeError { codes.append(error.code) } catch { codes.append(nil) }
      }
      return codes
    }.value
    #expect(errors == [.limitExceeded, .limitExceeded, .limitExceeded], "\(text.prefix(40))")
    #expect(try await docs.count(where: "") == 5)
  }

  @Test func aliasesAreMeasuredWhenExpanded() throws {
    try docs.setAliases(["chain": Self.repeated("[x]", 30, separator: " + ")])
    #expect(try docs.count(where: "chain > 0") == 4)
    // Each use expands the alias: deep or large once expanded is refused, not run.
    expectError(.limitExceeded) {
      _ = try docs.count(where: Self.repeated("chain", 30, separator: " + ") + " > 0")
    }
    expectError(.limitExceeded) {
      _ = try docs.count(where: "(" + Self.repeated("chain = 1", 2_000, separator: " OR ") + ")")
    }
  }

  @Test func indexAndQueryableDefinitionsAreBounded() throws {
    let deep = Self.repeated("(", 3_000) + "[x]" + Self.repeated(")", 3_000)
    expectError(.limitExceeded) { try docs.addIndex(deep) }
    expectError(.limitExceeded) { try docs.addQueryableFields(deep) }
    expectError(.limitExceeded) { try docs.removeIndex(deep) }
  }

  /// What SQLite refuses for the user's input is the user's error, named.
  @Test(arguments: [
    ("[x] LIKE 'a' ESCAPE 'ab'", SetteeError.Code.invalidQuery, "ESCAPE"),
    ("abs([x] - 9223372036854775807 - 2) > 0", .invalidQuery, "overflows"),
    ("[x] LIKE '" + repeated("%", 60_000) + "'", .limitExceeded, "LIKE"),
    // Issue 44: a storage_error before.
    ("char(" + repeated("65", 1_000, separator: ", ") + ") = 'A'", .invalidQuery, "char"),
  ])
  func sqliteRefusalsAreTheUsersErrors(_ text: String, _ code: SetteeError.Code, _ word: String)
    throws
  {
    let error = expectError(code) { _ = try docs.count(where: text) }
    #expect(error?.message.contains(word) == true, "\(error?.message ?? "")")
  }

  @Test func whatSQLitesParserCannotNestIsLimitExceeded() throws {
    // Within the grammar's depth, but SQLite's parser has a small stack of its own.
    let text = Self.repeated("abs(", 40) + "[x]" + Self.repeated(")", 40) + " = 1"
    expectError(.limitExceeded) { _ = try docs.count(where: text) }
  }

  @Test func tooManyOrderTermsIsLimitExceeded() throws {
    expectError(.limitExceeded) {
      _ = try docs.find(where: "", orderBy: Self.repeated("[x]", 3_000, separator: ", "))
    }
  }
}
