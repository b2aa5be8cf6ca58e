import SetteeCore

/// Who is writing, as a `validate_doc_update` function sees it (CouchDB's `userCtx`:
/// `{"db", "name", "roles"}`).
public struct UserContext: Sendable, Hashable {
  /// The user's name; `nil` for an anonymous writer.
  public var name: String?
  /// The user's roles; `_admin` for a server administrator.
  public var roles: [String]

  /// A writer named `name` with `roles`.
  public init(name: String? = nil, roles: [String] = []) {
    self.name = name
    self.roles = roles
  }

  /// An administrator without a name: what CouchDB calls every client of a server that has
  /// no administrator ("admin party"), and what a Swift app writing its own file is.
  public static let administrator = UserContext(roles: ["_admin"])

  /// CouchDB's `userCtx` object for database `db`.
  public func json(database db: String) -> JSONObject {
    [
      "db": .string(db), "name": name.map(JSON.string) ?? .null,
      "roles": .array(roles.map(JSON.string)),
    ]
  }
}

/// A write that a design document's `validate_doc_update` refused, or that failed in it.
public struct ValidationRefusal: Error, Sendable, Hashable, CustomStringConvertible {
  /// What the function did.
  public enum Kind: Sendable, Hashable {
    /// It threw `{forbidden: reason}`: CouchDB answers `403 forbidden`.
    case forbidden
    /// It threw `{unauthorized: reason}`: CouchDB answers `401 unauthorized`.
    case unauthorized
    /// It threw anything else (an `Error`, a string, another object): CouchDB answers
    /// `500` with ``error`` (the exception's name, or `unknown_error`).
    case failed
  }

  /// What the function did.
  public var kind: Kind
  /// CouchDB's error name: `forbidden`, `unauthorized`, or the exception's name.
  public var error: String
  /// The function's message (printed as JSON when it is not a string).
  public var reason: String
  /// The document refused.
  public var documentID: String
  /// The design document whose function refused it.
  public var designDocument: String

  public var description: String {
    "\(designDocument)'s validate_doc_update refused \(JSON.string(documentID)): \(error): \(reason)"
  }
}

/// One write as `validate_doc_update` sees it: the new revision, and the revision it
/// replaces (`nil` for a new document or one recreated after deletion).
public struct ValidatedWrite: Sendable, Hashable {
  /// The document as written (`_id`, `_rev`, `_revisions`, `_deleted`, attachments as
  /// stubs).
  public var newDocument: JSONObject
  /// The revision on disk it replaces, with `_revisions`; `nil` when there is none.
  public var oldDocument: JSONObject?

  /// A write of `newDocument` over `oldDocument`.
  public init(_ newDocument: JSONObject, replacing oldDocument: JSONObject?) {
    self.newDocument = newDocument
    self.oldDocument = oldDocument
  }
}
