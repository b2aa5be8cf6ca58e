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

  /// Whether `user` is named, byte for byte, by the user document id `id`.
  static func isOwner(_ user: UserContext, of id: String) -> Bool {
    guard let name = user.name, let owner = userName(ofID: id) else { return false }
    return name.isExactly(owner)
  }

  /// The name a user document's id holds, or `nil` for another id.
  static func userName(ofID id: String) -> String? {
    id.utf8.starts(with: idPrefix.utf8)
      ? String(decoding: id.utf8.dropFirst(idPrefix.utf8.count), as: UTF8.self) : nil
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

  // MARK: - `_design/_auth`

  /// The design document CouchDB keeps in its users database.
  static let authDesignID = "_design/_auth"

  /// `_design/_auth`'s `validate_doc_update`: the rules of ``refusal(of:replacing:by:isAdmin:)``
  /// written in JavaScript, for the clients and tools that read them (a test runs both on
  /// the same writes). The server enforces them in Swift and skips this function while it
  /// is this text, so `_users` works without JavaScriptCore; an edited one runs as well.
  static let authValidation = """
    function (newDoc, oldDoc, userCtx, secObj) {
      // Settee's rules for the users database (the server enforces them natively too).
      function has(list, item) {
        return Array.isArray(list) && list.indexOf(item) !== -1;
      }
      function strings(list) {
        return (Array.isArray(list) ? list : []).filter(function (item) {
          return typeof item === 'string';
        });
      }
      function refuse(reason) {
        throw { forbidden: reason };
      }
      var roles = userCtx.roles || [];
      var admins = (secObj && secObj.admins) || {};
      var isAdmin = has(roles, '_admin') ||
        (userCtx.name !== null && has(admins.names, userCtx.name)) ||
        roles.some(function (role) { return has(admins.roles, role); });

      if (newDoc._deleted === true) {
        var owner = userCtx.name !== null && oldDoc !== null && userCtx.name === oldDoc.name;
        if (!isAdmin && !owner) refuse('Only admins may delete other user docs.');
        return;
      }
      if (newDoc.type !== 'user') refuse('doc.type must be user');
      var name = newDoc.name;
      if (typeof name !== 'string' || name === '') refuse('doc.name is required');
      if (newDoc.roles === undefined) refuse('doc.roles must exist');
      if (!Array.isArray(newDoc.roles)) refuse('doc.roles must be an array');
      var newRoles = strings(newDoc.roles);
      if (newRoles.length !== newDoc.roles.length) refuse('doc.roles can only contain strings');
      if (newDoc._id !== 'org.couchdb.user:' + name) {
        refuse('Doc ID must be of the form org.couchdb.user:name');
      }
      if (oldDoc !== null && oldDoc.name !== name) refuse('Usernames can not be changed.');
      if (newDoc.password_sha !== undefined && newDoc.salt === undefined) {
        refuse('Users with password_sha must have a salt.' +
          'See /_utils/script/couch.js for example code.');
      }
      var scheme = newDoc.password_scheme;
      if (scheme !== undefined) {
        if (['simple', 'pbkdf2', 'simple+pbkdf2'].indexOf(scheme) === -1) {
          var shown = typeof scheme === 'string' ? scheme : JSON.stringify(scheme);
          refuse('Password scheme `' + shown + '` not supported.');
        }
        if (scheme === 'pbkdf2') {
          if (typeof newDoc.iterations !== 'number') refuse('iterations must be a number.');
          if (typeof newDoc.derived_key !== 'string') refuse('derived_key must be a string.');
        }
      }
      if (!isAdmin) {
        if (oldDoc !== null) {
          if (userCtx.name !== name) refuse('You may only update your own user document.');
          var before = strings(oldDoc.roles).sort();
          var after = newRoles.slice().sort();
          var same = before.length === after.length && before.every(function (role, i) {
            return role === after[i];
          });
          if (!same) refuse('Only _admin may edit roles');
        } else if (newRoles.length > 0) {
          refuse('Only _admin may set roles');
        }
      }
      if (newRoles.some(function (role) { return role !== '_metrics' && role[0] === '_'; })) {
        refuse('No system roles (starting with underscore) in users db.');
      }
      if (name[0] === '_') refuse('Username may not start with underscore.');
      if (name.indexOf(':') !== -1) refuse('Character `:` is not allowed in usernames.');
    }
    """

  /// `_design/_auth` as Settee writes it.
  static var authDesign: JSONObject {
    [
      "_id": .string(authDesignID), "language": "javascript",
      "validate_doc_update": .string(authValidation),
    ]
  }

  /// Gives `_users`, when it exists, its `_design/_auth`, as CouchDB does whenever it
  /// opens its users database: the document is written when missing, and its
  /// `validate_doc_update` put back when it is not Settee's (other members an
  /// administrator added stay). Called when `_users` is created and when the server
  /// starts.
  static func ensureAuthDesign(in database: Database) async throws {
    guard try await database.collectionExists(name) else { return }
    let users = database.collection(name)
    guard var design = try await users.document(authDesignID, RevisionReadOptions()) else {
      try await users.put(authDesign)
      return
    }
    guard design["validate_doc_update"]?.stringValue != authValidation else { return }
    design["validate_doc_update"] = .string(authValidation)
    try await users.put(design)
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
    if !isAdmin, user.name != nil, !isOwner(user, of: id) {
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
      let owner = old?["name"]?.stringValue
      guard isAdmin || user.name.map({ owner?.isExactly($0) == true }) == true else {
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
    guard new["_id"]?.stringValue?.isExactly(idPrefix + name) == true else {
      return "Doc ID must be of the form org.couchdb.user:name"
    }
    if let old, old["name"]?.stringValue?.isExactly(name) != true {
      return "Usernames can not be changed."
    }
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
        guard user.name?.isExactly(name) == true else {
          return "You may only update your own user document."
        }
        // As bytes: roles that are only canonically equivalent are two roles to CouchDB.
        let oldRoles = (old["roles"]?.arrayValue ?? []).compactMap(\.stringValue)
        func sortedBytes(_ list: [String]) -> [[UInt8]] {
          list.map { Array($0.utf8) }.sorted { $0.lexicographicallyPrecedes($1) }
        }
        guard sortedBytes(oldRoles) == sortedBytes(roles) else {
          return "Only _admin may edit roles"
        }
      } else if !roles.isEmpty {
        return "Only _admin may set roles"
      }
    }
    let underscore = UInt8(ascii: "_")
    if roles.contains(where: { !$0.isExactly("_metrics") && $0.utf8.first == underscore }) {
      return "No system roles (starting with underscore) in users db."
    }
    if name.utf8.first == underscore { return "Username may not start with underscore." }
    if name.utf8.contains(UInt8(ascii: ":")) {
      return "Character `:` is not allowed in usernames."
    }
    return nil
  }

  // MARK: - Reads

  /// CouchDB's answer to a read of a design document of `_users` by one who does not
  /// administer it.
  static let designRefusal = CouchError(
    .forbidden, "forbidden", "Only administrators can view design docs in the users database.")

  /// What another user may read of a user document: the members named in `fields`
  /// (CouchDB's `public_fields`, compared byte for byte), with the document's own `_id`
  /// and `_rev` when `keepingIdentity` (a document read alone; a listing's rows keep only
  /// what is named, as CouchDB's do); `nil` when it has none of them (CouchDB then
  /// answers `404`).
  static func publicMembers(
    of document: JSONObject, _ fields: [String], keepingIdentity: Bool
  ) -> JSONObject? {
    var shown = JSONObject()
    if keepingIdentity {
      for key in ["_id", "_rev"] { shown[key] = document[key] }
    }
    var any = false
    for member in document where fields.contains(where: { $0.isExactly(member.key) }) {
      shown[member.key] = member.value
      any = true
    }
    return any ? shown : nil
  }

  /// Refuses `user` a read of document `id` of `_users` unless it is their own (CouchDB's
  /// `after_doc_read`, with no `public_fields`): design documents are for admins (`403`),
  /// another user's document is answered as missing (`404`).
  static func requireReadable(_ id: String, by user: UserContext, isAdmin: Bool) throws(CouchError)
  {
    guard !isAdmin else { return }
    if Document.isDesignID(id) { throw designRefusal }
    guard isOwner(user, of: id) else {
      throw CouchError(.notFound, "not_found", "missing")
    }
  }
}
