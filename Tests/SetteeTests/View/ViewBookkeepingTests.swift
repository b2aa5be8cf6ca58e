import Foundation
import GRDB
import Settee
import SetteeCore
import SetteeTestSupport
import Testing

/// A view keeps, beside its rows, how many it has and how many hold a value that is not a
/// number (which lets `_sum` and `_stats` skip checking each value's type). Catch-ups
/// change both as they delete and map rows again; after each, they must equal what the
/// rows themselves say.
@Suite("Views: row counts kept by catch-ups")
struct ViewBookkeepingTests {
  let directory = TemporaryDirectory()

  /// Definitions mapped in SQL (key alone, a field value, several fields) and in Swift
  /// (`each`, a filter).
  static let definitions: [JSON] = [
    ["name": "v", "key": "k"],
    ["name": "v", "key": "k", "value": "x"],
    ["name": "v", "key": ["k", "x"], "value": ["x", "k"]],
    ["name": "v", "key": "tags", "each": true, "value": "x"],
    ["name": "v", "key": "k", "value": "x", "filter": ["k": ["$exists": true]]],
  ]

  /// Values of `x` that are numbers, and ones that are not (null, text, arrays, objects,
  /// missing).
  static let values: [JSON?] = [1, 2.5, -3, nil, .null, "text", "", [1, 2], ["a": 1], 0]

  @Test(arguments: definitions.indices)
  func countsEqualTheRowsAfterEachCatchUp(_ index: Int) throws {
    let path = directory.path("bookkeeping-\(index).db")
    let database = try Database(path: path)
    let collection = database.collection()
    let view = try collection.defineView(json: Self.definitions[index])
    var generator = RandomQueries(seed: UInt64(index) + 7)
    func document(_ number: Int) -> JSONObject {
      var object: JSONObject = ["_id": .string("d\(number)"), "k": .int(Int64(number % 5))]
      if let x = generator.pick(Self.values) { object["x"] = x }
      object["tags"] = generator.chance(50) ? ["a", "b"] : ["c"]
      return object
    }
    try collection.putAll((0..<40).map { document($0) })
    for round in 0..<6 {
      try view.update()
      let stored = try DatabaseQueue(path: path).read { db in
        try Row.fetchOne(
          db, sql: "SELECT vid, total_rows, other_values FROM views WHERE name = 'v'")!
      }
      let vid: Int64 = stored[0]
      let actual = try DatabaseQueue(path: path).read { db in
        try Row.fetchOne(
          db,
          sql: """
            SELECT count(*), count(CASE WHEN value IS NULL OR typeof(value) = 'text' THEN 1 END)
            FROM "vw_\(vid)"
            """)!
      }
      #expect(stored[1] as Int == actual[0] as Int, "round \(round): rows")
      #expect(stored[2] as Int == actual[1] as Int, "round \(round): values not numbers")
      #expect(try view.query().totalRows == actual[0] as Int)
      // Change a third of the documents (values change type), delete a few, add some.
      for number in 0..<40 where generator.chance(33) {
        guard let current = try collection.get("d\(number)") else { continue }
        var changed = document(number)
        changed["_rev"] = .string(try #require(current.rev).description)
        try collection.put(changed)
      }
      for number in 0..<40 where generator.chance(5) {
        if let current = try collection.get("d\(number)") { try collection.delete(current) }
      }
      try collection.putAll((0..<3).map { document(100 + round * 3 + $0) })
    }
  }
}
