import Foundation
import GRDB
import SetteeCore

/// Writes SQL for a parsed `where` string: every operator, keyword and function name from
/// this file's fixed text (or the parser's fixed sets), every value a bound parameter, and
/// every field `json_extract(body, ?)` with its path bound too. The user's text never
/// reaches the statement.
struct WhereSQL {
  /// How fields are read: materialized ones from the field table (aliased `f`).
  let fields: WhereFields
  /// Whether a document of the collection may hold U+0000 in a string, which fields read
  /// from bodies must then read whole (``WhereFieldTable/StringReading``).
  let wholeStrings: Bool
  /// Whether the SQL written so far reads the field table.
  private(set) var usesFieldTable = false

  init(fields: WhereFields, wholeStrings: Bool) {
    self.fields = fields
    self.wholeStrings = wholeStrings
  }

  /// The SQL of `expression` over `documents` rows aliased `d`, with `arguments` bound to
  /// its `?`s in order.
  ///
  /// Every fragment it returns stands alone as an operand (a name, a value, a function
  /// call, or a parenthesized expression), so operands are not parenthesized again: SQLite's
  /// parser has a small stack, and each needless level of parentheses costs some of it.
  /// `AND` and `OR` trees become flat lists (``SQLFragment/and(_:)``). The tree's depth was
  /// bounded by the parser (``WhereParser/maxDepth``), which bounds this recursion.
  mutating func compile(_ expression: WhereExpression, arguments: [JSON]) throws -> SQLFragment {
    switch expression {
    case .field(let path):
      return try field(path)
    case .argument(let index):
      guard index < arguments.count else {
        throw SetteeError(
          .invalidQuery, "the where string has more ? than the \(arguments.count) arguments given")
      }
      return .whereValue(arguments[index].whereArgument)
    case .literal(let value):
      return value == .null ? SQLFragment("NULL") : .whereValue(value.whereArgument)
    case .unary(let op, let operand):
      let inner = try compile(operand, arguments: arguments)
      let prefix: SQLFragment =
        switch op {
        case .negate: SQLFragment("-")
        case .plus: SQLFragment("+")
        case .bitNot: SQLFragment("~")
        case .not: SQLFragment("NOT ")
        }
      return (prefix + inner).grouped
    case .binary(let op, let left, let right) where op == .and || op == .or:
      // The whole chain of this operator as one list.
      var parts: [SQLFragment] = []
      var pending = [right, left]
      while let next = pending.popLast() {
        if case .binary(op, let innerLeft, let innerRight) = next {
          pending += [innerRight, innerLeft]
        } else {
          parts.append(try compile(next, arguments: arguments))
        }
      }
      return op == .and ? .and(parts) : .or(parts)
    case .binary(let op, _, _):
      // A chain of one precedence level (`a + b - c`, left-associative in SQLite as in the
      // parser) is written flat, `(a + b - c)`: SQLite reads it back as the same tree
      // without a parenthesis per level.
      var spine: [(BinaryOperator, WhereExpression)] = []
      var leftmost = expression
      while case .binary(let inner, let left, let right) = leftmost,
        inner.precedence == op.precedence, inner != .and, inner != .or
      {
        spine.append((inner, right))
        leftmost = left
      }
      var sql = try compile(leftmost, arguments: arguments)
      for (inner, right) in spine.reversed() {
        sql += Self.binary(inner) + (try compile(right, arguments: arguments))
      }
      return sql.grouped
    case .match(let kind, let value, let pattern, let escape, let negated):
      var sql =
        try compile(value, arguments: arguments)
        + SQLFragment(negated ? " NOT" : "")
        + (kind == .like ? SQLFragment(" LIKE ") : SQLFragment(" GLOB "))
        + compile(pattern, arguments: arguments)
      if let escape {
        sql += SQLFragment(" ESCAPE ") + (try compile(escape, arguments: arguments))
      }
      return sql.grouped
    case .inList(let value, let list, let negated):
      let items = try list.map { try compile($0, arguments: arguments) }
      return
        (try compile(value, arguments: arguments)
        + SQLFragment(negated ? " NOT IN (" : " IN (") + .joined(items, separator: ", ")
        + SQLFragment(")")).grouped
    case .between(let value, let low, let high, let negated):
      return
        (try compile(value, arguments: arguments)
        + SQLFragment(negated ? " NOT BETWEEN " : " BETWEEN ")
        + compile(low, arguments: arguments) + SQLFragment(" AND ")
        + compile(high, arguments: arguments)).grouped
    case .isNull(let value, let negated):
      return
        (try compile(value, arguments: arguments)
        + SQLFragment(negated ? " IS NOT NULL" : " IS NULL")).grouped
    case .function(let name, let list):
      guard WhereFunction.allowed[name] != nil else {
        throw SetteeError(.invalidQuery, "unknown function \(JSON.string(name))")
      }
      let items = try list.map { try compile($0, arguments: arguments) }
      // Names come from the allowed set (lowercase letters and underscores).
      return .identifier(name) + SQLFragment("(") + .joined(items, separator: ", ")
        + SQLFragment(")")
    case .caseWhen(let base, let branches, let otherwise):
      var sql = SQLFragment("(CASE")
      if let base { sql += SQLFragment(" ") + (try compile(base, arguments: arguments)) }
      for (condition, result) in branches {
        sql +=
          SQLFragment(" WHEN ") + (try compile(condition, arguments: arguments))
          + SQLFragment(" THEN ") + (try compile(result, arguments: arguments))
      }
      if let otherwise {
        sql += SQLFragment(" ELSE ") + (try compile(otherwise, arguments: arguments))
      }
      return sql + SQLFragment(" END)")
    case .cast(let value, let type):
      let name: SQLFragment =
        switch type {
        case .text: SQLFragment("TEXT")
        case .integer: SQLFragment("INTEGER")
        case .real: SQLFragment("REAL")
        case .numeric: SQLFragment("NUMERIC")
        case .blob: SQLFragment("BLOB")
        }
      return SQLFragment("CAST(") + (try compile(value, arguments: arguments)) + SQLFragment(" AS ")
        + name
        + SQLFragment(")")
    case .collate(let value, let collation):
      let name: SQLFragment =
        switch collation {
        case .binary: SQLFragment(" COLLATE BINARY")
        case .nocase: SQLFragment(" COLLATE NOCASE")
        case .rtrim: SQLFragment(" COLLATE RTRIM")
        }
      return ((try compile(value, arguments: arguments)) + name).grouped
    }
  }

  /// `[_id]` and `[_rev]` are the document's columns; a materialized field is its column
  /// of the field table; any other field is read from the body with its path bound (and
  /// its default, if the collection has one).
  mutating func field(_ path: FieldPath) throws -> SQLFragment {
    if path.components == ["_id"] { return SQLFragment("d.id") }
    if path.components == ["_rev"] { return SQLFragment("d.rev") }
    if let column = fields.column(of: path) {
      usesFieldTable = true
      return SQLFragment("f.") + WhereFieldTable.column(column)
    }
    return try WhereFieldTable.value(
      of: path, in: SQLFragment("d.body"), fields.settings,
      reading: wholeStrings ? .whole : .plain)
  }

  static func binary(_ op: BinaryOperator) -> SQLFragment {
    switch op {
    case .or: SQLFragment(" OR ")
    case .and: SQLFragment(" AND ")
    case .equal: SQLFragment(" = ")
    case .notEqual: SQLFragment(" <> ")
    case .is: SQLFragment(" IS ")
    case .isNot: SQLFragment(" IS NOT ")
    case .less: SQLFragment(" < ")
    case .lessOrEqual: SQLFragment(" <= ")
    case .greater: SQLFragment(" > ")
    case .greaterOrEqual: SQLFragment(" >= ")
    case .bitAnd: SQLFragment(" & ")
    case .bitOr: SQLFragment(" | ")
    case .shiftLeft: SQLFragment(" << ")
    case .shiftRight: SQLFragment(" >> ")
    case .add: SQLFragment(" + ")
    case .subtract: SQLFragment(" - ")
    case .multiply: SQLFragment(" * ")
    case .divide: SQLFragment(" / ")
    case .remainder: SQLFragment(" % ")
    case .concatenate: SQLFragment(" || ")
    }
  }

}

extension JSON {
  /// A `where` argument as SQLite holds it: strings as text, numbers as numbers, booleans
  /// as 1 and 0 (as `json_extract` reads JSON booleans), null as NULL, arrays and objects
  /// as JSON text. A string holding U+0000 is its UTF-8 bytes as a blob, since text is
  /// bound only up to its first U+0000: ``SQLFragment/whereValue(_:)`` reads it back as
  /// the whole text.
  package var whereArgument: DatabaseValue {
    switch self {
    case .null: .null
    case .bool(let flag): (flag ? 1 : 0).databaseValue
    case .int(let number): number.databaseValue
    case .double(let number): number.databaseValue
    case .largeInteger: (doubleValue ?? 0).databaseValue
    case .string(let text):
      text.utf8.contains(0) ? Data(text.utf8).databaseValue : text.databaseValue
    case .array, .object: JSONWriter.string(self).databaseValue
    }
  }
}

extension SQLFragment {
  /// A bound ``JSON/whereArgument``: `?`, or `CAST(? AS TEXT)` for a string holding
  /// U+0000 (bound as bytes), which SQLite then holds and compares whole.
  static func whereValue(_ value: DatabaseValue) -> SQLFragment {
    guard case .blob = value.storage else { return .value(value) }
    return SQLFragment("CAST(") + .value(value) + SQLFragment(" AS TEXT)")
  }
}

extension DocumentCollection {
  /// Documents that satisfy a `where` string (seed 003): a SQLite `WHERE` clause over
  /// fields written `[a.b]` (read as `json_extract`), with values through `?` and `args`
  /// only. `orderBy` is a list of such expressions with `ASC`/`DESC` and
  /// `NULLS FIRST|LAST`; ties keep document id order. See docs/where.md.
  ///
  /// ```swift
  /// let users = try collection.find(where: "[address.country] = ?", args: ["US"],
  ///                                 orderBy: "[last_name], [first_name]")
  /// ```
  ///
  /// - Throws: ``SetteeError`` with code `invalidQuery` quoting the string and the
  ///   position of anything outside the grammar, or a wrong number of arguments.
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func find(
    where whereString: String = "", args: [JSON] = [], orderBy: String = "", limit: Int? = nil
  ) throws -> [Document] {
    try database.query { db in
      let cid = try database.collectionID(db, name)
      guard
        let statement = try whereStatement(
          db, cid: cid, select: SQLFragment("SELECT d.id, d.rev, d.body"), whereString,
          args: args, orderBy: orderBy, limit: limit), let cid
      else { return [] }
      let caching = cachesDocuments
      return try DocumentReader.namingDamagedBodies(db, cid: cid) {
        var documents: [Document] = []
        try RawStatement(db, statement).forEach { row in
          let id = row.string(0)
          let rev = try DocumentReader.storedRevision(row.string(1), documentID: id)
          if caching, let cached = cachedDocument(id, rev: rev) {
            documents.append(cached)
            return true
          }
          let document = try Document(
            id: id, rev: rev, body: DocumentReader.parseBody(row.bytes(2), documentID: id))
          if caching { cache(document) }
          documents.append(document)
          return true
        }
        return documents
      }
    }
  }

  /// The first document ``find(where:args:orderBy:limit:)-7q2i7`` would return.
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func findOne(where whereString: String, args: [JSON] = [], orderBy: String = "") throws
    -> Document?
  {
    try find(where: whereString, args: args, orderBy: orderBy, limit: 1).first
  }

  /// How many documents satisfy a `where` string (every live document for `""`).
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func count(where whereString: String, args: [JSON] = []) throws -> Int {
    try database.query { db in
      let cid = try database.collectionID(db, name)
      guard
        let statement = try whereStatement(
          db, cid: cid, select: SQLFragment("SELECT count(*)"), whereString, args: args,
          orderBy: "", limit: nil), let cid
      else { return 0 }
      return try DocumentReader.namingDamagedBodies(db, cid: cid) {
        try Int.fetchOne(
          db.cachedStatement(sql: statement.text), arguments: statement.statementArguments) ?? 0
      }
    }
  }

  /// Whether a string holds only spaces, tabs and line breaks (the grammar's white space).
  static func isBlank(_ text: String) -> Bool {
    text.utf8.allSatisfy { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }
  }

  /// The statement for a `where` query over the collection `cid`, reading its materialized
  /// fields from its field table; `nil` when the collection does not exist (after the
  /// strings were checked, so that errors do not depend on it).
  func whereStatement(
    _ db: SQLConnection, cid: Int64?, select: SQLFragment, _ whereString: String, args: [JSON],
    orderBy: String, limit: Int?
  ) throws -> SQLFragment? {
    if let limit, limit < 0 {
      throw SetteeError(.invalidQuery, "limit must be 0 or more, not \(limit)")
    }
    let (fields, holdsNUL) = try cid.map { try database.whereState(db, cid: $0) } ?? (.none, false)
    var compiler = WhereSQL(fields: fields, wholeStrings: holdsNUL)
    var used = 0
    var condition = SQLFragment("1")
    if !Self.isBlank(whereString) {
      let parsed = try database.parsedCondition(whereString, cid: cid, fields: fields)
      used = parsed.arguments
      condition = try compiler.compile(parsed.0, arguments: args)
    }
    var order = SQLFragment(" ORDER BY ")
    if !Self.isBlank(orderBy) {
      let parsed = try database.parsedOrder(orderBy, cid: cid, fields: fields)
      let remaining = Array(args.dropFirst(used))
      for term in parsed.0 {
        if case .literal(.int) = term.expression {
          throw SetteeError(
            .invalidQuery,
            "orderBy \(JSON.string(orderBy)): a bare number would name a result column in SQLite; order by a field or an expression"
          )
        }
        order +=
          try compiler.compile(term.expression, arguments: remaining).grouped
          + SQLFragment(term.descending ? " DESC" : " ASC")
        if let nullsFirst = term.nullsFirst {
          order += SQLFragment(nullsFirst ? " NULLS FIRST" : " NULLS LAST")
        }
        order += SQLFragment(", ")
      }
      used += parsed.arguments
    }
    order += SQLFragment("d.id")
    guard used == args.count else {
      throw SetteeError(
        .invalidQuery,
        "the where string and orderBy hold \(used) ? but \(args.count) argument\(args.count == 1 ? " was" : "s were") given"
      )
    }
    guard let cid else { return nil }
    var sql = select
    if compiler.usesFieldTable, let table = fields.table {
      // The field table first (CROSS JOIN fixes the order): SQLite has no statistics, so it
      // would rather walk documents in id order (the final tie-break) than seek an index
      // of the field table, which is what a query over indexed fields wants. Its rows are
      // the collection's live documents, so `documents` needs no condition of its own:
      // with one (`d.cid = ?`, even `d.deleted = 0`), once `PRAGMA optimize` has measured
      // `documents` but not the field table, SQLite builds a Bloom filter over the
      // collection's documents for every query (a scan of them: 200 ms instead of 50 µs).
      sql +=
        SQLFragment(" FROM ") + .identifier(table)
        + SQLFragment(" f CROSS JOIN documents d ON d.rid = f.rid WHERE (")
    } else {
      sql +=
        SQLFragment(" FROM ") + .liveDocuments(cid: cid) + SQLFragment(" AND (")
    }
    sql += condition + SQLFragment(")") + order
    if let limit { sql += SQLFragment(" LIMIT ") + .value(Int64(limit)) }
    return sql
  }
}

/// How SQLite runs a `where` query: the statement Settee wrote (values as `?`) and
/// SQLite's query plan, one line a step (`EXPLAIN QUERY PLAN`).
public struct WherePlan: Sendable, Hashable {
  /// The statement, with every value a `?` parameter.
  public var sql: String
  /// SQLite's plan steps, such as `SEARCH f USING INDEX wx_1_0 (c0=?)`.
  public var steps: [String]
}

extension DocumentCollection {
  /// How SQLite would run a `where` query: shows whether an index of
  /// ``addIndex(_:)-53vqf`` serves it. An empty plan for a collection never written.
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func explain(
    where whereString: String = "", args: [JSON] = [], orderBy: String = "", limit: Int? = nil
  ) throws -> WherePlan {
    try database.query { db in
      guard
        let statement = try whereStatement(
          db, cid: database.collectionID(db, name),
          select: SQLFragment("SELECT d.id, d.rev, d.body"),
          whereString, args: args, orderBy: orderBy, limit: limit)
      else { return WherePlan(sql: "", steps: []) }
      let steps = try Row.fetchAll(
        db, sql: "EXPLAIN QUERY PLAN " + statement.text, arguments: statement.statementArguments
      ).map { $0["detail"] as String }
      return WherePlan(sql: statement.text, steps: steps)
    }
  }
}
