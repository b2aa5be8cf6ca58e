/// Parses `where` strings and `orderBy` clauses (seed 003) into ``WhereExpression`` trees,
/// with SQLite's operator precedence. Anything outside the grammar (another table, a
/// subquery, a statement separator, a comment, an unknown function or bare name) is a
/// ``SetteeError`` (`invalidQuery`) quoting the input and giving the position.
package struct WhereParser {
  /// One `orderBy` term.
  package struct OrderTerm: Sendable, Hashable {
    /// What to order by.
    package var expression: WhereExpression
    /// `DESC`.
    package var descending: Bool
    /// `NULLS FIRST` (`true`), `NULLS LAST` (`false`), or SQLite's default (`nil`).
    package var nullsFirst: Bool?
  }

  enum Token: Equatable {
    case word(String)  // keywords and function names, uppercased for keywords
    case field(String)  // the text inside [ ]
    case number(JSON)
    case string(String)
    case question
    case symbol(String)
    case end
  }

  let text: String
  let what: String
  var tokens: [(token: Token, offset: Int)] = []
  var position = 0
  /// How deeply the parser is nested now (parentheses, arguments, prefix operators).
  var depth = 0

  /// How deeply a `where` string or `orderBy` clause may nest: parentheses, function
  /// arguments, `CASE` and `CAST`, prefix operators (`-`, `NOT`), and chains of one
  /// operator (`a + b + c` is three deep; `AND` and `OR` chains of any length count as
  /// balanced trees, so a list of conditions is never too deep). SQLite's own parser
  /// refuses expressions little deeper than this.
  package static let maxDepth = 48
  /// How many tokens (names, values, operators) a `where` string or `orderBy` may hold.
  package static let maxTokens = 50_000
  /// How many `?` have been read.
  package private(set) var argumentCount = 0
  /// The collection's aliases: bare names that stand for an expression.
  let aliases: [String: WhereExpression]

  init(_ text: String, what: String, aliases: [String: WhereExpression] = [:]) throws {
    self.text = text
    self.what = what
    self.aliases = aliases
    tokens = try Self.lex(text, what: what)
  }

  /// Parses a `where` string; `argumentCount` is how many `?` it holds. A bare name that
  /// `aliases` holds stands for its expression.
  package static func parse(_ text: String, aliases: [String: WhereExpression] = [:]) throws -> (
    expression: WhereExpression, arguments: Int
  ) {
    var parser = try WhereParser(text, what: "where string", aliases: aliases)
    let expression = try parser.expression()
    try parser.expectEnd()
    try parser.checkDepth(expression)
    return (expression, parser.argumentCount)
  }

  /// Parses an `orderBy` clause: expressions with `ASC`/`DESC` and `NULLS FIRST|LAST`,
  /// separated by commas.
  package static func parseOrder(
    _ text: String, what: String = "orderBy", aliases: [String: WhereExpression] = [:]
  ) throws -> (terms: [OrderTerm], arguments: Int) {
    var parser = try WhereParser(text, what: what, aliases: aliases)
    var terms: [OrderTerm] = []
    repeat {
      let expression = try parser.expression()
      var descending = false
      if parser.accept(.word("DESC")) { descending = true } else { _ = parser.accept(.word("ASC")) }
      var nullsFirst: Bool? = nil
      if parser.accept(.word("NULLS")) {
        if parser.accept(.word("FIRST")) {
          nullsFirst = true
        } else {
          try parser.expect(.word("LAST"), "FIRST or LAST")
          nullsFirst = false
        }
      }
      try parser.checkDepth(expression)
      terms.append(
        OrderTerm(expression: expression, descending: descending, nullsFirst: nullsFirst))
    } while parser.accept(.symbol(","))
    try parser.expectEnd()
    return (terms, parser.argumentCount)
  }

  mutating func expression() throws -> WhereExpression {
    try enter()
    defer { leave() }
    return try or()
  }

  mutating func or() throws -> WhereExpression {
    var operands = [try and()]
    while accept(.word("OR")) { operands.append(try and()) }
    return Self.balanced(.or, operands[...])
  }

  mutating func and() throws -> WhereExpression {
    var operands = [try not()]
    while accept(.word("AND")) { operands.append(try not()) }
    return Self.balanced(.and, operands[...])
  }

  /// A chain of `AND` or `OR` as a balanced tree (both are associative, and the operands
  /// keep their order), so that fifty conditions are six levels deep, not fifty.
  static func balanced(_ op: BinaryOperator, _ operands: ArraySlice<WhereExpression>)
    -> WhereExpression
  {
    if operands.count == 1 { return operands[operands.startIndex] }
    let middle = operands.startIndex + operands.count / 2
    return .binary(
      op, balanced(op, operands[..<middle]), balanced(op, operands[middle...]))
  }

  mutating func not() throws -> WhereExpression {
    if accept(.word("NOT")) {
      try enter()
      defer { leave() }
      return .unary(.not, try not())
    }
    return try equality()
  }

  /// `=`, `<>`, `IS`, `IN`, `LIKE`, `GLOB`, `BETWEEN`, `ISNULL`… (one level in SQLite).
  mutating func equality() throws -> WhereExpression {
    var left = try comparison()
    while true {
      let negated = accept(.word("NOT"))
      if accept(.word("IN")) {
        try expect(.symbol("("), "( after IN")
        var list: [WhereExpression] = []
        if !accept(.symbol(")")) {
          repeat { list.append(try expression()) } while accept(.symbol(","))
          try expect(.symbol(")"), ") to end the IN list")
        }
        left = .inList(left, list, negated: negated)
      } else if accept(.word("LIKE")) {
        left = try matchTail(.like, left, negated)
      } else if accept(.word("GLOB")) {
        left = try matchTail(.glob, left, negated)
      } else if accept(.word("BETWEEN")) {
        let low = try comparison()
        try expect(.word("AND"), "AND in BETWEEN")
        left = .between(left, low, try comparison(), negated: negated)
      } else if negated && accept(.word("NULL")) {
        left = .isNull(left, negated: true)
      } else if negated {
        throw error("expected IN, LIKE, GLOB, BETWEEN or NULL after NOT")
      } else if accept(.word("ISNULL")) {
        left = .isNull(left, negated: false)
      } else if accept(.word("NOTNULL")) {
        left = .isNull(left, negated: true)
      } else if accept(.word("IS")) {
        let not = accept(.word("NOT"))
        if accept(.word("NULL")) {
          left = .isNull(left, negated: not)
        } else {
          left = .binary(not ? .isNot : .is, left, try comparison())
        }
      } else if accept(.symbol("=")) || accept(.symbol("==")) {
        left = .binary(.equal, left, try comparison())
      } else if accept(.symbol("<>")) || accept(.symbol("!=")) {
        left = .binary(.notEqual, left, try comparison())
      } else {
        return left
      }
    }
  }

  mutating func matchTail(_ kind: MatchOperator, _ left: WhereExpression, _ negated: Bool) throws
    -> WhereExpression
  {
    let pattern = try comparison()
    let escape = accept(.word("ESCAPE")) ? try comparison() : nil
    return .match(kind, left, pattern, escape: escape, negated: negated)
  }

  mutating func comparison() throws -> WhereExpression {
    var left = try bitwise()
    while true {
      let op: BinaryOperator
      if accept(.symbol("<")) {
        op = .less
      } else if accept(.symbol("<=")) {
        op = .lessOrEqual
      } else if accept(.symbol(">")) {
        op = .greater
      } else if accept(.symbol(">=")) {
        op = .greaterOrEqual
      } else {
        return left
      }
      left = .binary(op, left, try bitwise())
    }
  }

  mutating func bitwise() throws -> WhereExpression {
    var left = try additive()
    while true {
      let op: BinaryOperator
      if accept(.symbol("&")) {
        op = .bitAnd
      } else if accept(.symbol("|")) {
        op = .bitOr
      } else if accept(.symbol("<<")) {
        op = .shiftLeft
      } else if accept(.symbol(">>")) {
        op = .shiftRight
      } else {
        return left
      }
      left = .binary(op, left, try additive())
    }
  }

  mutating func additive() throws -> WhereExpression {
    var left = try multiplicative()
    while true {
      if accept(.symbol("+")) {
        left = .binary(.add, left, try multiplicative())
      } else if accept(
        .symbol("-"))
      {
        left = .binary(.subtract, left, try multiplicative())
      } else {
        return left
      }
    }
  }

  mutating func multiplicative() throws -> WhereExpression {
    var left = try concatenation()
    while true {
      let op: BinaryOperator
      if accept(.symbol("*")) {
        op = .multiply
      } else if accept(.symbol("/")) {
        op = .divide
      } else if accept(.symbol("%")) {
        op = .remainder
      } else {
        return left
      }
      left = .binary(op, left, try concatenation())
    }
  }

  mutating func concatenation() throws -> WhereExpression {
    var left = try unary()
    while accept(.symbol("||")) { left = .binary(.concatenate, left, try unary()) }
    return left
  }

  mutating func unary() throws -> WhereExpression {
    for (symbol, op) in [("-", UnaryOperator.negate), ("+", .plus), ("~", .bitNot)]
    where accept(.symbol(symbol)) {
      try enter()
      defer { leave() }
      return .unary(op, try unary())
    }
    var operand = try primary()
    while accept(.word("COLLATE")) {
      guard case .word(let name) = current,
        let collation = WhereCollation(rawValue: name.uppercased())
      else { throw error("expected BINARY, NOCASE or RTRIM after COLLATE") }
      position += 1
      operand = .collate(operand, collation)
    }
    return operand
  }

  mutating func primary() throws -> WhereExpression {
    let offset = tokens[position].offset
    switch current {
    case .field(let name):
      position += 1
      do {
        let unescaped = name.contains("\\") ? name.replacingOccurrences(of: "\\]", with: "]") : name
        return .field(try FieldPath(parsing: unescaped, allowingDollar: true))
      } catch let error as SetteeError where error.code == .limitExceeded {
        throw limitError(error.message)
      } catch {
        throw self.error("[\(name)] is not a field path", at: offset)
      }
    case .question:
      position += 1
      argumentCount += 1
      return .argument(argumentCount - 1)
    case .number(let number):
      position += 1
      return .literal(number)
    case .string(let text):
      position += 1
      return .literal(.string(text))
    case .symbol("("):
      position += 1
      let inner = try expression()
      try expect(.symbol(")"), ")")
      return inner
    case .word("NULL"):
      position += 1
      return .literal(.null)
    case .word("TRUE"):
      position += 1
      return .literal(1)
    case .word("FALSE"):
      position += 1
      return .literal(0)
    case .word("CASE"):
      position += 1
      let base = current == .word("WHEN") ? nil : try expression()
      var branches: [(WhereExpression, WhereExpression)] = []
      while accept(.word("WHEN")) {
        let condition = try expression()
        try expect(.word("THEN"), "THEN")
        branches.append((condition, try expression()))
      }
      guard !branches.isEmpty else { throw error("CASE needs at least one WHEN") }
      let otherwise = accept(.word("ELSE")) ? try expression() : nil
      try expect(.word("END"), "END to close CASE")
      return .caseWhen(base: base, branches, otherwise: otherwise)
    case .word("CAST"):
      position += 1
      try expect(.symbol("("), "( after CAST")
      let value = try expression()
      try expect(.word("AS"), "AS in CAST")
      guard case .word(let name) = current, let type = WhereType(rawValue: name.uppercased()) else {
        throw error("expected TEXT, INTEGER, REAL, NUMERIC or BLOB")
      }
      position += 1
      try expect(.symbol(")"), ") to end CAST")
      return .cast(value, type)
    case .word(let name)
    where !Self.keywords.contains(name)
      || ((name == "LIKE" || name == "GLOB") && tokens[position + 1].token == .symbol("(")):
      // `like(…)` and `glob(…)` are functions where an operand starts (infix LIKE and GLOB
      // never stand there).
      position += 1
      let lower = name.lowercased()
      guard current == .symbol("(") else {
        if let expansion = aliases[name] { return expansion }
        throw self.error(
          "unknown name \(JSON.string(name)): fields are written [\(name)], values as ? arguments",
          at: offset)
      }
      guard let arity = WhereFunction.allowed[lower] else {
        throw self.error("unknown function \(JSON.string(name))", at: offset)
      }
      position += 1
      var arguments: [WhereExpression] = []
      if !accept(.symbol(")")) {
        repeat { arguments.append(try expression()) } while accept(.symbol(","))
        try expect(.symbol(")"), ") to end the arguments of \(name)")
      }
      if let arity, !arity.contains(arguments.count) {
        throw self.error(
          "\(lower) takes \(arity.lowerBound == arity.upperBound ? "\(arity.lowerBound)" : "\(arity.lowerBound) to \(arity.upperBound)") arguments, not \(arguments.count)",
          at: offset)
      }
      if arity == nil && arguments.isEmpty
        && !["date", "time", "datetime", "julianday", "unixepoch"].contains(lower)
      {
        throw self.error("\(lower) needs arguments", at: offset)
      }
      return .function(lower, arguments)
    default:
      throw error("unexpected \(describe(current))")
    }
  }
}
