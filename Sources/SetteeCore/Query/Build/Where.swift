/// A selector built in Swift: conditions on ``Field``s joined with `&&`, `||` and `!` (named
/// `Where` because Foundation has a `Predicate` of its own).
///
/// It means exactly what the same Mango JSON means: it is turned into that JSON
/// (``json``) and parsed by the same parser, so both ways of writing a query give the same
/// selector, checked by the same rules.
public struct Where: Sendable, Hashable {
  indirect enum Node: Sendable, Hashable {
    case all
    case condition(Field, String, JSON)
    case nested(Field, String, Node)
    case and([Node])
    case or([Node])
    case not(Node)
    case text(String)
  }

  let node: Node

  init(_ node: Node) { self.node = node }

  /// Every document (`{}`).
  public static let all = Where(.all)

  /// `$text`: a full-text search (the collection needs a TEXT index); the search uses the
  /// FTS4 syntax of seed 000.
  public static func text(_ search: String) -> Where { Where(.text(search)) }

  /// Both hold (`$and`).
  public static func && (lhs: Where, rhs: Where) -> Where {
    switch (lhs.node, rhs.node) {
    case (.and(let left), .and(let right)): Where(.and(left + right))
    case (.and(let left), let right): Where(.and(left + [right]))
    case (let left, .and(let right)): Where(.and([left] + right))
    case (let left, let right): Where(.and([left, right]))
    }
  }

  /// Either holds (`$or`).
  public static func || (lhs: Where, rhs: Where) -> Where {
    switch (lhs.node, rhs.node) {
    case (.or(let left), .or(let right)): Where(.or(left + right))
    case (.or(let left), let right): Where(.or(left + [right]))
    case (let left, .or(let right)): Where(.or([left] + right))
    case (let left, let right): Where(.or([left, right]))
    }
  }

  /// The complement (`$nor` of one): documents without the field included.
  public static prefix func ! (predicate: Where) -> Where { Where(.not(predicate.node)) }

  /// All of the predicates (`$and`); every document for none.
  public static func and(_ predicates: [Where]) -> Where {
    predicates.isEmpty ? .all : Where(.and(predicates.map(\.node)))
  }

  /// Any of the predicates (`$or`); no document for none.
  public static func or(_ predicates: [Where]) -> Where {
    predicates.isEmpty ? !.all : Where(.or(predicates.map(\.node)))
  }

  /// The predicate as Mango JSON, as a `_find` body's `selector` would hold it.
  public var json: JSON { Where.json(node) }

  static func json(_ node: Node) -> JSON {
    switch node {
    case .all: return ["$and": [[:]]]
    case .condition(let field, let operation, let argument):
      let test: JSON = .object([operation: argument])
      return field.relative.map { .object([$0: test]) } ?? test
    case .nested(let field, let operation, let inner):
      let test: JSON = .object([operation: json(inner)])
      return field.relative.map { .object([$0: test]) } ?? test
    case .and(let nodes): return ["$and": .array(nodes.map(json))]
    case .or(let nodes): return ["$or": .array(nodes.map(json))]
    case .not(let inner): return ["$nor": [json(inner)]]
    case .text(let search): return ["$text": ["$search": .string(search)]]
    }
  }

  /// The selector, parsed and checked as JSON would be.
  ///
  /// - Throws: ``SetteeError`` with code `invalidQuery` (a bad path, a bad argument) that
  ///   names the operator and the field, as for JSON.
  package func selector() throws -> Selector { try SelectorParser.parse(json) }
}

/// A sort key for Swift queries: `.ascending("name")`, `.descending("age")`.
public struct Sort: Sendable, Hashable {
  /// The field to sort by.
  public var field: Field
  /// Largest first when `true`.
  public var descending: Bool

  /// Smallest first.
  public static func ascending(_ field: Field) -> Sort { Sort(field: field, descending: false) }
  /// Largest first.
  public static func descending(_ field: Field) -> Sort { Sort(field: field, descending: true) }

  /// Full-text relevance, most relevant first (needs a `$text` predicate).
  public static let relevance = Sort(field: "$relevance", descending: true)

  /// The sort field, checked.
  ///
  /// - Throws: ``SetteeError`` with code `invalidQuery` for a bad path.
  package func sortField() throws -> FindQuery.SortField {
    if field.path == "$relevance" { return .relevance(descending: descending) }
    return FindQuery.SortField(try FieldPath(parsing: field.path), descending: descending)
  }
}

extension FindQuery {
  /// A query built in Swift.
  ///
  /// ```swift
  /// let query = try FindQuery(matching: Field("age") > 12, sort: [.descending("age")], limit: 10)
  /// ```
  ///
  /// - Throws: ``SetteeError`` with code `invalidQuery` for a bad path or argument.
  public init(
    matching predicate: Where, sort: [Sort] = [], fields: [Field]? = nil, skip: Int = 0,
    limit: Int = 0, useIndex: String? = nil
  ) throws {
    guard skip >= 0, limit >= 0 else {
      throw SetteeError(
        .invalidQuery, "skip and limit must not be negative (skip \(skip), limit \(limit))")
    }
    self.init(
      selector: try predicate.selector(), sort: try sort.map { try $0.sortField() },
      fields: try fields.map { try $0.map { try FieldPath(parsing: $0.path) } }, skip: skip,
      limit: limit, useIndex: useIndex)
  }
}

extension FindQuery {
  /// Deprecated: ``init(matching:sort:fields:skip:limit:useIndex:)``.
  @available(*, deprecated, renamed: "init(matching:sort:fields:skip:limit:useIndex:)")
  public init(
    where predicate: Where, sort: [Sort] = [], fields: [Field]? = nil, skip: Int = 0,
    limit: Int = 0, useIndex: String? = nil
  ) throws {
    try self.init(
      matching: predicate, sort: sort, fields: fields, skip: skip, limit: limit,
      useIndex: useIndex)
  }
}
