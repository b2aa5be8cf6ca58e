import Foundation
import HTTPTypes
import Settee
import SetteeCore
import SetteeJavaScript

extension CouchError {
  /// CouchDB's answer to a refused write: `403 forbidden`, `401 unauthorized`, or `500`
  /// naming the function's exception.
  init(_ refusal: ValidationRefusal) {
    switch refusal.kind {
    case .forbidden: self.init(.forbidden, "forbidden", refusal.reason)
    case .unauthorized: self.init(.unauthorized, "unauthorized", refusal.reason)
    case .failed: self.init(.internalServerError, refusal.error, refusal.reason)
    }
  }
}

extension CouchHandler {
  /// The database's `validate_doc_update` functions; `nil` when it has none.
  func validation(_ db: DocumentCollection) async throws -> DesignValidation? {
    do {
      // `_users/_design/_auth`'s function, as Settee writes it, is the rules
      // ``UsersDatabase`` enforces in Swift on every write there.
      return try await validations.validation(
        for: db, timeLimit: configuration.javaScriptTimeLimit,
        enforcedNatively: db.name == UsersDatabase.name
          ? [UsersDatabase.authDesignID: UsersDatabase.authValidation] : [:])
    } catch let error as SetteeError where error.code == .invalidArgument {
      // A function that does not compile refuses every write it would have judged, as
      // CouchDB's does; the design document itself can still be replaced.
      throw CouchError(
        .badRequest,
        error.message.hasPrefix("compilation_error") ? "compilation_error" : "bad_request",
        error.message)
    }
  }

  /// Runs the database's `validate_doc_update` functions on each document about to be
  /// written (CouchDB validates every write but to design and local documents): `nil` for
  /// a document they accept.
  func validate(
    _ db: DocumentCollection, _ documents: [JSONObject], newEdits: Bool, _ request: CouchRequest
  ) async throws -> [ValidationRefusal?] {
    // Design and local documents are never validated: a design document that does not
    // compile can still be replaced.
    let judged = documents.contains {
      DesignValidation.judges(documentID: $0["_id"]?.stringValue ?? "")
    }
    guard judged, let rules = try await validation(db) else {
      return documents.map { _ in nil }
    }
    return try await validate(db, documents, newEdits: newEdits, request, by: rules)
  }

  /// Runs `rules` (the database's functions, read once by the caller) on each document.
  func validate(
    _ db: DocumentCollection, _ documents: [JSONObject], newEdits: Bool, _ request: CouchRequest,
    by rules: DesignValidation
  ) async throws -> [ValidationRefusal?] {
    do {
      return try await rules.check(
        documents, in: db, newEdits: newEdits, as: request.user,
        security: try await effectiveSecurity(db))
    } catch let error as SetteeError where error.code == .limitExceeded {
      throw CouchError(.internalServerError, "os_process_error", error.message)
    }
  }

  /// Refuses the write of `document` with CouchDB's error when the writer may not make it
  /// (``admit(_:_:_:)``) or a `validate_doc_update` function refuses it; `rules` when the
  /// caller has read them already. The document to store (in `_users`, a password becomes
  /// its hash).
  @discardableResult
  func requireValid(
    _ db: DocumentCollection, _ document: JSONObject, newEdits: Bool = true,
    _ request: CouchRequest, by rules: DesignValidation? = nil
  ) async throws -> JSONObject {
    let document = try await admit(db, document, request)
    let refusals =
      if let rules {
        try await validate(db, [document], newEdits: newEdits, request, by: rules)
      } else {
        try await validate(db, [document], newEdits: newEdits, request)
      }
    if let refusal = refusals[0] { throw CouchError(refusal) }
    return document
  }
}
