import Foundation
import GRDB
import SetteeCore

// Following a field path through a document in SQL, as the matcher's PathResolver does.
extension SelectorCompiler {
  // MARK: - Paths

  typealias Predicate = (inout SelectorCompiler, Candidate) throws -> SQLFragment

  /// "Some value at `path` satisfies `predicate`".
  mutating func candidates(_ context: Context, _ path: FieldPath, _ predicate: Predicate) throws
    -> SQLFragment
  {
    switch context {
    case .document(let row):
      if let first = path.components.first, first == "_id" || first == "_rev" {
        guard path.components.count == 1 else { return SQLFragment("0") }
        return try predicate(&self, .text(first == "_id" ? row.id : row.rev))
      }
      try SelectorCompiler.checkSize(path, knownObject: true)
      return try traverse(row.body, "$", path.components[...], knownObject: true, predicate)
    case .element(let value, let type):
      if path.isRoot { return try predicate(&self, .column(value: value, type: type)) }
      try SelectorCompiler.checkSize(path, knownObject: true)
      return SQLFragment("CASE WHEN ") + type + SQLFragment(" = 'object' THEN ")
        + (try traverse(value, "$", path.components[...], knownObject: true, predicate))
        + SQLFragment(" ELSE 0 END")
    case .key(let name):
      if path.isRoot { return try predicate(&self, .text(name)) }
      return SQLFragment("0")
    }
  }

  /// Follows `components` from the value at JSON path `path` in `source`, the way
  /// ``PathResolver`` does: member, array index, or each object element of an array.
  mutating func traverse(
    _ source: SQLFragment, _ path: String, _ components: ArraySlice<String>, knownObject: Bool,
    _ predicate: Predicate
  ) throws -> SQLFragment {
    let alternatives = try self.alternatives(
      source, path, components, knownObject: knownObject, predicate)
    return alternatives.count == 1 ? alternatives[0] : .or(alternatives)
  }

  /// The ways a path can lead to values, as one flat list to OR (flat, because SQLite's
  /// parser has a small stack for nested expressions).
  mutating func alternatives(
    _ source: SQLFragment, _ path: String, _ components: ArraySlice<String>, knownObject: Bool,
    _ predicate: Predicate
  ) throws -> [SQLFragment] {
    guard let component = components.first else {
      conditionCopies += 1
      if conditionCopies > SelectorCompiler.maxConditionCopies { throw BeyondSQL.tooLarge }
      return [try predicate(&self, .path(source: source, path: path))]
    }
    let rest = components.dropFirst()
    var alternatives: [SQLFragment] = []
    let here = Candidate.path(source: source, path: path)
    if !JSONPathText.isPlainLabel(component) {
      // SQLite's JSON paths cannot spell a name with a double quote, and compare labels with
      // the stored (escaped) text of names: look such members up by their decoded name.
      let member = nextAlias("m")
      let value = member + SQLFragment(".value")
      let type = member + SQLFragment(".type")
      let inner =
        rest.isEmpty
        ? try predicate(&self, .column(value: value, type: type))
        : SQLFragment("CASE WHEN ") + type + SQLFragment(" IN ('object', 'array') THEN ")
          + (try traverse(value, "$", rest, knownObject: false, predicate))
          + SQLFragment(" ELSE 0 END")
      alternatives.append(
        SQLFragment("CASE WHEN ") + here.type
          + SQLFragment(" = 'object' THEN EXISTS (SELECT 1 FROM ")
          + here.each + SQLFragment(" AS ") + member + SQLFragment(" WHERE ") + member
          + SQLFragment(".key = ") + .value(component) + SQLFragment(" AND ") + inner
          + SQLFragment(") ELSE 0 END"))
    } else {
      alternatives += try self.alternatives(
        source, JSONPathText.member(path, component), rest, knownObject: false, predicate)
    }
    if !knownObject {
      if let index = FieldPath.arrayIndexOf(component) {
        alternatives += try self.alternatives(
          source, JSONPathText.element(path, index), rest, knownObject: false, predicate)
      }
      let element = nextAlias("j")
      let inner = try traverse(
        element + SQLFragment(".value"), "$", components, knownObject: true, predicate)
      alternatives.append(
        SQLFragment("CASE WHEN ") + here.type
          + SQLFragment(" = 'array' THEN EXISTS (SELECT 1 FROM ")
          + here.each + SQLFragment(" AS ") + element + SQLFragment(" WHERE ") + element
          + SQLFragment(".type = 'object' AND ") + inner + SQLFragment(") ELSE 0 END"))
    }
    return alternatives
  }

  mutating func nextAlias(_ prefix: String) -> SQLFragment {
    aliasCount += 1
    return .identifier("\(prefix)\(aliasCount)")
  }
}
