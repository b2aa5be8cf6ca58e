import Settee
import SetteeCore
import SetteeTestSupport
import Testing

/// The SQL path against the reference matcher, on random documents and selectors.
@Suite("SQL path equals the matcher")
struct DifferentialTests {
  @Test(arguments: [1, 2, 3, 4] as [UInt64])
  func randomSelectorsAgree(seed: UInt64) throws {
    var generator = RandomQueries(seed: seed)
    let collection = try Database(inMemoryWith: .init()).collection("random")
    let documents = (0..<200).map { generator.document($0) }
    try collection.putAll(documents)
    let stored = try collection.find(FindQuery())
    #expect(stored.count == documents.count)

    for round in 0..<300 {
      let selectorJSON = generator.selector()
      let text = JSONWriter.string(selectorJSON)
      let selector: Selector
      do {
        selector = try SelectorParser.parse(selectorJSON)
      } catch {
        Issue.record("generated an invalid selector \(text): \(error)")
        continue
      }
      var query = FindQuery(selector: selector)
      if round % 3 == 0 {
        query.sort = try FindQuery.parseSort(generator.sort())
        query.skip = Int(generator.random.next() % 3)
        query.limit = Int(generator.random.next() % 20)
      }
      let expected = Matcher.find(query, in: stored).map(\.id)
      let actual: [String]
      do {
        actual = try collection.find(query).map(\.id)
      } catch {
        Issue.record("SQL failed for \(text): \(error)")
        continue
      }
      if query.sort.isEmpty && query.limit == 0 {
        #expect(Set(actual) == Set(expected), "selector \(text)")
        #expect(try collection.count(query) == expected.count, "count \(text)")
      } else {
        #expect(actual == expected, "selector \(text) sort \(query.sort)")
      }
    }
  }
}
