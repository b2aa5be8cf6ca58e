import SetteeCore
import SetteeReplication
import Testing

/// The replicator reads `_bulk_get` answers by their frame only: each `ok` document's text
/// exactly as sent, each `error` parsed, anything else skipped; a text that is not such an
/// answer is refused (then the replication reports a bad answer and retries).
@Suite("_bulk_get answers read by their frame")
struct BulkGetAnswerTests {
  @Test func keepsDocumentsAsSentAndReadsErrors() throws {
    let doc1 = #"{"_id":"a","_rev":"1-x","n":[1,{"k":"v, ]}"}],"s":"\"q\""}"#
    let doc2 = #"{ "_id" : "b" , "_revisions" : { "start" : 1 , "ids" : [ "y" ] } }"#
    let text = """
      { "results" : [
        {"id":"a","docs":[{"ok":\(doc1)}],"extra":{"x":[1,2]}},
        {"docs":[ {"ok" : \(doc2) } , {"error":{"id":"c","rev":"1-z","error":"not_found","reason":"missing"}} ], "id":"b"}
      ], "other": true }
      """
    let answer = try #require(BulkGetAnswer(Array(text.utf8)))
    #expect(answer.documents.map { String(decoding: $0, as: UTF8.self) } == [doc1, doc2])
    #expect(answer.errors.count == 1 && answer.errors[0]["error"] == "not_found")
    #expect(BulkGetAnswer(Array(#"{"results":[]}"#.utf8))?.documents == [])
    #expect(BulkGetAnswer(Array("{}".utf8))?.documents == [])
  }

  @Test(arguments: [
    "", "[]", #"{"results":{}}"#, #"{"results":[{"docs":[{"ok":1}]}]}"#,
    #"{"results":[{"docs":[{"ok":{"a":1}}]}"#, #"{"results":[{"docs":[{"ok":{"a":1}]}]}"#,
    #"{"results":[{"docs":[{"error":"x"}]}]}"#, #"{"results":[]} trailing"#,
    #"{"results":[{"docs":[{"ok":{"a":"unterminated}]}]}"#, #"{results:[]}"#,
  ])
  func refusesWhatIsNotAnAnswer(text: String) {
    #expect(BulkGetAnswer(Array(text.utf8)) == nil, "\(text)")
  }
}

/// The replicator skips parsing a `_bulk_docs` answer that refuses nothing, and only that.
@Suite("_bulk_docs answers that refuse nothing")
struct BulkDocsAnswerTests {
  @Test(arguments: [
    ("[]", true), (" [ ] \n", true), (#"[{"ok":true,"id":"a","rev":"1-x"}]"#, true),
    (#"[{"id":"say \"error\"","rev":"1-x"}]"#, true),
    (#"[{"id":"a","error":"forbidden","reason":"no"}]"#, false),
    (#"[{"id":"error","rev":"1-x"}]"#, false), (#"{"error":"bad_request"}"#, false),
    ("", false), ("[", false), (#"["error"]"#, false),
  ])
  func onlyAnArrayWithoutAnErrorIsSkipped(text: String, skipped: Bool) {
    #expect(Array(text.utf8).withUnsafeBytes(BulkDocsAnswer.refusesNothing) == skipped, "\(text)")
  }
}
