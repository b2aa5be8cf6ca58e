import Settee
import SetteeCore
import SetteeTestSupport
import Testing

/// Index definitions are kept in memory between queries; two `Database` values on one file
/// stand for two processes, so every change one makes must be seen by the other's next
/// query.
@Suite("Index lists kept between queries")
struct IndexCatalogTests {
  let directory = TemporaryDirectory()

  func open() throws -> (Database, Database) {
    let path = directory.path("shared.db")
    return (try Database(path: path), try Database(path: path))
  }

  func ids(_ documents: [Document]) -> [String] { documents.map(\.id).sorted() }

  @Test func anIndexReplacedElsewhereIsSeenByTheNextQuery() throws {
    let (first, second) = try open()
    let people = first.collection("people")
    try people.putAll([
      ["_id": "a", "name": "mike", "age": 30], ["_id": "b", "name": "anna", "age": 30],
      ["_id": "c", "name": "mike", "age": 40],
    ])
    try people.ensureIndexed(["name"], name: "by")
    let byName = FindQuery(selector: try SelectorParser.parse(#"{"name": "mike"}"#))
    let byAge = FindQuery(selector: try SelectorParser.parse(#"{"age": 30}"#))
    #expect(ids(try people.find(byName)) == ["a", "c"])
    #expect(try people.explain(byName).indexes == ["by"])

    // The other "process" replaces the index with one of the same name on another field.
    let other = second.collection("people")
    try other.deleteIndex(named: "by")
    try other.ensureIndexed(["age"], name: "by")

    #expect(try people.explain(byName).indexes == [])
    #expect(try people.explain(byAge).indexes == ["by"])
    #expect(ids(try people.find(byAge)) == ["a", "b"])
    #expect(ids(try people.find(byName)) == ["a", "c"])
    #expect(try people.indexes().map(\.fields) == [[try FieldPath(parsing: "age")]])
  }

  @Test func arrayValuesWrittenElsewhereStopExactIndexReads() throws {
    // With scalar values only, an index decides its conditions exactly; once another
    // process writes an array into the field, entries no longer stand for whole values.
    let (first, second) = try open()
    let items = first.collection("items")
    try items.putAll([["_id": "1", "tags": "red"], ["_id": "2", "tags": "blue"]])
    try items.ensureIndexed(["tags"], name: "tags")
    let selector = try JSONParser.parse(#"{"tags": {"$gt": "m", "$lt": "c"}}"#)
    let query = FindQuery(selector: try SelectorParser.parse(selector))
    #expect(ids(try items.find(query)) == [])

    // ["a", "z"] matches: one element is above "m", another below "c". No single entry
    // satisfies both conditions, so an index still read as exact would miss it.
    try second.collection("items").put(["_id": "3", "tags": ["a", "z"]])
    let expected = ReferenceQuery.find(try items.find(FindQuery()), selector: selector)
    #expect(expected == ["3"])
    #expect(ids(try items.find(query)) == expected)
  }

  @Test func aRolledBackIndexIsNeverRemembered() throws {
    let (database, _) = try open()
    let people = database.collection("people")
    try people.putAll([
      ["_id": "a", "name": "mike", "age": 30], ["_id": "b", "name": "anna", "age": 31],
    ])
    try people.ensureIndexed(["name"], name: "name")
    #expect(
      try people.find(FindQuery(selector: try SelectorParser.parse(#"{"name": "mike"}"#))).count
        == 1)
    // An index whose build fails (two array fields whose elements multiply past the limit
    // of entries per document) rolls back; the index of the same name made next must be
    // the one queries use.
    let many = JSON.array((0..<1_000).map { .int(Int64($0)) })
    try people.put(["_id": "c", "name": "zoe", "age": 32, "x": many, "y": many])
    #expect(throws: SetteeError.self) { try people.ensureIndexed(["x", "y"], name: "n") }
    try people.ensureIndexed(["age"], name: "n")
    let query = FindQuery(selector: try SelectorParser.parse(#"{"age": {"$gte": 31}}"#))
    #expect(try people.explain(query).indexes == ["n"])
    #expect(ids(try people.find(query)) == ["b", "c"])
  }
}
