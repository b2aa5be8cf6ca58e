import Foundation

/// The reference implementation of the query language: simple, obviously right, and slow.
///
/// The SQL path must give exactly the results this gives; randomized differential tests
/// hold the two together.
package enum Matcher {
  /// Whether a document (as JSON, with `_id` and `_rev`) matches.
  ///
  /// - Throws: ``SetteeError`` with code `limitExceeded` when a `$regex` runs past
  ///   its time limit (0.1 s) on one string.
  package static func matches(_ selector: Selector, _ document: JSON) throws -> Bool {
    switch selector {
    case .all: return true
    case .and(let parts): return try parts.allSatisfy { try matches($0, document) }
    case .or(let parts): return try parts.contains { try matches($0, document) }
    case .not(let inner): return try !matches(inner, document)
    case .condition(let path, let condition):
      return try PathResolver.candidates(document, path).contains { try holds(condition, $0) }
    case .text:
      // Full-text search has its own reference (the FTS tokenizer); see issue 4.
      throw SetteeError(
        .invalidQuery, "the reference matcher cannot evaluate $text (a TEXT index answers it)")
    }
  }

  /// Whether a condition holds for one value found at the condition's path.
  static func holds(_ condition: Condition, _ value: JSON) throws -> Bool {
    switch condition {
    case .exists: return true
    case .type(let type): return JSONType(of: value) == type
    case .size(let count):
      if case .array(let elements) = value { return elements.count == count }
      return false
    case .all(let wanted):
      guard case .array(let elements) = value, !wanted.isEmpty else { return false }
      return wanted.allSatisfy { item in elements.contains { JSONCollation.equal($0, item) } }
    case .elementMatch(let selector):
      guard case .array(let elements) = value else { return false }
      return try elements.contains { try matches(selector, $0) }
    case .allMatch(let selector):
      guard case .array(let elements) = value, !elements.isEmpty else { return false }
      return try elements.allSatisfy { try matches(selector, $0) }
    case .keyMapMatch(let selector):
      guard case .object(let object) = value else { return false }
      return try object.contains { try matches(selector, .string($0.key)) }
    default:
      // Value conditions: the value itself, or for an array any element (and for equality
      // and comparison with an array argument, the whole array).
      guard case .array(let elements) = value else { return try holdsForValue(condition, value) }
      return try elements.contains { try holdsForValue(condition, $0) }
        || holdsForWholeArray(condition, value)
    }
  }

  /// A value condition on one value (which may be an array nested in an array).
  static func holdsForValue(_ condition: Condition, _ value: JSON) throws -> Bool {
    switch condition {
    case .equal(let argument): return JSONCollation.equal(value, argument)
    case .in(let arguments): return arguments.contains { JSONCollation.equal(value, $0) }
    case .lessThan(let argument):
      return value != .null && JSONCollation.compare(value, argument) < 0
    case .lessThanOrEqual(let argument):
      return value != .null && JSONCollation.compare(value, argument) <= 0
    case .greaterThan(let argument):
      return value != .null && JSONCollation.compare(value, argument) > 0
    case .greaterThanOrEqual(let argument):
      return value != .null && JSONCollation.compare(value, argument) >= 0
    case .regex(let pattern):
      guard case .string(let text) = value else { return false }
      return try RegexCache.shared.matches(pattern, text)
    case .beginsWith(let prefix):
      guard case .string(let text) = value else { return false }
      return text.utf8.starts(with: prefix.utf8)
    case .mod(let divisor, let remainder):
      guard let number = SelectorParser.truncated(value) else { return false }
      return number.remainderReportingOverflow(dividingBy: divisor).partialValue == remainder
    default: return false
    }
  }

  /// Equality and comparison against an array argument also look at the whole array.
  static func holdsForWholeArray(_ condition: Condition, _ array: JSON) -> Bool {
    func isArray(_ value: JSON) -> Bool { if case .array = value { true } else { false } }
    switch condition {
    case .equal(let argument): return isArray(argument) && JSONCollation.equal(array, argument)
    case .in(let arguments):
      return arguments.contains { isArray($0) && JSONCollation.equal(array, $0) }
    case .lessThan(let argument):
      return isArray(argument) && JSONCollation.compare(array, argument) < 0
    case .lessThanOrEqual(let argument):
      return isArray(argument) && JSONCollation.compare(array, argument) <= 0
    case .greaterThan(let argument):
      return isArray(argument) && JSONCollation.compare(array, argument) > 0
    case .greaterThanOrEqual(let argument):
      return isArray(argument) && JSONCollation.compare(array, argument) >= 0
    default: return false
    }
  }
}

/// Compiled regular expressions, shared by pattern, and searched under a time limit.
package final class RegexCache: @unchecked Sendable {
  // @unchecked: `expressions` is only touched with `lock` held; NSRegularExpression is
  // immutable and documented as safe to share between threads.
  /// The cache every query shares.
  package static let shared = RegexCache()
  private var expressions: [String: Compiled] = [:]
  private let lock = NSLock()
  /// The clock a search's time is read from, in nanoseconds: the system's monotonic one,
  /// or a test's, which then decides exactly when a search passes ``timeLimit``.
  private let now: @Sendable () -> UInt64

  package init(now: @escaping @Sendable () -> UInt64 = { DispatchTime.now().uptimeNanoseconds }) {
    self.now = now
  }

  /// The longest one search of one string may run, in seconds. Backtracking patterns such
  /// as `(a+)+b` take time exponential in the length of the text; past this, the search
  /// stops and the query fails rather than holding a core for minutes.
  package static let timeLimit = 0.1

  /// Whether the pattern finds a match anywhere in `text`; `false` for a bad pattern.
  ///
  /// - Throws: ``SetteeError`` with code `limitExceeded` when the search runs longer than
  ///   ``timeLimit`` (ICU reports progress during long searches, and the search stops).
  package func matches(_ pattern: String, _ text: String) throws -> Bool {
    guard let compiled = compiled(pattern) else { return false }
    if let literal = compiled.literal { return literal.isFound(in: text) }
    guard let expression = compiled.expression else { return false }
    let range = NSRange(text.startIndex..<text.endIndex, in: text)
    let start = now()
    let limit = UInt64(RegexCache.timeLimit * 1e9)
    var found = false
    var timedOut = false
    var calls = 0
    expression.enumerateMatches(in: text, options: [.reportProgress], range: range) {
      result, _, stop in
      if result != nil {
        found = true
        stop.pointee = true
        return
      }
      // ICU reports progress at every start position of a search and every few thousand
      // steps of one attempt: reading the clock each time was a fifth of a scan.
      calls += 1
      if calls & 31 == 0, self.now() &- start > limit {
        timedOut = true
        stop.pointee = true
      }
    }
    if timedOut {
      throw SetteeError(
        .limitExceeded,
        "$regex \(JSONWriter.string(.string(pattern))) ran longer than \(Int(RegexCache.timeLimit * 1000)) ms on one string of \(text.utf8.count) bytes (the limit): the pattern backtracks too much; make its repetitions unambiguous (for example (a+)+ is a+)"
      )
    }
    return found
  }

  /// A pattern ready to search: its literal text when the pattern is nothing else (no
  /// expression needed: Foundation refuses the empty pattern, which matches every string),
  /// else the compiled expression.
  struct Compiled {
    var expression: NSRegularExpression?
    var literal: RegexLiteral?
  }

  /// Whether `pattern` is one ``matches(_:_:)`` can search for.
  package static func isValid(_ pattern: String) -> Bool {
    shared.compiled(pattern) != nil
  }

  func compiled(_ pattern: String) -> Compiled? {
    lock.lock()
    defer { lock.unlock() }
    if let cached = expressions[pattern] { return cached }
    let compiled: Compiled
    if let literal = RegexLiteral(pattern: pattern), literal.isWholePattern {
      compiled = Compiled(expression: nil, literal: literal)
    } else {
      guard let expression = try? NSRegularExpression(pattern: pattern) else { return nil }
      compiled = Compiled(expression: expression, literal: nil)
    }
    if expressions.count > 256 { expressions.removeAll() }
    expressions[pattern] = compiled
    return compiled
  }
}
