import Settee
import SetteeCore
import SetteeTestSupport
import Testing

/// Every example of seed 000 ("Querying syntax", "Array fields", "Supported features" and
/// the features it lists as not supported yet), with the seed's documents.
@Suite("Seed 000 examples")
struct SeedExampleTests {
  let people: DocumentCollection

  init() throws {
    people = try Database(inMemoryWith: .init()).collection("people")
    try people.putAll(
      SampleData.seedPeople + [
        ["_id": "mike32", "pet": ["cat", "dog", "parrot"], "name": "mike", "age": 32]
      ])
  }

  func ids(_ selector: String, sort: String? = nil) throws -> [String] {
    var query = FindQuery(selector: try SelectorParser.parse(selector))
    if let sort { query.sort = try FindQuery.parseSort(JSONParser.parse(sort)) }
    let found = try people.find(query).map(\.id)
    // The reference must agree, order included.
    let all = try people.find(FindQuery())
    let expected = ReferenceQuery.find(
      all, selector: try JSONParser.parse(selector), sort: try sort.map { try JSONParser.parse($0) }
    )
    #expect(found == expected, "\(selector)")
    return sort == nil ? found.sorted() : found
  }

  @Test(
    arguments: [
      // Equality and comparisons
      (#"{"pet.species": "cat"}"#, ["fred23", "mike12"]),
      (#"{"age": {"$gt": 12}}"#, ["fred23", "mike32", "mike34"]),
      // Modulo, with the seed's truncation rule
      (#"{"age": {"$mod": [5, 4]}}"#, ["mike34"]),
      (#"{"age": {"$mod": [5.6, 4.2]}}"#, ["mike34"]),
      // Compound queries
      (#"{"name": "fred", "pet.species": "cat"}"#, ["fred23"]),
      (
        #"{"$or": [{"pet.species": {"$eq": "dog"}}, {"age": {"$lt": 30}}]}"#,
        ["fred23", "mike12", "mike34"]
      ),
      (
        #"{"$or": [{"pet.species": {"$eq": "dog"}}, {"$and": [{"age": {"$gt": 30}}, {"name": {"$eq": "mike"}}]}]}"#,
        ["mike32", "mike34"]
      ),
      // Array fields: any element matches; negation is the complement
      (#"{"pet": {"$eq": "cat"}}"#, ["mike32"]),
      (#"{"pet": {"$not": {"$eq": "cat"}}}"#, ["fred23", "mike12", "mike34"]),
      // Supported features
      (#"{"age": {"$lte": 23}}"#, ["fred23", "mike12"]),
      (#"{"age": {"$gte": 32}}"#, ["mike32", "mike34"]),
      (#"{"age": {"$lt": 23}}"#, ["mike12"]),
      (#"{"name": {"$ne": "mike"}}"#, ["fred23"]),
      (#"{"comment": {"$exists": false}}"#, ["mike32"]),
      (#"{"comment": {"$exists": true}}"#, ["fred23", "mike12", "mike34"]),
      (#"{"age": {"$in": [12, 23]}}"#, ["fred23", "mike12"]),
      (#"{"age": {"$nin": [12, 23]}}"#, ["mike32", "mike34"]),
      (#"{"pet": {"$size": 3}}"#, ["mike32"]),
      (#"{"name": "mike", "age": 12}"#, ["mike12"]),
      (#"{}"#, ["fred23", "mike12", "mike32", "mike34"]),
      // "Not supported yet" in the seed, supported here
      (#"{"pet": {"species": {"$eq": "cat"}}}"#, ["fred23", "mike12"]),
      (#"{"age": {"$gt": 7, "$lt": 14}}"#, ["mike12"]),
      (#"{"$nor": [{"name": "mike"}, {"age": 12}]}"#, ["fred23"]),
      (#"{"pet": {"$all": ["cat", "parrot"]}}"#, ["mike32"]),
      (#"{"pet": {"$elemMatch": {"$beginsWith": "par"}}}"#, ["mike32"]),
      (#"{"pet": {"$type": "array"}}"#, ["mike32"]),
      (#"{"pet": {"$type": "object"}}"#, ["fred23", "mike12", "mike34"]),
      (#"{"comment": {"$regex": "doc.or"}}"#, ["mike34"]),
      (#"{"pet": ["cat", "dog", "parrot"]}"#, ["mike32"]),
      (#"{"pet": ["cat", "dog"]}"#, []),
      (#"{"pet.0": "cat"}"#, ["mike32"]),
      (#"{"pet.1": "cat"}"#, []),
    ] as [(String, [String])])
  func selector(_ selector: String, _ expected: [String]) throws {
    #expect(try ids(selector) == expected, "\(selector)")
  }

  @Test func sortingProjectionSkipAndLimit() throws {
    let sort: [JSON] = [["name": "asc"], ["age": "desc"]]
    let sorted = try people.find([:], sort: sort)
    #expect(sorted.map(\.id) == ["fred23", "mike34", "mike32", "mike12"])
    let page = try people.find([:], skip: 1, limit: 2, sort: sort)
    #expect(page.map(\.id) == ["mike34", "mike32"])
    let projected = try people.find(["pet.species": "cat"], fields: ["name", "age"], sort: ["age"])
    #expect(projected.map(\.id) == ["mike12", "fred23"])
    #expect(projected[0].body == ["name": "mike", "age": 12])
    #expect(projected[0].rev != nil)
    // Dotted projection (the seed could not).
    let species = try people.find(["name": "fred"], fields: ["pet.species"])
    #expect(species[0].body == ["pet": ["species": "cat"]])
    // limit 0 means no limit.
    #expect(try people.find([:], limit: 0).count == 4)
  }

  @Test func skipTwentyLimitTen() throws {
    let many = try Database(inMemoryWith: .init()).collection()
    try many.putAll(SampleData.people(50))
    let page = try many.find([:], skip: 20, limit: 10, sort: ["docNumber"])
    #expect(page.map { $0["docNumber"] } == (20..<30).map { .int(Int64($0)) })
  }
}
