import HTTPTypes
import SetteeCore
import Testing

@testable import SetteeServer

/// The one place an error gets its CouchDB status and name (`CouchError.init`), as a table,
/// as CouchDB tests `chttpd:error_info/1` (issue 45): every `SetteeError.Code` has its row,
/// so that a new code cannot reach a client as an accident.
@Suite("The error table")
struct ErrorTableTests {
  static let table: [SetteeError.Code: (status: Int, error: String)] = [
    .invalidJSON: (400, "bad_request"),
    // CouchDB's doc_validation is for special members alone; other malformed documents
    // (not an object, attachment data that does not decode) are bad requests.
    .invalidDocument: (400, "bad_request"),
    .invalidID: (400, "illegal_docid"),
    .invalidRevision: (400, "bad_request"),
    .reservedField: (400, "doc_validation"),
    .documentTooLarge: (413, "document_too_large"),
    .nestingTooDeep: (400, "bad_request"),
    .conflict: (409, "conflict"),
    .notFound: (404, "not_found"),
    .invalidArgument: (400, "bad_request"),
    .storage: (500, "storage_error"),
    .io: (500, "io_error"),
    .invalidQuery: (400, "invalid_query"),
    .invalidIndex: (400, "invalid_index"),
    .noUsableIndex: (400, "no_usable_index"),
    .busy: (503, "service_unavailable"),
    .readOnly: (403, "forbidden"),
    .notSetteeDatabase: (500, "not_a_settee_database"),
    .corruption: (500, "corruption"),
    .limitExceeded: (400, "limit_exceeded"),
    .viewNotRegistered: (400, "view_not_registered"),
    .uniqueViolation: (409, "conflict"),
    .missingStub: (412, "missing_stub"),
  ]

  @Test func everyCodeHasItsStatusAndName() {
    #expect(Set(SetteeError.Code.all) == Set(Self.table.keys), "codes without a row, or rows without a code")
    for code in SetteeError.Code.all {
      let answer = CouchError(SetteeError(code, "why"))
      let expected = Self.table[code]
      #expect(answer.status.code == expected?.status, "\(code)")
      #expect(answer.error == expected?.error, "\(code)")
      // The reason is the error's, but for a conflict, which says CouchDB's words.
      #expect(answer.reason == (code == .conflict ? "Document update conflict." : "why"), "\(code)")
    }
  }

  /// What is no `SetteeError`: the client's framing is a 400, anything else a 500 naming it.
  @Test func otherErrors() {
    #expect(CouchError(CancellationError()).status == .internalServerError)
    #expect(CouchError(CancellationError()).error == "unknown_error")
    let couch = CouchError(.conflict, "conflict", "kept as it is")
    #expect(CouchError(couch).reason == "kept as it is")
  }
}
