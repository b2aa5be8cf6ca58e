import SetteeCore

/// A second, independent statement of the projection rules (docs/query-language.md), for
/// the differential tests: each field is cut out of the document on its own, keeping the
/// positions of array elements, then the cuts are merged in field order.
enum ProjectionModel {
  indirect enum Cut {
    case whole(JSON)
    case members([(String, Cut)])
    /// Each element's cut, by position (`nil` where the element gives nothing).
    case elements([Cut?])
  }

  static func project(_ body: JSONObject, _ fields: [FieldPath]) -> JSONObject {
    var merged: Cut?
    for field in fields {
      guard let cut = cut(.object(body), field.components[...]) else { continue }
      merged = merged.map { merge($0, cut) } ?? cut
    }
    guard let merged, case .object(let object)? = json(merged) else { return [:] }
    return object
  }

  static func cut(_ value: JSON, _ path: ArraySlice<String>) -> Cut? {
    guard let name = path.first else { return .whole(value) }
    switch value {
    case .object(let object):
      guard let member = object[name], let below = cut(member, path.dropFirst()) else {
        return nil
      }
      return .members([(name, below)])
    case .array(let elements):
      if let index = Int(name), String(index) == name, index >= 0 {
        guard index < elements.count, let below = cut(elements[index], path.dropFirst()) else {
          return nil
        }
        return .members([(name, below)])
      }
      let cuts = elements.map { element -> Cut? in
        guard case .object = element else { return nil }
        return cut(element, path)
      }
      return cuts.contains { $0 != nil } ? .elements(cuts) : nil
    default:
      return nil
    }
  }

  static func merge(_ a: Cut, _ b: Cut) -> Cut {
    switch (a, b) {
    case (.whole, _): return a
    case (_, .whole): return b
    case (.members(var left), .members(let right)):
      for (name, cut) in right {
        if let position = left.firstIndex(where: { $0.0.utf8.elementsEqual(name.utf8) }) {
          left[position].1 = merge(left[position].1, cut)
        } else {
          left.append((name, cut))
        }
      }
      return .members(left)
    case (.elements(let left), .elements(let right)):
      return .elements(
        zip(left, right).map { pair in
          switch pair {
          case (let l?, let r?): merge(l, r)
          case (let l?, nil): l
          case (nil, let r): r
          }
        })
    default:
      // Numeric and other names through the same array: the numeric ones win (CouchDB
      // keeps only those).
      if case .members = a { return a }
      return b
    }
  }

  static func json(_ cut: Cut) -> JSON? {
    switch cut {
    case .whole(let value): return value
    case .members(let members):
      return .object(JSONObject(members.compactMap { name, cut in json(cut).map { (name, $0) } }))
    case .elements(let cuts):
      let values = cuts.compactMap { $0.flatMap(json) }
      return values.isEmpty ? nil : .array(values)
    }
  }
}
