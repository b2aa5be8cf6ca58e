/// A parsed `where` string (seed 003): a SQLite expression over document fields written
/// `[a.b.c]`, with values only through `?` arguments or literals. Every operator and
/// function is one of a fixed set, so that SQL is generated from the tree and the input is
/// never pasted into a statement.
package indirect enum WhereExpression: Sendable, Hashable {
  /// `[a.b]`: the field's value as SQLite's `json_extract` reads it.
  case field(FieldPath)
  /// `?`: the argument at this position (0-based).
  case argument(Int)
  /// A literal number or string (bound as a parameter when compiled), or `NULL`.
  case literal(JSON)
  /// `-x`, `+x`, `~x`, `NOT x`.
  case unary(UnaryOperator, WhereExpression)
  /// `a op b`.
  case binary(BinaryOperator, WhereExpression, WhereExpression)
  /// `a [NOT] LIKE|GLOB b [ESCAPE c]`.
  case match(
    MatchOperator, WhereExpression, WhereExpression, escape: WhereExpression?, negated: Bool)
  /// `a [NOT] IN (b, c, …)`.
  case inList(WhereExpression, [WhereExpression], negated: Bool)
  /// `a [NOT] BETWEEN b AND c`.
  case between(WhereExpression, WhereExpression, WhereExpression, negated: Bool)
  /// `a IS [NOT] NULL` (also `ISNULL`, `NOTNULL`, `NOT NULL`).
  case isNull(WhereExpression, negated: Bool)
  /// A scalar function of ``WhereFunction/allowed``.
  case function(String, [WhereExpression])
  /// `CASE [base] WHEN … THEN … [ELSE …] END`.
  case caseWhen(
    base: WhereExpression?, [(WhereExpression, WhereExpression)], otherwise: WhereExpression?)
  /// `CAST(a AS type)`.
  case cast(WhereExpression, WhereType)
  /// `a COLLATE name`.
  case collate(WhereExpression, WhereCollation)

  /// The expressions directly inside this one.
  package var children: [WhereExpression] {
    switch self {
    case .field, .argument, .literal: []
    case .unary(_, let operand): [operand]
    case .binary(_, let left, let right): [left, right]
    case .match(_, let value, let pattern, let escape, _):
      [value, pattern] + (escape.map { [$0] } ?? [])
    case .inList(let value, let list, _): [value] + list
    case .between(let value, let low, let high, _): [value, low, high]
    case .isNull(let value, _): [value]
    case .function(_, let arguments): arguments
    case .caseWhen(let base, let branches, let otherwise):
      (base.map { [$0] } ?? []) + branches.flatMap { [$0.0, $0.1] }
        + (otherwise.map { [$0] } ?? [])
    case .cast(let value, _): [value]
    case .collate(let value, _): [value]
    }
  }

  /// How many levels deep the tree is (a field or value alone: 1) and how many nodes it
  /// has, counted without recursion, so that any tree can be measured before anything
  /// recursive walks it.
  package var size: (depth: Int, nodes: Int) {
    var deepest = 0
    var nodes = 0
    var pending: [(WhereExpression, Int)] = [(self, 1)]
    while let (expression, level) = pending.popLast() {
      deepest = max(deepest, level)
      nodes += 1
      for child in expression.children { pending.append((child, level + 1)) }
    }
    return (deepest, nodes)
  }

  package static func == (lhs: WhereExpression, rhs: WhereExpression) -> Bool {
    String(describing: lhs) == String(describing: rhs)
  }

  package func hash(into hasher: inout Hasher) { hasher.combine(String(describing: self)) }
}

/// Prefix operators.
package enum UnaryOperator: String, Sendable, Hashable {
  /// `-`
  case negate = "-"
  /// `+`
  case plus = "+"
  /// `~`
  case bitNot = "~"
  /// `NOT`
  case not = "NOT"
}

/// Infix operators, as SQLite spells them.
package enum BinaryOperator: String, Sendable, Hashable, CaseIterable {
  /// `OR`
  case or = "OR"
  /// `AND`
  case and = "AND"
  /// `=` (also `==`)
  case equal = "="
  /// `<>` (also `!=`)
  case notEqual = "<>"
  /// `IS`
  case `is` = "IS"
  /// `IS NOT`
  case isNot = "IS NOT"
  /// `<`
  case less = "<"
  /// `<=`
  case lessOrEqual = "<="
  /// `>`
  case greater = ">"
  /// `>=`
  case greaterOrEqual = ">="
  /// `&`
  case bitAnd = "&"
  /// `|`
  case bitOr = "|"
  /// `<<`
  case shiftLeft = "<<"
  /// `>>`
  case shiftRight = ">>"
  /// `+`
  case add = "+"
  /// `-`
  case subtract = "-"
  /// `*`
  case multiply = "*"
  /// `/`
  case divide = "/"
  /// `%`
  case remainder = "%"
  /// `||`
  case concatenate = "||"
}

extension BinaryOperator {
  /// The operator's precedence level, as SQLite and ``WhereParser`` read it (higher binds
  /// tighter); operators of one level are left-associative.
  package var precedence: Int {
    switch self {
    case .or: 0
    case .and: 1
    case .equal, .notEqual, .is, .isNot: 2
    case .less, .lessOrEqual, .greater, .greaterOrEqual: 3
    case .bitAnd, .bitOr, .shiftLeft, .shiftRight: 4
    case .add, .subtract: 5
    case .multiply, .divide, .remainder: 6
    case .concatenate: 7
    }
  }
}

/// `LIKE` (ASCII case-insensitive) and `GLOB` (case-sensitive, Unix wildcards).
package enum MatchOperator: String, Sendable, Hashable {
  /// `LIKE`
  case like = "LIKE"
  /// `GLOB`
  case glob = "GLOB"
}

/// The types of `CAST`.
package enum WhereType: String, Sendable, Hashable, CaseIterable {
  /// `TEXT`
  case text = "TEXT"
  /// `INTEGER`
  case integer = "INTEGER"
  /// `REAL`
  case real = "REAL"
  /// `NUMERIC`
  case numeric = "NUMERIC"
  /// `BLOB`
  case blob = "BLOB"
}

/// The collations of `COLLATE`.
package enum WhereCollation: String, Sendable, Hashable, CaseIterable {
  /// `BINARY`
  case binary = "BINARY"
  /// `NOCASE` (ASCII letters)
  case nocase = "NOCASE"
  /// `RTRIM`
  case rtrim = "RTRIM"
}

/// The scalar functions a `where` string may call: SQLite's deterministic built-ins.
package enum WhereFunction {
  /// Name (lowercase) to the argument counts allowed (`nil`: any number, at least one).
  package static let allowed: [String: ClosedRange<Int>?] = [
    "abs": 1...1, "char": nil, "coalesce": 2...64, "glob": 2...2, "hex": 1...1, "ifnull": 2...2,
    "iif": 3...3, "instr": 2...2, "length": 1...1, "like": 2...3, "lower": 1...1, "ltrim": 1...2,
    "max": 2...64, "min": 2...64, "nullif": 2...2, "printf": nil, "format": nil, "quote": 1...1,
    "replace": 3...3, "round": 1...2, "rtrim": 1...2, "sign": 1...1, "substr": 2...3,
    "substring": 2...3, "trim": 1...2, "typeof": 1...1, "unicode": 1...1, "upper": 1...1,
    "date": nil, "time": nil, "datetime": nil, "julianday": nil, "unixepoch": nil,
    "strftime": nil,
  ]
}

extension FieldPath {
  /// The field as a `where` string writes it: `[address.country]` (a `]` in a name
  /// escaped as `\]`).
  package var bracketed: String { "[\(description.replacingOccurrences(of: "]", with: "\\]"))]" }
}
