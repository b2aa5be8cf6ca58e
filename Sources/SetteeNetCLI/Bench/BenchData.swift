import SetteeCore

/// The benchmark's documents: seed 000's shape `{name, age, docNumber, pet}`, made by a
/// seeded generator so that every run, and the baseline, see the same data.
struct BenchData {
  static let names = [
    "mike", "fred", "amara", "bo", "chen", "dagny", "elif", "farah", "goran", "hana", "ivan", "jun",
    "kwame", "lea", "mateo", "nour", "olu", "priya", "quinn", "rosa",
  ]
  static let pets = ["cat", "dog", "parrot", "fish", "hamster", "rabbit"]
  static let words = [
    "doctor", "books", "reading", "school", "startup", "office", "garden", "music", "travel",
    "coffee",
    "painting", "football", "chess", "cooking", "science", "history", "sailing", "poetry",
    "cycling", "movies",
  ]

  private var random: SplitMix64

  init(seed: UInt64 = 2014) { random = SplitMix64(seed: seed) }

  mutating func next() -> UInt64 { random.next() }

  mutating func pick<T>(_ values: [T]) -> T { values[Int(next() % UInt64(values.count))] }

  /// `count` seed-shaped documents as NDJSON lines (with ids `p0000000`…), each ending in a newline.
  mutating func people(_ count: Int, idPrefix: String = "p") -> [[UInt8]] {
    (0..<count).map { number in
      let object: JSONObject = [
        "_id": .string(BenchData.id(number, prefix: idPrefix)),
        "name": .string(pick(BenchData.names)), "age": .int(Int64(1 + next() % 90)),
        "docNumber": .int(Int64(number)), "pet": .string(pick(BenchData.pets)),
      ]
      return JSONWriter.bytes(.object(object)) + [10]
    }
  }

  /// Documents with an array field (`tags`, three pets) and a sentence (`comment`).
  mutating func profiles(_ count: Int) -> [[UInt8]] {
    (0..<count).map { number in
      let object: JSONObject = [
        "_id": .string(BenchData.id(number, prefix: "q")),
        "name": .string(pick(BenchData.names)),
        "tags": .array((0..<3).map { _ in .string(pick(BenchData.pets)) }),
        "comment": .string((0..<8).map { _ in pick(BenchData.words) }.joined(separator: " ")),
      ]
      return JSONWriter.bytes(.object(object)) + [10]
    }
  }

  /// The whole-process comparison's documents: seed-shaped, with `pet` an array of two
  /// strings in every seventh document and an 8-word `comment`.
  mutating func wholeProcess(_ count: Int) -> [JSONObject] {
    (0..<count).map { number in
      [
        "_id": .string(BenchData.id(number, prefix: "p")),
        "name": .string(pick(BenchData.names)), "age": .int(Int64(1 + next() % 90)),
        "docNumber": .int(Int64(number)),
        "pet": number % 7 == 0
          ? .array([.string(pick(BenchData.pets)), .string(pick(BenchData.pets))])
          : .string(pick(BenchData.pets)),
        "comment": .string((0..<8).map { _ in pick(BenchData.words) }.joined(separator: " ")),
      ]
    }
  }

  static func id(_ number: Int, prefix: String) -> String {
    let digits = String(number)
    return prefix + String(repeating: "0", count: max(0, 7 - digits.count)) + digits
  }
}
