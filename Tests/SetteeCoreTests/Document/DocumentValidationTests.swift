import SetteeCore
import Testing

@Suite("Document validation")
struct DocumentValidationTests {
  @Test func splitsSpecialMembersFromTheBody() throws {
    let json = try JSONParser.parse(#"{"name":"mike","_id":"m1","_rev":"2-abc","age":3}"#)
    let document = try Document(validating: json)
    #expect(document.id == "m1")
    #expect(document.rev == RevisionID(generation: 2, digest: "abc"))
    #expect(document.body.keys == ["name", "age"])
    #expect(
      JSONWriter.string(.object(document.json))
        == #"{"_id":"m1","_rev":"2-abc","name":"mike","age":3}"#)
  }

  @Test func generatesDistinctIncreasingIDs() throws {
    let ids = try (0..<1_000).map { _ in try Document(validating: ["a": 1]).id }
    #expect(Set(ids).count == ids.count)
    #expect(ids.allSatisfy { $0.count == 32 && $0.allSatisfy(\.isHexDigit) })
    // Sequential ids: mostly increasing, so inserts stay local in the id index.
    let increasing = zip(ids, ids.dropFirst()).filter { $0 < $1 }.count
    #expect(increasing > 990)
  }

  /// Every bad document is a typed error with the right code.
  @Test(arguments: [
    (#"[1,2]"#, SetteeError.Code.invalidDocument),
    (#""text""#, .invalidDocument),
    (#"null"#, .invalidDocument),
    (#"{"_id":""}"#, .invalidID),
    (#"{"_id":42}"#, .invalidID),
    (#"{"_id":null}"#, .invalidID),
    (#"{"_id":"_secret"}"#, .invalidID),
    (#"{"_id":"x","_rev":"abc"}"#, .invalidRevision),
    (#"{"_id":"x","_rev":"0-abc"}"#, .invalidRevision),
    (#"{"_id":"x","_rev":"1-"}"#, .invalidRevision),
    (#"{"_id":"x","_rev":"1-a\u0001b"}"#, .invalidRevision),
    (#"{"_id":"x","_rev":7}"#, .invalidRevision),
    (#"{"_deleted":"yes"}"#, .invalidDocument),
    (#"{"_attachments":[]}"#, .invalidDocument),
    (#"{"_revisions":{}}"#, .reservedField),
    (#"{"_foo":1}"#, .reservedField),
  ])
  func rejects(_ text: String, _ code: SetteeError.Code) throws {
    let json = try JSONParser.parse(text)
    #expect {
      try Document(validating: json)
    } throws: { ($0 as? SetteeError)?.code == code }
  }

  @Test func allowsDesignDocumentsAndNestedUnderscores() throws {
    let document = try Document(validating: ["_id": "_design/app", "meta": ["_private": true]])
    #expect(document.id == "_design/app")
  }

  @Test func limitsNestingDepth() throws {
    var value: JSON = 1
    for _ in 0..<6 { value = ["a": value] }  // a document 6 levels deep
    let limits = DocumentLimits(maxNestingDepth: 5)
    #expect {
      try Document(validating: value, limits: limits)
    } throws: { error in
      guard let error = error as? SetteeError else { return false }
      return error.code == .nestingTooDeep && error.message.contains("a.a.a.a")
    }
    #expect(throws: Never.self) {
      try Document(validating: value, limits: DocumentLimits(maxNestingDepth: 6))
    }
  }

  @Test func rejectsNumbersJSONCannotHold() {
    #expect {
      try Document(validating: ["x": ["y": .double(.nan)]])
    } throws: { ($0 as? SetteeError)?.message.contains("x.y") == true }
  }

  @Test func limitsSize() throws {
    let document = try Document(validating: ["text": .string(String(repeating: "x", count: 200))])
    #expect(throws: Never.self) {
      try document.encodedBody(limits: DocumentLimits(maxDocumentBytes: 300))
    }
    #expect {
      try document.encodedBody(limits: DocumentLimits(maxDocumentBytes: 100))
    } throws: { ($0 as? SetteeError)?.code == .documentTooLarge }
  }
}

@Suite("Revision ids")
struct RevisionIDTests {
  /// Settee's own and peers' (issue 31): `1-ghi`, `1-a b` and `3-ABCDEF` are revisions a
  /// peer may send, kept as they are (`3-ABCDEF` is not `3-abcdef`).
  @Test(arguments: ["1-a", "12-0123456789abcdef", "3-abcdef", "1-ghi", "1-a b", "3-ABCDEF"])
  func parses(_ text: String) {
    #expect(RevisionID(text)?.description == text)
  }

  /// A generation of at least 1 without a sign or leading zero (`01-abc` is not `1-abc`),
  /// and a suffix without control characters.
  @Test(arguments: [
    "", "1", "1-", "-abc", "0-abc", "x-abc", "+1-abc", "01-abc", "1-abc\u{0}",
  ])
  func rejects(_ text: String) {
    #expect(RevisionID(text) == nil)
  }

  @Test func ordersByGenerationThenDigest() throws {
    let revisions = try ["10-a", "9-f", "2-b", "2-a"].map { try RevisionID(parsing: $0) }
    #expect(revisions.sorted().map(\.description) == ["2-a", "2-b", "9-f", "10-a"])
  }

  @Test func nextIsDeterministicAndChained() {
    let body = Array(#"{"a":1}"#.utf8)
    let first = RevisionID.next(after: nil, deleted: false, body: body)
    #expect(first == RevisionID.next(after: nil, deleted: false, body: body))
    #expect(first.generation == 1 && first.digest.count == 32)
    let second = RevisionID.next(after: first, deleted: false, body: body)
    #expect(second.generation == 2 && second != first)
    #expect(RevisionID.next(after: first, deleted: true, body: body) != second)
  }

  /// Revisions are stored and compared, so their digest is a format: MD5 of the parent's
  /// text, a 0 byte, the deletion flag and the canonical body (as computed outside Swift).
  @Test func nextDigestIsFixed() {
    let body = Array(#"{"a":1}"#.utf8)
    let first = RevisionID.next(after: nil, deleted: false, body: body)
    #expect(first.description == "1-73e739f17d43286245f535443683a01a")
    #expect(
      RevisionID.next(after: first, deleted: true, body: body).description
        == "2-20fd01aa31bf35dbf4e7e18f933f2bdc")
  }
}
