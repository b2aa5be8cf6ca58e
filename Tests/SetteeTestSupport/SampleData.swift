import SetteeCore

/// Seed-shaped documents (`{name, age, docNumber, pet}`) made from a seeded generator, so
/// every run sees the same data.
package enum SampleData {
  static let names = ["mike", "fred", "amara", "bo", "chen", "dagny", "elif", "léa", "太郎", "نور"]
  static let pets = ["cat", "dog", "parrot", "fish"]

  /// `count` documents with ids `doc-0000000`… when `withIDs` is true.
  package static func people(_ count: Int, withIDs: Bool = true, seed: UInt64 = 42) -> [JSONObject]
  {
    var random = SplitMix64(seed: seed)
    return (0..<count).map { number in
      var object: JSONObject = [:]
      if withIDs { object["_id"] = .string(id(number)) }
      object["name"] = .string(names[Int(random.next() % UInt64(names.count))])
      object["age"] = .int(Int64(random.next() % 90))
      object["docNumber"] = .int(Int64(number))
      object["pet"] = .string(pets[Int(random.next() % UInt64(pets.count))])
      return object
    }
  }

  /// The id of the `number`th sample document; ids sort in number order.
  package static func id(_ number: Int) -> String {
    let digits = String(number)
    return "doc-" + String(repeating: "0", count: max(0, 7 - digits.count)) + digits
  }

  /// The three documents of seed 000's examples.
  package static let seedPeople: [JSONObject] = [
    [
      "_id": "mike12", "name": "mike", "age": 12, "pet": ["species": "cat"],
      "comment": "Mike goes to middle school and likes reading books.",
    ],
    [
      "_id": "mike34", "name": "mike", "age": 34, "pet": ["species": "dog"],
      "comment": "Mike is a doctor and likes reading books.",
    ],
    [
      "_id": "fred23", "name": "fred", "age": 23, "pet": ["species": "cat"],
      "comment": "Fred works for a startup out of his home office.",
    ],
  ]

  /// NDJSON text of `people(count)`.
  package static func ndjson(_ count: Int, withIDs: Bool = true) -> String {
    people(count, withIDs: withIDs).map { JSONWriter.string(.object($0)) + "\n" }.joined()
  }
}
