import Foundation
import Settee
import SetteeTestSupport
import Testing

/// Seed 002's and seed 001's examples, written in Swift.
@Suite("Views: the seeds' examples")
struct SeedViewTests {
  let db: Database

  init() throws { db = try Database(inMemoryWith: .init()) }

  /// Seed 002, "Creating Views": Grocery Sync's by-date view emits the document.
  @Test func theByDateViewOrdersByDateAndIgnoresOtherDocuments() throws {
    let items = db.collection("groceries")
    try items.putAll([
      ["_id": "milk", "text": "milk", "created_at": "2014-03-02T10:00:00Z"],
      ["_id": "eggs", "text": "eggs", "created_at": "2014-03-01T09:00:00Z"],
      ["_id": "safeway", "type": "store", "name": "Safeway"],
    ])
    let byDate = try items.view("byDate", version: "1.0") { doc, emit in
      if let date = doc["created_at"] { emit(date, .object(doc.json)) }
    }
    let all = try byDate.query()
    #expect(all.rows.map(\.id) == ["eggs", "milk"])
    #expect(all.rows[0].value["text"] == "eggs")
    #expect(all.totalRows == 2)
    // The ten latest: descending, limit.
    let latest = try byDate.query(ViewQuery(descending: true, limit: 10))
    #expect(latest.rows.map(\.id) == ["milk", "eggs"])
    // A date range.
    let march2 = try byDate.query(
      ViewQuery(startKey: "2014-03-02", endKey: "2014-03-03"))
    #expect(march2.rows.map(\.id) == ["milk"])
  }

  /// Seed 002, "Example: An Address Book": one row per phone number of a card.
  @Test func phoneNumbersEmitOneRowEach() throws {
    let cards = db.collection("cards")
    try cards.put(
      try JSONParser.parse(
        #"{"_id": "bob", "first": "Bob", "last": "Dobbs", "phone": {"home": "408-555-1212", "cell": "408-555-3774", "work": "650-555-8333"}}"#
      ).objectValue!)
    try cards.put(["_id": "ann", "first": "Ann", "phone": ["cell": "650-555-0001"]])
    // In Swift…
    let byPhone = try cards.view("byPhone", version: "1") { doc, emit in
      for number in doc["phone"]?.objectValue?.map(\.value) ?? [] {
        emit(number, [doc["first"], doc["last"]])
      }
    }
    let caller = try byPhone.query(ViewQuery(key: "650-555-8333"))
    #expect(caller.rows.map(\.id) == ["bob"] && caller.rows[0].value == ["Bob", "Dobbs"])
    #expect(try byPhone.query().rows.count == 4)
    // …and declared, as the command line would.
    let declared = try cards.defineView(
      json: JSONParser.parse(
        #"{"name": "phones", "key": "phone", "each": true, "value": ["first", "last"]}"#))
    let rows = try declared.query().rows
    #expect(rows.map(\.key) == ["408-555-1212", "408-555-3774", "650-555-0001", "650-555-8333"])
    #expect(rows.last?.value == ["Bob", "Dobbs"])
    #expect(rows[2].value == ["Ann", nil])
  }

  static let groceries: [JSONObject] = [
    ["_id": "1", "store": "Safeway", "item": "tonic water", "price": 3],
    ["_id": "2", "store": "Safeway", "item": "goldfish crackers", "price": 2],
    ["_id": "3", "store": "Trader Joe's", "item": "chocolate chip cookies", "price": 4],
    ["_id": "4", "store": "Whole Foods", "item": "cruelty-free chakra lotion", "price": 12],
    ["_id": "5", "store": "Safeway", "item": "tonic water", "price": 3.5],
  ]

  /// Seed 002, "Compound Keys" and "Compound-Key Ranges": the Safeway items between
  /// `["Safeway"]` and `["Safeway", {}]`; with `_sum`, totals per store by group level.
  @Test func storeAndItemCompoundKeys() throws {
    let items = db.collection("items")
    try items.putAll(Self.groceries)
    let byStore = try items.view("byStoreItem", version: "1", reduce: .sum) { doc, emit in
      emit([doc["store"], doc["item"]], doc["price"] ?? nil)
    }
    let safeway = try byStore.query(
      ViewQuery(startKey: ["Safeway"], endKey: ["Safeway", [:]], reduce: false))
    #expect(
      safeway.rows.map(\.key) == [
        ["Safeway", "goldfish crackers"], ["Safeway", "tonic water"], ["Safeway", "tonic water"],
      ])
    let total = try byStore.query()
    #expect(total.rows.count == 1 && total.rows[0].value == 24.5 && total.rows[0].key == nil)
    let perStore = try byStore.query(ViewQuery(groupLevel: 1))
    #expect(perStore.rows.map(\.key) == [["Safeway"], ["Trader Joe's"], ["Whole Foods"]])
    #expect(perStore.rows.map(\.value) == [8.5, 4, 12])
    let perItem = try byStore.query(ViewQuery(group: true))
    #expect(perItem.rows.count == 4)
    #expect(perItem.rows[1].key == ["Safeway", "tonic water"] && perItem.rows[1].value == 6.5)
    // The same view, declared.
    let declared = try items.defineView(
      json: JSONParser.parse(
        #"{"name": "totals", "key": ["store", "item"], "value": "price", "reduce": "_sum"}"#))
    #expect(try declared.query(ViewQuery(groupLevel: 1)).rows == perStore.rows)
  }

  static let songs: [JSONObject] = [
    ["_id": "s1", "name": "Life in Technicolor", "album": "Viva la Vida", "artist": "Coldplay"],
    ["_id": "s2", "name": "Viva la Vida", "album": "Viva la Vida", "artist": "Coldplay"],
    ["_id": "s3", "name": "Square One", "album": "X&Y", "artist": "Coldplay"],
    ["_id": "s4", "name": "What If", "album": "X&Y", "artist": "Coldplay"],
    ["_id": "s5", "name": "Viva la Vida", "album": "Viva la Vida", "artist": "Someone Else"],
  ]

  /// Seed 001, "Extended example": songs by album and artist, two indexes in one query.
  @Test func coldplaySongsByAlbumAndArtist() throws {
    let music = db.collection("songs")
    try music.putAll(Self.songs)
    let indexes = music.valueIndexes
    try indexes.define("album", field: "album")
    try indexes.define("artist", field: "artist")
    let songs = try indexes.documents(matching: ["artist": "Coldplay", "album": "Viva la Vida"])
    #expect(songs.map { $0["name"] } == ["Life in Technicolor", "Viva la Vida"])
    // Exact terms only, as the seed says.
    #expect(try indexes.documents(matching: ["artist": "coldplay"]).isEmpty)
    #expect(try indexes.names() == ["album", "artist"])
  }

  /// Seed 001, "Querying" and "Query options": min, max, both, lists, sort, offset, limit.
  @Test func ageQueriesWithMinMaxAndPaging() throws {
    let people = db.collection("people")
    try people.putAll(
      (20..<40).map { age in
        [
          "_id": .string("p\(age)"), "firstname": age % 2 == 0 ? "John" : "Jane",
          "age": .int(Int64(age)),
        ]
      })
    let indexes = people.valueIndexes
    try indexes.define("default", field: "firstname")
    try indexes.define("age", field: "age", type: .integer)
    func ages(_ documents: [Document]) -> [Int] { documents.compactMap { $0["age"]?.intValue } }
    #expect(
      ages(try indexes.documents(matching: ["age": .atMost(22)], sortedBy: "age")) == [20, 21, 22])
    #expect(
      ages(try indexes.documents(matching: ["age": .atLeast(37)], sortedBy: "age")) == [37, 38, 39])
    #expect(
      ages(try indexes.documents(matching: ["age": .between(26, 28)], sortedBy: "age")) == [
        26, 27, 28,
      ])
    #expect(
      ages(try indexes.documents(matching: ["age": .oneOf([21, 30, 99])], sortedBy: "age")) == [
        21, 30,
      ])
    #expect(ages(try indexes.documents(matching: ["age": 25])) == [25])
    #expect(
      ages(
        try indexes.documents(
          matching: ["default": "John", "age": .atLeast(26)], sortedBy: "age", descending: true))
        == [38, 36, 34, 32, 30, 28, 26])
    // Paging, 3 at a time.
    var pages: [[Int]] = []
    var offset = 0
    while true {
      let page = try indexes.documents(
        matching: ["age": .atLeast(26)], sortedBy: "age", offset: offset, limit: 5)
      if page.isEmpty { break }
      pages.append(ages(page))
      offset += 5
    }
    #expect(pages == [[26, 27, 28, 29, 30], [31, 32, 33, 34, 35], [36, 37, 38, 39]])
    // The seed's JSON shapes.
    #expect(try ValueIndexes.Condition(json: JSONParser.parse(#"{"min": 26}"#)) == .atLeast(26))
    #expect(
      try ValueIndexes.Condition(json: JSONParser.parse(#"{"min": 1, "max": 2}"#)) == .between(1, 2)
    )
    #expect(try ValueIndexes.Condition(json: JSONParser.parse("[1, 2]")) == .oneOf([1, 2]))
    expectError(.invalidQuery) {
      _ = try ValueIndexes.Condition(json: JSONParser.parse(#"{"low": 1}"#))
    }
  }

  /// Seed 001, "Unique Values" and "Indexers": categories of blog articles, from a Swift
  /// indexer returning several values; deleting and redefining an index.
  @Test func uniqueCategoriesFromASwiftIndexer() throws {
    let blog = db.collection("blog")
    try blog.putAll([
      ["_id": "a1", "categories": ["swift", "databases"]],
      ["_id": "a2", "categories": ["databases"]],
      ["_id": "a3", "categories": ["cooking", "swift"]],
      ["_id": "a4", "title": "no categories"],
    ])
    let indexes = blog.valueIndexes
    try indexes.define("category", type: .string, version: "1") { doc in
      doc["categories"]?.arrayValue ?? []
    }
    #expect(try indexes.uniqueValues(of: "category") == ["cooking", "databases", "swift"])
    #expect(try indexes.documentIDs(matching: ["category": "swift"]) == ["a1", "a3"])
    // Updated at query time.
    try blog.put(["_id": "a5", "categories": ["travel"]])
    #expect(
      try indexes.uniqueValues(of: "category") == ["cooking", "databases", "swift", "travel"])
    // Delete, then redefine over another field.
    try indexes.delete("category")
    expectError(.notFound) { _ = try indexes.uniqueValues(of: "category") }
    try indexes.define("category", field: "title")
    #expect(try indexes.uniqueValues(of: "category") == ["no categories"])
  }
}
