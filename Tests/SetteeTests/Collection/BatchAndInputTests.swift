import Settee
import SetteeCore
import SetteeTestSupport
import Testing

@Suite("Batches and bad input")
struct BatchAndInputTests {
  let people: DocumentCollection

  init() throws {
    people = try Database(
      inMemoryWith: .init(limits: DocumentLimits(maxDocumentBytes: 1000, maxNestingDepth: 10))
    )
    .collection("people")
  }

  @Test func aBatchIsOneTransaction() throws {
    let results = try people.putAll(SampleData.people(100))
    #expect(results.count == 100)
    #expect(try people.count() == 100)
    #expect(Set(results.map(\.seq)) == Set(1...100))
  }

  /// A batch with one bad document anywhere writes nothing, and the error names it.
  @Test(arguments: [
    (["_id": "doc-0000001"] as JSONObject, SetteeError.Code.conflict),  // already exists
    (["_id": ""] as JSONObject, .invalidID),
    (["_bad": 1] as JSONObject, .reservedField),
    (["text": .string(String(repeating: "x", count: 2000))] as JSONObject, .documentTooLarge),
    (["_id": "fresh", "_rev": "1-abc"] as JSONObject, .conflict),
  ])
  func aBadDocumentWritesNothing(_ bad: JSONObject, _ code: SetteeError.Code) throws {
    try people.putAll(SampleData.people(3))
    var batch = Array(SampleData.people(10)[3...])
    batch.insert(bad, at: 4)
    #expect {
      try people.putAll(batch)
    } throws: { error in
      guard let error = error as? SetteeError else { return false }
      return error.code == code && error.location?.record == 4
    }
    #expect(try people.count() == 3)
    #expect(try people.lastSequence() == 3)
    #expect(try people.get(SampleData.id(5)) == nil)
  }

  /// Bad input through import: a clear typed error with its line, and nothing written.
  @Test(arguments: [
    ("{\"a\":1}\n{\"a\":\n", SetteeError.Code.invalidJSON, 2),
    ("{\"a\":1}\n[1,2]\n", .invalidDocument, 2),
    ("{\"a\":1}\n{\"a\":2}\n\"text\"\n", .invalidDocument, 3),
    ("{\"_id\":7}\n", .invalidID, 1),
    ("{\"_id\":\"_x\"}\n", .invalidID, 1),
    ("{\"a\":1}\n{\"_private\":1}\n", .reservedField, 2),
    (
      "{\"a\":" + String(repeating: "[", count: 20) + String(repeating: "]", count: 20) + "}\n",
      .nestingTooDeep, 1
    ),
    ("{\"a\":\"" + String(repeating: "y", count: 1200) + "\"}\n", .documentTooLarge, 1),
    ("{\"a\":1}\n{\"a\":1,\"a\":2}\n", .invalidJSON, 2),
    ("[{\"a\":1},\n{\"a\":\n]", .invalidJSON, 2),
  ])
  func badInputIsATypedErrorAndWritesNothing(_ input: String, _ code: SetteeError.Code, _ line: Int)
    throws
  {
    var chunks = [Array(input.utf8)].makeIterator()
    var reader = JSONRecordReader(maxRecordBytes: 1 << 20) { chunks.next() }
    #expect {
      try people.importDocuments(from: &reader)
    } throws: { error in
      guard let error = error as? SetteeError else { return false }
      return error.code == code && error.location?.line == line
    }
    #expect(try people.count() == 0)
    #expect(try people.lastSequence() == 0)
  }
}
