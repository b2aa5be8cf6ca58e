import SetteeCore
import SetteeTestSupport
import Testing

/// `Selector.json` parses back to a selector that matches exactly the same documents.
@Suite("Selectors as JSON")
struct SelectorJSONTests {
  @Test(arguments: 1...4)
  func randomSelectorsRoundTrip(_ seed: Int) throws {
    var random = RandomQueries(seed: UInt64(seed))
    let documents = (0..<60).map { JSON.object(random.document($0)) }
    for _ in 0..<300 {
      guard let selector = try? SelectorParser.parse(random.selector()) else { continue }
      let again = try SelectorParser.parse(selector.json)
      for document in documents {
        #expect(
          try Matcher.matches(selector, document) == Matcher.matches(again, document),
          "\(JSONWriter.string(selector.json))")
      }
    }
  }

  @Test(arguments: [
    #"{}"#, #"{"a": {"$elemMatch": {"$eq": 1}}}"#, #"{"a": {"$nor": [{"b": 1}]}}"#,
    #"{"a": {"$allMatch": {"b.c": {"$gt": 2}, "$exists": true}}}"#,
    #"{"a": {"$keyMapMatch": {"$regex": "^x"}}}"#, #"{"a\\.b": {"$mod": [3, 1]}}"#,
    #"{"$or": [{"a": null}, {"b": {"$type": "array", "$size": 2}}]}"#,
    #"{"a": {"$elemMatch": {"$and": [{"$gt": 1}, {"$lt": 5}]}}}"#,
  ])
  func shapesRoundTripExactly(_ text: String) throws {
    let selector = try SelectorParser.parse(JSONParser.parse(text))
    #expect(
      try SelectorParser.parse(selector.json) == selector, "\(JSONWriter.string(selector.json))")
  }
}
