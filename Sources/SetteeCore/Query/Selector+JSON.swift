extension Selector {
  /// The selector as Mango JSON that ``SelectorParser`` parses back to a selector that
  /// matches the same documents (not always the same tree: `$nor` stands for `.not`).
  ///
  /// Used to hand a selector to code that only gets text, such as an SQL function.
  package var json: JSON {
    switch self {
    // `{}` is refused where a sub-selector must be non-empty; this is `{}` anywhere.
    case .all: return ["$and": [[:]]]
    case .and(let parts):
      return parts.isEmpty ? Selector.all.json : ["$and": .array(parts.map(\.json))]
    case .or(let parts):
      return parts.isEmpty ? ["$nor": [Selector.all.json]] : ["$or": .array(parts.map(\.json))]
    case .not(let inner): return ["$nor": [inner.json]]
    case .text(let search): return ["$text": ["$search": .string(search)]]
    case .condition(let path, let condition):
      let operation = condition.json
      return path.isRoot ? operation : .object([path.description: operation])
    }
  }
}

extension Condition {
  /// `{"$operator": argument}`.
  package var json: JSON {
    switch self {
    case .equal(let value): ["$eq": value]
    case .lessThan(let value): ["$lt": value]
    case .lessThanOrEqual(let value): ["$lte": value]
    case .greaterThan(let value): ["$gt": value]
    case .greaterThanOrEqual(let value): ["$gte": value]
    case .exists: ["$exists": true]
    case .type(let type): ["$type": .string(type.rawValue)]
    case .in(let values): ["$in": .array(values)]
    case .all(let values): ["$all": .array(values)]
    case .size(let count): ["$size": .int(Int64(count))]
    case .mod(let divisor, let remainder): ["$mod": [.int(divisor), .int(remainder)]]
    case .regex(let pattern): ["$regex": .string(pattern)]
    case .beginsWith(let prefix): ["$beginsWith": .string(prefix)]
    case .elementMatch(let selector): ["$elemMatch": selector.json]
    case .allMatch(let selector): ["$allMatch": selector.json]
    case .keyMapMatch(let selector): ["$keyMapMatch": selector.json]
    }
  }
}
