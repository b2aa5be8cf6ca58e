/// Finds the values a ``FieldPath`` leads to in a document (the reference semantics).
///
/// A component names an object member; on an array, a numeric component picks that
/// element, and any component also applies to each element that is an object (one level,
/// as MongoDB does), so `pets.species` reaches every pet's species.
package enum PathResolver {
  /// Every value at `path` in `value`; empty when the path leads nowhere.
  package static func candidates(_ value: JSON, _ path: FieldPath) -> [JSON] {
    var result: [JSON] = []
    collect(value, path.components[...], into: &result)
    return result
  }

  static func collect(_ value: JSON, _ path: ArraySlice<String>, into result: inout [JSON]) {
    guard let component = path.first else {
      result.append(value)
      return
    }
    let rest = path.dropFirst()
    switch value {
    case .object(let object):
      if let member = object[component] { collect(member, rest, into: &result) }
    case .array(let elements):
      if let index = FieldPath.arrayIndex(component), index < elements.count {
        collect(elements[index], rest, into: &result)
      }
      for element in elements {
        if case .object = element { collect(element, path, into: &result) }
      }
    default:
      break
    }
  }

  /// The values that sorting by `path` considers: candidates, with arrays replaced by their
  /// elements.
  package static func sortValues(_ value: JSON, _ path: FieldPath) -> [JSON] {
    candidates(value, path).flatMap { candidate -> [JSON] in
      if case .array(let elements) = candidate { return elements }
      return [candidate]
    }
  }
}
