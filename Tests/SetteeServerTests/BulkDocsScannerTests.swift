import SetteeCore
import SetteeServer
import Testing

/// The streaming reader of `_bulk_docs` bodies: the same events however the body is cut
/// into chunks, and every malformed body refused.
@Suite("_bulk_docs bodies read as they arrive")
struct BulkDocsScannerTests {
  /// What a body gives: the documents' texts parsed back, and the other members.
  private struct Read: Equatable {
    var documents: [JSON] = []
    var members: [String: JSON] = [:]
    var sawDocs = false
  }

  private func read(_ body: String, chunk: Int) throws -> Read {
    var scanner = BulkDocsScanner()
    var read = Read()
    let bytes = Array(body.utf8)
    var start = 0
    while start < bytes.count {
      let end = min(bytes.count, start + chunk)
      try scanner.feed(bytes[start..<end]) { event in
        switch event {
        case .docsBegin: read.sawDocs = true
        case .document(let text): read.documents.append(try BulkDocsScanner.parse(text))
        case .member(let name, let value): read.members[name] = value
        }
      }
      start = end
    }
    try scanner.finish()
    return read
  }

  @Test(arguments: [
    #"{"docs":[{"_id":"a","n":1},{"_id":"b","s":"x,y]}:\"q\""}]}"#,
    #" { "docs" : [ {"_id":"a","n":1} , {"_id":"b","s":"x,y]}:\"q\""} ] , "new_edits" : false } "#,
    #"{"new_edits":false,"docs":[{"_id":"a","n":1},{"_id":"b","s":"x,y]}:\"q\""}],"x":{"k":[1,{"a":":"}]}}"#,
  ])
  func sameEventsAtEveryCut(body: String) throws {
    let whole = try read(body, chunk: body.utf8.count)
    #expect(whole.sawDocs)
    #expect(whole.documents == [["_id": "a", "n": 1], ["_id": "b", "s": "x,y]}:\"q\""]])
    for chunk in 1...8 { #expect(try read(body, chunk: chunk) == whole) }
  }

  @Test func emptyObjectsAndArrays() throws {
    #expect(try read("{}", chunk: 1) == Read())
    #expect(try read(#"{"docs":[]}"#, chunk: 1) == Read(sawDocs: true))
    #expect(try read(#"{"docs":[{}],"new_edits":true}"#, chunk: 3).members == ["new_edits": true])
  }

  @Test(arguments: [
    "", "[]", "{", #"{"docs":[{"a":1}]"#, #"{"docs":[{"a":1},]}"#, #"{"docs":{"a":1}}"#,
    #"{"docs":[{"a":1}]}}"#, #"{"docs":[{"a":1}]} x"#, #"{"docs":[1 2]}"#, #"{docs:[]}"#,
    #"{"docs":[],"docs":[]}"#, #"{"new_edits":tru}"#, #"{"docs":[{"a":1}],}"#,
    #"{"docs" [{"a":1}]}"#, #"{"docs":[{"a":"1}]}"#,
  ])
  func malformedBodiesAreRefused(body: String) {
    for chunk in [1, 4, max(1, body.utf8.count)] {
      // A document's own grammar is the parser's: `read` parses each as the handler does.
      #expect(throws: (any Error).self) { try read(body, chunk: chunk) }
    }
  }
}
