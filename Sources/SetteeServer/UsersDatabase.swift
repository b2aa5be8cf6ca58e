import Foundation
import Settee
import SetteeCore
import SetteeJavaScript

/// CouchDB's `_users` database, served as CouchDB serves it: each user a document
/// `org.couchdb.user:{name}` holding `name`, `roles`, `type: "user"` and a PBKDF2 hash of
/// the password, which the server makes from a `password` member on every write and never
/// stores (CouchDB's `couch_users_db`). The rules a write must pass are those of CouchDB's
/// `_design/_auth` validation, kept here in Swift so that they hold with no JavaScript
/// engine; a user reads only their own document.
enum UsersDatabase {
  static let name = "_users"
  static let idPrefix = "org.couchdb.user:"

  /// The name a user document's id holds, or `nil` for another id.
  static func userName(ofID id: String) -> String? {
    id.hasPrefix(idPrefix) ? String(id.dropFirst(idPrefix.count)) : nil
  }

  /// The account of user `name`, with the hash a password is checked against: `nil` when
  /// `_users` has no such live document, or no hash Settee checks. The hashes CouchDB
  /// writes are checked: PBKDF2 with `pbkdf2_prf` `sha256` (CouchDB 3.4 and later, and
  /// Settee), PBKDF2 with SHA-1 (`pbkdf2_prf` absent or `sha`: CouchDB before 3.4), and
  /// CouchDB 1's `simple` `password_sha`. As CouchDB uses it, the salt is the text of
  /// `salt`, not the bytes its hex would decode to.
  static func account(named name: String, in database: Database) async -> Authenticator.Account? {
    guard !name.isEmpty,
      let document = try? await database.collection(Self.name).document(
        idPrefix + name, RevisionReadOptions())
    else { return nil }
    return account(document)
  }

  /// The account a user document describes, when it can be checked.
  static func account(_ document: JSONObject) -> Authenticator.Account? {
    guard let salt = document["salt"]?.stringValue else { return nil }
    let roles = document["roles"]?.arrayValue?.compactMap(\.stringValue) ?? []
    switch document["password_scheme"]?.stringValue {
    case "pbkdf2":
      let scheme: Authenticator.Account.Scheme
      switch document["pbkdf2_prf"]?.stringValue {
      case "sha256": scheme = .pbkdf2SHA256
      case nil, "sha": scheme = .pbkdf2SHA1
      default: return nil
      }
      guard let key = document["derived_key"]?.stringValue.flatMap({ [UInt8](hex: $0) }),
        let iterations = document["iterations"]?.intValue, iterations > 0,
        iterations <= 10_000_000
      else { return nil }
      return Authenticator.Account(
        salt: Array(salt.utf8), derivedKey: key, iterations: iterations, roles: roles,
        scheme: scheme)
    case nil, "simple":
      guard let key = document["password_sha"]?.stringValue.flatMap({ [UInt8](hex: $0) }) else {
        return nil
      }
      return Authenticator.Account(
        salt: Array(salt.utf8), derivedKey: key, iterations: 1, roles: roles, scheme: .simple)
    default:
      return nil
    }
  }

  // MARK: - Writes

  /// What a write of `document` to `_users` by `user` becomes, or CouchDB's refusal:
  /// a user other than its owner is answered `404` (CouchDB does not say the user exists);
  /// a `password` is replaced by its hash; the document must then be a user document
  /// CouchDB's `_auth` validation accepts. `old` is the revision it replaces; `isAdmin`
  /// says whether `user` administers the database (server or `_security` admin).
  static func admit(
    _ document: JSONObject, replacing old: JSONObject?, by user: UserContext, isAdmin: Bool
  ) async throws -> JSONObject {
    let id = document["_id"]?.stringValue ?? ""
    guard !Document.isDesignID(id) else { return document }
    // couch_users_db:before_doc_update: anyone may sign up; only the owner (or an admin)
    // writes an existing name's document.
    if !isAdmin, let name = user.name, name != userName(ofID: id) {
      throw CouchError(.notFound, "not_found", "missing")
    }
    var document = document
    if let password = document["password"], password != .null {
      guard let text = password.stringValue else {
        throw CouchError(.badRequest, "bad_request", "password must be a string")
      }
      await hash(text, into: &document)
    }
    if let reason = refusal(of: document, replacing: old, by: user, isAdmin: isAdmin) {
      throw CouchError(.forbidden, "forbidden", reason)
    }
    return document
  }

  /// Replaces `document`'s password members by a new hash of `password`: PBKDF2-HMAC-SHA-256
  /// with a new salt and ``Authenticator/iterations``, CouchDB 3.4's format.
  static func hash(_ password: String, into document: inout JSONObject) async {
    let salt = Authenticator.randomBytes(16).hex
    // On the password threads, as every PBKDF2 is: never on a cooperative thread.
    let key = await Authenticator.offTheCooperativePool {
      SHA256.pbkdf2(
        password: Array(password.utf8), salt: Array(salt.utf8),
        iterations: Authenticator.iterations)
    }
    document["password"] = nil
    document["password_sha"] = nil
    document["password_scheme"] = "pbkdf2"
    document["pbkdf2_prf"] = "sha256"
    document["iterations"] = .int(Int64(Authenticator.iterations))
    document["salt"] = .string(salt)
    document["derived_key"] = .string(key.hex)
  }

  /// Stores user `name`'s document again with a new hash of `password` (just checked
  /// against the old one), as CouchDB 3.4's `upgrade_hash_on_auth` does: a new revision,
  /// which replicates like any other. `nil` when the document changed meanwhile or could
  /// not be written: the old hash stays.
  static func upgrade(_ name: String, password: String, in database: Database) async
    -> Authenticator.Account?
  {
    let users = database.collection(Self.name)
    guard var document = try? await users.document(idPrefix + name, RevisionReadOptions())
    else { return nil }
    await hash(password, into: &document)
    guard (try? await users.put(document)) != nil else { return nil }
    return account(document)
  }

  /// Why CouchDB's `_auth` validation refuses a user document, in its words; `nil` when it
  /// accepts it.
  static func refusal(
    of new: JSONObject, replacing old: JSONObject?, by user: UserContext, isAdmin: Bool
  ) -> String? {
    if new["_deleted"] == true {
      guard isAdmin || (user.name != nil && user.name == old?["name"]?.stringValue) else {
        return "Only admins may delete other user docs."
      }
      return nil
    }
    guard new["type"] == "user" else { return "doc.type must be user" }
    guard let name = new["name"]?.stringValue, !name.isEmpty else {
      return "doc.name is required"
    }
    guard let rolesValue = new["roles"] else { return "doc.roles must exist" }
    guard let roleValues = rolesValue.arrayValue else { return "doc.roles must be an array" }
    let roles = roleValues.compactMap(\.stringValue)
    guard roles.count == roleValues.count else { return "doc.roles can only contain strings" }
    guard new["_id"]?.stringValue == idPrefix + name else {
      return "Doc ID must be of the form org.couchdb.user:name"
    }
    if let old, old["name"]?.stringValue != name { return "Usernames can not be changed." }
    if new["password_sha"] != nil && new["salt"] == nil {
      return
        "Users with password_sha must have a salt.See /_utils/script/couch.js for example code."
    }
    if let scheme = new["password_scheme"] {
      guard let text = scheme.stringValue, ["simple", "pbkdf2", "simple+pbkdf2"].contains(text)
      else {
        return "Password scheme `\(scheme.stringValue ?? JSONWriter.string(scheme))` not supported."
      }
      if text == "pbkdf2" {
        guard new["iterations"]?.doubleValue != nil else { return "iterations must be a number." }
        guard new["derived_key"]?.stringValue != nil else { return "derived_key must be a string." }
      }
    }
    if !isAdmin {
      if let old {
        guard user.name == name else { return "You may only update your own user document." }
        let oldRoles = (old["roles"]?.arrayValue ?? []).compactMap(\.stringValue).sorted()
        guard oldRoles == roles.sorted() else { return "Only _admin may edit roles" }
      } else if !roles.isEmpty {
        return "Only _admin may set roles"
      }
    }
    if roles.contains(where: { $0 != "_metrics" && $0.hasPrefix("_") }) {
      return "No system roles (starting with underscore) in users db."
    }
    if name.hasPrefix("_") { return "Username may not start with underscore." }
    if name.contains(":") { return "Character `:` is not allowed in usernames." }
    return nil
  }

  // MARK: - Reads

  /// CouchDB's answer to a read of a design document of `_users` by one who does not
  /// administer it.
  static let designRefusal = CouchError(
    .forbidden, "forbidden", "Only administrators can view design docs in the users database.")

  /// Refuses `user` a read of document `id` of `_users` unless it is their own (CouchDB's
  /// `after_doc_read`, with no `public_fields`): design documents are for admins (`403`),
  /// another user's document is answered as missing (`404`).
  static func requireReadable(_ id: String, by user: UserContext, isAdmin: Bool) throws(CouchError)
  {
    guard !isAdmin else { return }
    if Document.isDesignID(id) { throw designRefusal }
    guard let name = user.name, name == userName(ofID: id) else {
      throw CouchError(.notFound, "not_found", "missing")
    }
  }
}
