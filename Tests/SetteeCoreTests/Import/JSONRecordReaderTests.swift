import SetteeCore
import Testing

@Suite("Streaming record reader")
struct JSONRecordReaderTests {
  /// Reads all records, feeding the input `chunkSize` bytes at a time.
  func records(_ text: String, chunkSize: Int, maxRecordBytes: Int = 1 << 20) throws
    -> [JSONRecordReader.Record]
  {
    var remaining = Array(text.utf8)[...]
    var reader = JSONRecordReader(maxRecordBytes: maxRecordBytes) {
      guard !remaining.isEmpty else { return nil }
      let chunk = Array(remaining.prefix(chunkSize))
      remaining = remaining.dropFirst(chunkSize)
      return chunk
    }
    var result: [JSONRecordReader.Record] = []
    while let record = try reader.next() { result.append(record) }
    return result
  }

  @Test(arguments: [1, 2, 3, 7, 64, 1 << 20])
  func splitsNDJSON(chunkSize: Int) throws {
    let text = "{\"a\":1}\n\n  {\"b\":\"x\\n]\"}\r\n{\"c\":[1,2]}  \n"
    let found = try records(text, chunkSize: chunkSize)
    #expect(
      found.map { String(decoding: $0.bytes, as: UTF8.self) } == [
        #"{"a":1}"#, #"{"b":"x\n]"}"#, #"{"c":[1,2]}"#,
      ])
    #expect(found.map(\.line) == [1, 3, 4])
    #expect(found.map(\.column) == [1, 3, 1])
    #expect(found.map(\.index) == [0, 1, 2])
  }

  @Test(arguments: [1, 2, 5, 1 << 20])
  func splitsAJSONArray(chunkSize: Int) throws {
    let text = """
      [
        {"a": "x,]}\\"", "b": [1, {"c": 2}]},
        {"d": 4}, 5,
        "six" ]
      """
    let found = try records(text, chunkSize: chunkSize)
    #expect(
      found.map { String(decoding: $0.bytes, as: UTF8.self) } == [
        #"{"a": "x,]}\"", "b": [1, {"c": 2}]}"#, #"{"d": 4}"#, "5", "\"six\"",
      ])
    #expect(found.map(\.line) == [2, 3, 3, 4])
  }

  @Test func readsEmptyInputs() throws {
    #expect(try records("", chunkSize: 4).isEmpty)
    #expect(try records(" \n\n", chunkSize: 4).isEmpty)
    #expect(try records("[ ]", chunkSize: 1).isEmpty)
  }

  @Test(arguments: ["[{\"a\":1}", "[{\"a\":1} {\"b\":2}]", "[1] 2", "[1,", "[{\"a\":\"]"])
  func reportsBrokenArrays(_ text: String) {
    // The reader finds the broken framing, or hands over a record the parser rejects.
    #expect {
      for record in try records(text, chunkSize: 3) { _ = try JSONParser.parse(record.bytes) }
    } throws: { ($0 as? SetteeError)?.code == .invalidJSON }
  }

  @Test func boundsRecordSize() {
    let text = "{\"a\":1}\n{\"b\":\"" + String(repeating: "x", count: 500) + "\"}\n"
    #expect {
      _ = try records(text, chunkSize: 16, maxRecordBytes: 100)
    } throws: { error in
      guard let error = error as? SetteeError else { return false }
      return error.code == .documentTooLarge && error.location?.line == 2
    }
  }
}
