import Settee
import SetteeCore
import SetteeTestSupport
import Testing

/// Seed 000's "Indexing for text search" and "Text search", and beyond its restrictions.
@Suite("Full-text search")
struct TextSearchTests {
  let db: Database
  let people: DocumentCollection

  init() throws {
    db = try Database(inMemoryWith: .init())
    people = db.collection("people")
    try people.putAll(SampleData.seedPeople)
  }

  func search(_ selector: String, sort: String? = nil) throws -> [String] {
    var query = try FindQuery(json: JSONParser.parse(#"{"selector": \#(selector)}"#))
    if let sort { query.sort = try FindQuery.parseSort(JSONParser.parse(sort)) }
    let ids = try people.find(query).map(\.id)
    return sort == nil ? ids.sorted() : ids
  }

  @Test func theSeedExamples() throws {
    #expect(db.isTextSearchEnabled)
    #expect(
      try people.ensureIndexed(["name", "comment"], name: "basic_text_index", type: .text)
        == "basic_text_index")
    #expect(try search(#"{"$text": {"$search": "doctor books"}}"#) == ["mike34"])
    #expect(try search(#"{"$text": {"$search": "\"is a doctor\""}}"#) == ["mike34"])
    #expect(try search(#"{"$text": {"$search": "doc*"}}"#) == ["mike34"])
    #expect(
      try people.listIndexes()["basic_text_index"] == [
        "fields": ["name", "comment"], "type": "text", "name": "basic_text_index",
        "settings": "{tokenize: simple}",
      ])
  }

  @Test func porterStemsAndSimpleDoesNot() throws {
    try people.put(["_id": "goran", "comment": "Goran retired from the navy"])
    try people.ensureIndexed(["comment"], name: "t", type: .text, settings: ["tokenize": "porter"])
    #expect(try search(#"{"$text": {"$search": "retire"}}"#) == ["goran"])
    try people.deleteIndex(named: "t")
    try people.ensureIndexed(["comment"], name: "t", type: .text)
    #expect(try search(#"{"$text": {"$search": "retire"}}"#) == [])
    #expect(try search(#"{"$text": {"$search": "retired"}}"#) == ["goran"])
  }

  @Test(arguments: [
    ("doctor books", ["mike34"]),
    ("BOOKS", ["mike12", "mike34"]),
    ("books OR startup", ["fred23", "mike12", "mike34"]),
    ("books AND school", ["mike12"]),
    ("books NOT doctor", ["mike12"]),
    ("(doctor OR startup) AND mike", ["mike34"]),
    ("mike NEAR doctor", ["mike34"]),
    ("mike NEAR/1 doctor", []),
    ("mike NEAR/2 doctor", ["mike34"]),
    ("comment:fred", ["fred23"]),
    ("name:fred", ["fred23"]),
    ("name:books", []),
    ("_id:mike*", ["mike12", "mike34"]),
    ("_id:fred23", ["fred23"]),
    ("\"reading books\"", ["mike12", "mike34"]),
    ("\"books reading\"", []),
    ("read*", ["mike12", "mike34"]),
  ])
  func syntax(_ search: String, _ expected: [String]) throws {
    try people.ensureIndexed(["name", "comment"], name: "t", type: .text)
    #expect(
      try self.search(#"{"$text": {"$search": \#(JSONWriter.string(.string(search)))}}"#)
        == expected, "\(search)")
  }

  @Test func nonASCIIText() throws {
    try people.putAll([
      ["_id": "lea", "comment": "Léa étudie la médecine à Lyon."],
      ["_id": "nour", "comment": "نور مهندسة معمارية تحب القطط"],
      ["_id": "taro", "comment": "太郎は東京でラーメン屋を営んでいます。"],
    ])
    try people.ensureIndexed(["comment"], name: "t", type: .text)
    #expect(try search(#"{"$text": {"$search": "LÉA"}}"#) == ["lea"])
    #expect(try search(#"{"$text": {"$search": "medecine"}}"#) == ["lea"])
    #expect(try search(#"{"$text": {"$search": "\"étudie la médecine\""}}"#) == ["lea"])
    #expect(try search(#"{"$text": {"$search": "القطط"}}"#) == ["nour"])
    #expect(try search(#"{"$text": {"$search": "\"مهندسة معمارية\""}}"#) == ["nour"])
    #expect(try search(#"{"$text": {"$search": "東京"}}"#) == ["taro"])
    #expect(try search(#"{"$text": {"$search": "ラーメン"}}"#) == ["taro"])
    #expect(try search(#"{"$text": {"$search": "京東"}}"#) == [])
  }

  @Test func combinesWithOtherClausesIndexedOrNot() throws {
    try people.ensureIndexed(["comment"], name: "t", type: .text)
    try people.ensureIndexed(["age"], name: "age")
    #expect(try search(#"{"$text": {"$search": "books"}, "age": {"$gt": 20}}"#) == ["mike34"])
    #expect(try search(#"{"$text": {"$search": "books"}, "pet.species": "cat"}"#) == ["mike12"])
    #expect(
      try search(#"{"$or": [{"$text": {"$search": "startup"}}, {"age": 12}]}"#) == [
        "fred23", "mike12",
      ])
    #expect(
      try search(#"{"$and": [{"name": "mike"}, {"$text": {"$search": "doctor"}}]}"#) == ["mike34"])
    #expect(try search(#"{"$not": {"$text": {"$search": "books"}}}"#) == ["fred23"])
    #expect(
      try people.count(
        FindQuery(selector: SelectorParser.parse(#"{"$text": {"$search": "books"}}"#))) == 2)
  }

  @Test func relevanceOrdersResults() throws {
    try people.putAll([
      ["_id": "books3", "comment": "books books books"],
      [
        "_id": "books1",
        "comment": "a long sentence that mentions books once among many other words here",
      ],
    ])
    try people.ensureIndexed(["comment"], name: "t", type: .text)
    let ranked = try search(#"{"$text": {"$search": "books"}}"#, sort: #"[{"$relevance": "desc"}]"#)
    #expect(ranked.first == "books3")
    #expect(ranked.last == "books1")
    #expect(Set(ranked) == ["books3", "books1", "mike12", "mike34"])
  }

  @Test func updatesAndDeletesLeaveNoStaleHits() throws {
    try people.ensureIndexed(["comment"], name: "t", type: .text)
    let fred = try #require(try people.get("fred23"))
    var changed = fred.json
    changed["comment"] = "Fred now teaches yoga."
    try people.put(changed)
    #expect(try search(#"{"$text": {"$search": "startup"}}"#) == [])
    #expect(try search(#"{"$text": {"$search": "yoga"}}"#) == ["fred23"])
    try people.delete("fred23", rev: try people.get("fred23")!.rev!)
    #expect(try search(#"{"$text": {"$search": "yoga"}}"#) == [])
    try people.put(["_id": "fred23", "comment": "Fred is back, doing yoga"])
    #expect(try search(#"{"$text": {"$search": "yoga"}}"#) == ["fred23"])
  }

  @Test func indexesNonStringsArraysAndDottedFields() throws {
    try people.putAll([
      [
        "_id": "tagged", "tags": ["alpha", "beta"], "score": 42, "flag": true,
        "pet": ["species": "axolotl"],
      ]
    ])
    try people.ensureIndexed(["tags", "score", "flag", "pet.species"], name: "t", type: .text)
    #expect(try search(#"{"$text": {"$search": "beta"}}"#) == ["tagged"])
    #expect(try search(#"{"$text": {"$search": "42"}}"#) == ["tagged"])
    #expect(try search(#"{"$text": {"$search": "flag:true"}}"#) == ["tagged"])
    #expect(try search(#"{"$text": {"$search": "pet.species:axolotl"}}"#) == ["tagged"])
    #expect(try search(#"{"$text": {"$search": "cat"}}"#) == ["fred23", "mike12"])
  }

  @Test(arguments: [
    (#"{"$text": {"$search": "books"}}"#, "noUsableIndex", false),
    (#"{"$text": {"$search": 42}}"#, "invalidQuery", true),
    (#"{"$text": "books"}"#, "invalidQuery", true),
    (
      #"{"$and": [{"$text": {"$search": "a"}}, {"$text": {"$search": "b"}}]}"#, "invalidQuery", true
    ),
    (#"{"$text": {"$search": "\"open"}}"#, "invalidQuery", true),
    (#"{"$text": {"$search": "(a"}}"#, "invalidQuery", true),
    (#"{"$text": {"$search": "nofield:x"}}"#, "invalidQuery", true),
    (#"{"$text": {"$search": "  ,. "}}"#, "invalidQuery", true),
    (#"{"name": {"$text": {"$search": "x"}}}"#, "invalidQuery", true),
  ])
  func badTextQueriesAreTypedErrors(_ selector: String, _ code: String, _ withIndex: Bool) throws {
    if withIndex { try people.ensureIndexed(["comment"], name: "t", type: .text) }
    #expect {
      _ = try search(selector)
    } throws: { error in
      (error as? SetteeError)?.code.description == code
    }
  }

  @Test func oneTextIndexPerCollectionAndCheckedSettings() throws {
    try people.ensureIndexed(["comment"], name: "t", type: .text)
    #expect(throws: SetteeError.self) {
      try people.ensureIndexed(["name"], name: "t2", type: .text)
    }
    #expect(throws: SetteeError.self) {
      try people.ensureIndexed(["name"], name: "j", settings: ["tokenize": "porter"])
    }
    #expect(throws: SetteeError.self) {
      try people.ensureIndexed(["name"], name: "x", type: .text, settings: ["tokenize": "icu"])
    }
    #expect(throws: SetteeError.self) {
      try people.ensureIndexed(["name"], name: "x", type: .text, settings: ["other": "1"])
    }
    try people.deleteIndex(named: "t")
    try people.ensureIndexed(["name"], name: "t2", type: .text)
  }
}
