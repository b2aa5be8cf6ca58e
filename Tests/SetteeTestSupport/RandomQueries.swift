import SetteeCore

/// Random documents and selectors for differential tests: small value pools so that
/// conditions often hit, with nested objects, arrays, mixed types and missing fields.
package struct RandomQueries {
  package var random: SplitMix64

  package init(seed: UInt64) { random = SplitMix64(seed: seed) }

  package mutating func pick<T>(_ choices: [T]) -> T {
    choices[Int(random.next() % UInt64(choices.count))]
  }
  package mutating func chance(_ percent: UInt64) -> Bool { random.next() % 100 < percent }

  // "a\u{0}b" and "a\u{0}": SQLite reads strings only up to a U+0000, Settee must not.
  static let strings: [JSON] = [
    "a", "b", "ab", "B", "abc", "é", "", "a.b", "1", "ba", "中", "a\u{0}b", "a\u{0}",
    "say \"a\\b\"\n",
  ]
  static let numbers: [JSON] = [
    0, 1, 2, -1, 7, 10, .double(1.5), .double(-0.5), .double(2.0), .double(1e20),
    .int(9_007_199_254_740_993),
  ]

  package mutating func scalar() -> JSON {
    switch random.next() % 10 {
    case 0: return .null
    case 1: return .bool(chance(50))
    case 2, 3, 4: return pick(Self.numbers)
    default: return pick(Self.strings)
    }
  }

  /// Another value of `old`'s kind (an integer, another number, a string); others as they are.
  mutating func value(like old: JSON) -> JSON {
    switch old {
    case .int: pick(Self.numbers.filter { if case .int = $0 { true } else { false } })
    case .double: pick(Self.numbers.filter { if case .double = $0 { true } else { false } })
    case .string: pick(Self.strings)
    default: old
    }
  }

  /// The selector (as JSON) with other values of the same kind (integers, other numbers,
  /// strings) in its comparisons (`$eq`, `$gt`, `$gte`, `$lt`, `$lte`, implicit equalities)
  /// outside `$elemMatch`, `$allMatch` and `$keyMapMatch`: queries of one shape, for the
  /// plan cache.
  package mutating func revalued(json selector: JSON) -> JSON {
    func condition(_ given: JSON) -> JSON {
      guard case .object(let object) = given else { return value(like: given) }
      guard !object.isEmpty, object.keys.allSatisfy({ $0.hasPrefix("$") }) else {
        return fields(given)
      }
      var changed = JSONObject()
      for member in object {
        switch member.key {
        case "$eq", "$gt", "$gte", "$lt", "$lte": changed[member.key] = value(like: member.value)
        case "$not": changed[member.key] = condition(member.value)
        default: changed[member.key] = member.value
        }
      }
      return .object(changed)
    }
    func fields(_ selector: JSON) -> JSON {
      guard case .object(let object) = selector else { return selector }
      var changed = JSONObject()
      for member in object {
        switch member.key {
        case "$and", "$or", "$nor":
          changed[member.key] = .array((member.value.arrayValue ?? []).map(fields))
        case "$not": changed[member.key] = fields(member.value)
        case let key where key.hasPrefix("$"): changed[key] = member.value
        default: changed[member.key] = condition(member.value)
        }
      }
      return .object(changed)
    }
    return fields(selector)
  }

  package mutating func value(depth: Int = 0) -> JSON {
    switch random.next() % 10 {
    case 0 where depth < 2:
      return .array((0..<Int(random.next() % 4)).map { _ in value(depth: depth + 1) })
    case 1 where depth < 2:
      var object = JSONObject()
      for key in ["species", "age", "a"] where chance(60) { object[key] = value(depth: depth + 1) }
      return .object(object)
    default:
      return scalar()
    }
  }

  package mutating func document(_ number: Int) -> JSONObject {
    var object: JSONObject = ["_id": .string("d\(number)")]
    for field in ["a", "b"] where chance(80) { object[field] = value() }
    if chance(70) { object["tags"] = .array((0..<Int(random.next() % 4)).map { _ in scalar() }) }
    if chance(50) { object["tags"] = scalar() }
    if chance(70) {
      var pet = JSONObject()
      if chance(80) { pet["species"] = pick(["cat", "dog", .array(["cat", "dog"]), 3, .null]) }
      if chance(70) { pet["age"] = pick(Self.numbers) }
      object["pet"] = .object(pet)
    }
    if chance(50) {
      object["pets"] = .array(
        (0..<Int(random.next() % 3)).map { _ in
          chance(85)
            ? .object(["species": pick(["cat", "dog", "fish"]), "age": pick(Self.numbers)])
            : scalar()
        })
    }
    if chance(10) { object["we\"ird.key"] = scalar() }
    return object
  }

  package static let paths = [
    "a", "b", "tags", "tags.0", "tags.1", "pet", "pet.species", "pet.age", "pets", "pets.species",
    "pets.0.species", "pets.age", "missing", "_id", "a.species", "a.0", "we\"ird\\.key",
  ]

  package mutating func condition(depth: Int) -> JSON {
    switch random.next() % 24 {
    case 0: return ["$eq": value()]
    case 1: return ["$ne": value()]
    case 2: return ["$lt": scalar()]
    case 3: return ["$lte": scalar()]
    case 4: return ["$gt": scalar()]
    case 5: return ["$gte": pick([scalar(), value()])]
    case 6: return ["$exists": .bool(chance(50))]
    case 7: return ["$type": .string(pick(JSONType.allCases).rawValue)]
    case 8: return ["$in": .array((0..<Int(random.next() % 3)).map { _ in value() })]
    case 9: return ["$nin": .array((0..<Int(random.next() % 3)).map { _ in scalar() })]
    case 10: return ["$all": .array((0..<Int(random.next() % 3)).map { _ in scalar() })]
    case 11: return ["$size": .int(Int64(random.next() % 4))]
    case 12: return ["$mod": [pick([2, 3, -2, .double(2.7)]), pick([0, 1, -1])]]
    case 13:
      // Literal patterns take a substring path, the others a prefilter on their literal run.
      return [
        "$regex": pick([
          "^a", "b$", "a.*b", "^$", "É", "(?i)b", "a", "ab", "", "é", "中", "a\\.b", "\"a", "\\\\b",
          "\n", "x?ab", "ab+c*", "[ab]b", "\\d", "a{2}", "^say",
        ])
      ]
    case 14: return ["$beginsWith": pick(["a", "", "ab", "é", "B"])]
    case 15 where depth < 2: return ["$elemMatch": selector(depth: depth + 1, element: true)]
    case 16 where depth < 2: return ["$allMatch": selector(depth: depth + 1, element: true)]
    case 17 where depth < 2: return ["$keyMapMatch": ["$in": ["species", "age", "a", "0"]]]
    case 18 where depth < 2:
      if case .object(let object) = condition(depth: depth + 1), !object.isEmpty,
        object.keys.allSatisfy({ $0.hasPrefix("$") })
      {
        return ["$not": .object(object)]
      }
      return ["$not": ["$gt": scalar()]]
    case 19: return ["$gt": scalar(), "$lt": scalar()]
    default: return value()  // implicit $eq, possibly an array or an object (nested paths)
    }
  }

  /// A selector; `element` ones may also apply conditions to the element itself.
  package mutating func selector(depth: Int = 0, element: Bool = false) -> JSON {
    if element && chance(40) {
      if case .object(let object) = condition(depth: depth + 1),
        object.keys.allSatisfy({ $0.hasPrefix("$") })
      {
        return .object(object)
      }
      return ["$eq": scalar()]
    }
    switch random.next() % 10 {
    case 0 where depth < 2:
      return [
        "$or": .array(
          (0..<Int(1 + random.next() % 3)).map { _ in selector(depth: depth + 1, element: element) }
        )
      ]
    case 1 where depth < 2:
      return [
        "$and": .array(
          (0..<Int(1 + random.next() % 3)).map { _ in selector(depth: depth + 1, element: element) }
        )
      ]
    case 2 where depth < 2:
      return [
        "$nor": .array(
          (0..<Int(1 + random.next() % 2)).map { _ in selector(depth: depth + 1, element: element) }
        )
      ]
    case 3 where depth < 2:
      return ["$not": selector(depth: depth + 1, element: element)]
    default:
      var object = JSONObject()
      for _ in 0..<Int(1 + random.next() % 2) {
        object[element ? pick(["species", "age", "a"]) : pick(Self.paths)] = condition(depth: depth)
      }
      return .object(object)
    }
  }

  package mutating func sort() -> JSON {
    .array(
      (0..<Int(random.next() % 3)).map { _ in
        let path = pick(["a", "b", "tags", "pet.age", "pets.age", "missing", "_id"])
        return chance(30) ? .string(path) : [path: chance(50) ? "asc" : "desc"]
      })
  }
}
