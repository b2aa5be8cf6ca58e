import Foundation
import SetteeCore
import SetteeTestSupport
import Testing

@Suite("Documents read from their text")
struct EncodedDocumentTests {
  /// What the slow path makes of `text`: the document and its stored body, or nil for an
  /// error.
  func parsed(_ text: [UInt8], _ limits: DocumentLimits = .default) -> EncodedDocument?? {
    guard let json = try? JSONParser.parse(text, maxDepth: limits.maxNestingDepth),
      let document = try? Document(validating: json, limits: limits),
      let body = try? document.encodedBody(limits: limits)
    else { return .some(nil) }
    return .some(
      EncodedDocument(
        id: json["_id"] == nil ? nil : document.id, rev: document.rev,
        isDeleted: document.isDeleted, body: body))
  }

  func fast(_ text: [UInt8], _ limits: DocumentLimits = .default) -> EncodedDocument? {
    text.withUnsafeBufferPointer { EncodedDocument(text: $0, limits: limits) }
  }

  /// Where the fast reading answers, it answers what parsing, validating and printing do.
  func check(_ text: [UInt8], _ limits: DocumentLimits = .default) -> Bool {
    guard let fast = fast(text, limits) else { return false }
    #expect(parsed(text, limits) == .some(fast), "\(String(decoding: text, as: UTF8.self))")
    return true
  }

  static let cases: [(text: String, answered: Bool)] = [
    (#"{"_id":"a","n":1,"s":"x","b":true,"z":null,"l":[1,[2,{}],{"k":"v"}]}"#, true),
    (#" { "_id" : "a" , "n" : -12 , "o" : { "p" : [ ] } } "#, true),
    (#"{"d":1.50,"e":1e3,"f":-0,"g":12345678901234567890,"h":0.1}"#, true),
    (#"{"_id":"é","name":"日本","emoji":"😀"}"#, true),
    (#"{"_rev":"1-0123456789abcdef0123456789abcdef","_deleted":true}"#, true),
    (#"{}"#, true),
    (#"{"s":"a\"b"}"#, false),
    (#"{"_x":1}"#, false),
    (#"{"a":1,"a":2}"#, false),
    (#"{"o":{"a":1,"a":2}}"#, false),
    (#"{"_id":"_bad"}"#, false),
    (#"{"_id":1}"#, false),
    (#"{"_deleted":"yes"}"#, false),
    (#"{"n":01}"#, false),
    (#"{"n":1e999}"#, false),
    (#"{"a":1,}"#, false),
    (#"{"a":1} x"#, false),
    (#"[1]"#, false),
    (#"{"a":tru}"#, false),
  ]

  /// Peers' documents for `new_edits: false`, with `_revisions`: where the fast reading
  /// answers, its revision, ancestry and body are `Document.replicated`'s; anything the
  /// slow path would refuse it leaves to it.
  static let replicatedCases: [(text: String, answered: Bool)] = [
    (#"{"_id":"a","_rev":"3-abc","_revisions":{"start":3,"ids":["abc","def","012"]},"n":1}"#, true),
    (#"{"_id":"a","_revisions":{"start":2,"ids":["x","y"]}}"#, true),
    (#"{"a":1,"_revisions":{"ids":["x"],"start":5},"b":[2],"_id":"m"}"#, true),
    (#"{"_revisions":{"start":1,"ids":["x"]},"_id":"a","_deleted":true,"b":2}"#, true),
    (#" { "_id" : "a" , "_revisions" : { "start" : 2 , "ids" : [ "x" , "y" ] } } "#, true),
    (#"{"_id":"a","_rev":"3-zzz","_revisions":{"start":3,"ids":["abc"]}}"#, false),
    (#"{"_id":"a","_revisions":{"start":1,"ids":["x","y"]}}"#, false),
    (#"{"_id":"a","_revisions":{"start":2,"ids":[1,2]}}"#, false),
    (#"{"_id":"a","_revisions":{"start":2,"ids":[]}}"#, false),
    (#"{"_id":"a","_revisions":["x"]}"#, false),
    (#"{"_id":"a","_revisions":{"start":"2","ids":["x"]}}"#, false),
    (#"{"_revisions":{"start":1,"ids":["x"]}}"#, false),
    (#"{"_id":"a","_revisions":{"start":1,"ids":["x\u0041"]}}"#, false),
    (
      #"{"_id":"a","_revisions":{"start":1,"ids":["x"]},"_revisions":{"start":1,"ids":["x"]}}"#,
      false
    ),
  ]

  @Test(arguments: replicatedCases)
  func readsPeersRevisionsAsReplicatedDoes(text: String, answered: Bool) throws {
    let bytes = Array(text.utf8)
    let fast = fast(bytes)
    #expect((fast != nil) == answered, "\(text)")
    guard let fast else { return }
    let (document, history) = try Document.replicated(validating: try JSONParser.parse(bytes))
    #expect(fast.id == document.id && fast.rev == document.rev && fast.history == history)
    #expect(fast.isDeleted == document.isDeleted)
    #expect(fast.body == (try document.encodedBody(limits: .default)), "\(text)")
  }

  @Test(arguments: cases)
  func readsWhatItCanAndLeavesTheRest(text: String, answered: Bool) {
    #expect(check(Array(text.utf8)) == answered, "\(text)")
  }

  @Test func refusesInvalidUTF8AndControlCharacters() {
    for bytes: [UInt8] in [
      [0xC3], [0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0x01],
    ] {
      let text = Array(#"{"s":""#.utf8) + bytes + Array(#""}"#.utf8)
      #expect(fast(text) == nil)
    }
  }

  /// Strings are read eight bytes at a time: a byte that needs a look is found wherever
  /// it stands in a string of any length.
  @Test func findsEveryByteThatNeedsALook() {
    for length in 1..<24 {
      for position in 0..<length {
        for special: [UInt8] in [[0x5C], [0x01], [0x1F], [0xC3], Array("é".utf8), [0x7F]] {
          var content = [UInt8](repeating: UInt8(ascii: "a"), count: length)
          content.replaceSubrange(position...position, with: special)
          let text = Array(#"{"s":""#.utf8) + content + Array(#"","t":1}"#.utf8)
          let answered = check(text)
          let mustRefuse =
            special == [0x5C] || special == [0x01] || special == [0x1F]
            || special == [0xC3]
          #expect(answered != mustRefuse, "\(special) at \(position) of \(length)")
        }
      }
    }
  }

  @Test func leavesDeepAndLargeDocumentsToTheirChecks() {
    let deep = String(repeating: #"{"a":"#, count: 40) + "1" + String(repeating: "}", count: 40)
    #expect(fast(Array(deep.utf8)) == nil)
    let shallow = DocumentLimits(maxDocumentBytes: 1_000, maxNestingDepth: 3)
    #expect(!check(Array(#"{"a":{"b":1}}"#.utf8), shallow))
    for depth in 0..<3 {
      let limits = DocumentLimits(maxDocumentBytes: 1_000, maxNestingDepth: depth)
      _ = check(Array(#"{"a":1}"#.utf8), limits)
      _ = check(Array(#"{"a":[1]}"#.utf8), limits)
    }
    let small = DocumentLimits(maxDocumentBytes: 10, maxNestingDepth: 100)
    #expect(!check(Array(#"{"a":"0123456789"}"#.utf8), small))
  }

  /// Random documents, printed compactly and with spaces, then with one byte changed:
  /// whatever the fast reading accepts, the slow path gives the same.
  @Test(arguments: [1, 2, 3] as [UInt64])
  func agreesWithParsingOnRandomText(seed: UInt64) throws {
    var random = RandomQueries(seed: seed)
    var answered = 0
    for number in 0..<300 {
      var document = random.document(number)
      if random.chance(30) { document["_rev"] = "2-00112233445566778899aabbccddeeff" }
      if random.chance(10) { document["_deleted"] = .bool(random.chance(50)) }
      if random.chance(20) { document["_id"] = nil }
      let compact = Array(JSONWriter.string(.object(document)).utf8)
      let spaced = try JSONSerialization.data(
        withJSONObject: JSONSerialization.jsonObject(
          with: Data(compact), options: [.fragmentsAllowed]),
        options: [.prettyPrinted])
      for text in [compact, Array(spaced)] {
        if check(text) { answered += 1 }
        var mutated = text
        let index = Int(random.random.next() % UInt64(mutated.count))
        mutated[index] = random.pick(Array(#"{}[]":,0a\ "#.utf8) + [0x80, 0x00])
        _ = check(mutated)
      }
    }
    #expect(answered > 200)
  }
}
