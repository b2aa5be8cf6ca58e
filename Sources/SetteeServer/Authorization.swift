import Foundation
import HTTPTypes
import Settee
import SetteeCore
import SetteeJavaScript
import SetteeReplication

/// A database's `_security` object as CouchDB reads it (`couch_db:is_admin`, `is_member`):
/// its `admins` and `members`, each `names` and `roles`.
struct SecurityObject: Sendable {
  /// Who a group holds, by name or by role.
  struct Group: Sendable {
    var names: [String] = []
    var roles: [String] = []

    init(_ json: JSON?) {
      names = json?["names"]?.arrayValue?.compactMap(\.stringValue) ?? []
      roles = json?["roles"]?.arrayValue?.compactMap(\.stringValue) ?? []
    }

    var isEmpty: Bool { names.isEmpty && roles.isEmpty }

    /// Whether `user` is in the group; `_admin` always is.
    func includes(_ user: UserContext) -> Bool {
      if user.isServerAdmin { return true }
      if user.roles.contains(where: { role in roles.contains { $0.isExactly(role) } }) {
        return true
      }
      guard let name = user.name else { return false }
      return names.contains { $0.isExactly(name) }
    }
  }

  var admins: Group
  var members: Group

  /// What a database has when no `_security` was set: CouchDB 3's `default_security =
  /// admin_only`, which lets only server administrators in.
  static let adminOnly: JSONObject = [
    "members": ["roles": ["_admin"]], "admins": ["roles": ["_admin"]],
  ]

  init(_ object: JSONObject) {
    admins = Group(object["admins"])
    // CouchDB reads `readers` where there are no `members` (its older name).
    members = Group(object["members"] ?? object["readers"])
  }

  /// A server administrator, or a database admin by name or role.
  func isAdmin(_ user: UserContext) -> Bool { admins.includes(user) }

  /// An admin, or a member; everyone when the database has no members (a public
  /// database).
  func isMember(_ user: UserContext) -> Bool {
    isAdmin(user) || members.isEmpty || members.includes(user)
  }

  /// CouchDB's check of a `_security` object before it is stored: `names` and `roles`
  /// lists of strings.
  static func validate(_ object: JSONObject) throws(CouchError) {
    for key in ["admins", "members"] {
      guard let group = object[key] else { continue }
      guard let members = group.objectValue else {
        throw CouchError(
          .badRequest, "bad_request", "admins or members must be a JSON list of strings")
      }
      for field in ["names", "roles"] {
        guard let list = members[field] else { continue }
        guard let items = list.arrayValue, items.allSatisfy({ $0.stringValue != nil }) else {
          throw CouchError(.badRequest, "bad_request", "\(field) must be a JSON list of strings")
        }
      }
    }
  }
}

extension UserContext {
  /// Whether the user is a server administrator (the role `_admin`).
  var isServerAdmin: Bool { roles.contains { $0.isExactly("_admin") } }
}

extension String {
  /// Whether the two are the same text byte for byte, as CouchDB compares names, roles
  /// and ids. Swift's `==` takes canonically equivalent texts as equal ("é" as one code
  /// point and as `e` with a combining accent, "K" and the Kelvin sign): two users or
  /// roles CouchDB tells apart must never be one here.
  func isExactly(_ other: some StringProtocol) -> Bool { utf8.elementsEqual(other.utf8) }
}

extension CouchHandler {
  /// The `_security` object that governs `db`: the one set, else CouchDB 3's admin-only
  /// default.
  func effectiveSecurity(_ db: DocumentCollection) async throws -> JSONObject {
    try await database.metadata(forKey: Self.securityKey(db.name))?.objectValue
      ?? SecurityObject.adminOnly
  }

  /// Who may make `request`, by CouchDB's table (`chttpd_auth_request`): server
  /// endpoints but `/`, `/_up`, `/_uuids` and `/_session` are for server administrators,
  /// as are creating and deleting databases and `_purge`; a database's documents are for
  /// its members (everyone when it has none); `_compact` and `_view_cleanup` for its
  /// admins. Settee keeps `_replicate`, `_active_tasks`, `_scheduler` and the
  /// `_replicator` database for server administrators, since its replications run with
  /// the server's own access; and on `_users` a member who is not its admin reaches only
  /// the database's information and documents by id. Server administrators pass without
  /// a read.
  func authorize(_ request: CouchRequest) async throws {
    let user = request.user
    guard !user.isServerAdmin, let first = request.segments.first else { return }
    let segments = request.segments
    if first.hasPrefix("_") && first != UsersDatabase.name
      && first != Database.defaultCollectionName
    {
      if ["_up", "_uuids", "_session", "_utils", "favicon.ico"].contains(first) { return }
      throw Self.notServerAdmin
    }
    if segments.count == 1 && (request.method == .put || request.method == .delete) {
      throw Self.notServerAdmin
    }
    let second = segments.count > 1 ? segments[1] : nil
    if second == "_purge" { throw Self.notServerAdmin }
    let db = try collection(named: first)
    guard try await database.collectionExists(db.name) else {
      throw CouchError(.notFound, "not_found", "Database does not exist.")
    }
    let security = SecurityObject(try await effectiveSecurity(db))
    guard security.isMember(user) else { throw Self.securityError(user) }
    let isAdmin = security.isAdmin(user)
    guard !isAdmin, let second else { return }
    if second == "_compact" || second == "_view_cleanup" {
      throw CouchError(.unauthorized, "unauthorized", "You are not a server or db admin.")
    }
    let writes = request.method != .get && request.method != .head
    if (second == "_security" || second == "_revs_limit" || second == "_index") && writes {
      throw Self.securityError(user, reason: "You are not a db or server admin.")
    }
    if first == UsersDatabase.name && second.hasPrefix("_") {
      try authorizeUsersMember(request, second, writes: writes)
    }
  }

  /// What a member of `_users` who does not administer it may reach there, as CouchDB
  /// lets them: `_find` and `_bulk_get`, which give only their own user document (the
  /// others are filtered out one by one, ``usersSelector(_:_:)`` and `_bulk_get`'s
  /// `not_found`), `_bulk_docs` (sign-up and their own document, each judged as a `PUT`
  /// is), `_design_docs` without the documents, and `GET _security`. Design documents and
  /// their views would show every user's document; `_all_docs`, `_changes` and the rest
  /// are administrators'.
  private func authorizeUsersMember(_ request: CouchRequest, _ second: String, writes: Bool)
    throws
  {
    switch second {
    case "_find", "_bulk_get", "_bulk_docs", "_security": return
    case "_all_docs":
      // `users_db_public`: every user lists the users, documents reduced to the public
      // fields (``CouchHandler/allDocs(_:_:designOnly:)``).
      guard configuration.usersDatabaseIsPublic else {
        throw CouchError(
          .forbidden, "forbidden", "Only admins can access _all_docs of system databases.")
      }
    case "_local_docs":
      throw CouchError(.forbidden, "forbidden", "Only admins can access _local_docs")
    case "_design_docs":
      guard try !request.bool("include_docs") else { throw UsersDatabase.designRefusal }
    case _ where second == "_design" || second.hasPrefix("_design/"):
      if writes {
        throw Self.securityError(request.user, reason: "You are not a db or server admin.")
      }
      throw UsersDatabase.designRefusal
    default: throw Self.notServerAdmin
    }
  }

  /// The selector of a `_find` in `_users` by `user`, who does not administer it: only
  /// their own user document can match (CouchDB reads every match and drops what its
  /// `after_doc_read` refuses; here the page is filled with what may be read, the same
  /// documents).
  static func usersSelector(_ selector: JSON, _ user: UserContext) -> JSON {
    let own: JSON =
      user.name.map { ["_id": .string(UsersDatabase.idPrefix + $0)] } ?? ["_id": ["$in": []]]
    return ["$and": [selector, own]]
  }

  /// Whether `user` administers `db`: a server administrator, or one of the admins of its
  /// `_security`.
  func isDatabaseAdmin(_ db: DocumentCollection, _ user: UserContext) async throws -> Bool {
    if user.isServerAdmin { return true }
    return SecurityObject(try await effectiveSecurity(db)).isAdmin(user)
  }

  /// CouchDB's answer to a request only a server administrator may make.
  static let notServerAdmin = CouchError(
    .unauthorized, "unauthorized", "You are not a server admin.")

  /// CouchDB's refusal of `user`: `401 unauthorized` to an anonymous client (who may log
  /// in), `403 forbidden` to a named one.
  static func securityError(_ user: UserContext, reason: String? = nil) -> CouchError {
    user.name == nil
      ? CouchError(
        .unauthorized, "unauthorized", reason ?? "You are not authorized to access this db.")
      : CouchError(.forbidden, "forbidden", reason ?? "You are not allowed to access this db.")
  }

  /// CouchDB's checks of a write that are not a design document's functions: only a
  /// database's admins write its design documents, and `_users` takes only user documents
  /// by CouchDB's rules, a password stored as its hash (``UsersDatabase``). The document
  /// to store, or the refusal.
  func admit(
    _ db: DocumentCollection, _ document: JSONObject, _ request: CouchRequest
  ) async throws -> JSONObject {
    let user = request.user
    let users = db.name == UsersDatabase.name
    guard users || !user.isServerAdmin else { return document }
    let id = document["_id"]?.stringValue ?? ""
    if id.hasPrefix(LocalDocument.idPrefix) { return document }
    let isAdmin = try await isDatabaseAdmin(db, user)
    if Document.isDesignID(id) {
      guard isAdmin else {
        throw Self.securityError(user, reason: "You are not a db or server admin.")
      }
      return document
    }
    guard users else { return document }
    let old = try await db.document(id, RevisionReadOptions())
    return try await UsersDatabase.admit(document, replacing: old, by: user, isAdmin: isAdmin)
  }

  /// Refuses a read of document `id` of `_users` that is not the reader's own (CouchDB's
  /// `after_doc_read`); other databases' documents are their members'.
  func requireReadable(
    _ db: DocumentCollection, _ id: String, _ request: CouchRequest
  ) async throws {
    guard db.name == UsersDatabase.name, !request.user.isServerAdmin else { return }
    try UsersDatabase.requireReadable(
      id, by: request.user, isAdmin: try await isDatabaseAdmin(db, request.user))
  }

  /// Which members of document `id` the request may read: `nil` for all (another
  /// database's, or in `_users` an administrator's read or the owner's), the public fields
  /// (``ServerConfiguration/usersPublicFields``) for another user's document when there
  /// are some, as CouchDB's `after_doc_read` reduces it; else the refusal of
  /// ``requireReadable(_:_:_:)``.
  func readableMembers(
    _ db: DocumentCollection, _ id: String, _ request: CouchRequest
  ) async throws -> [String]? {
    guard db.name == UsersDatabase.name, !request.user.isServerAdmin else { return nil }
    let isAdmin = try await isDatabaseAdmin(db, request.user)
    let fields = configuration.usersPublicFields
    // Another user's document (not a design document) when there are public fields.
    if !isAdmin, !fields.isEmpty, !Document.isDesignID(id),
      !UsersDatabase.isOwner(request.user, of: id)
    {
      return fields
    }
    try UsersDatabase.requireReadable(id, by: request.user, isAdmin: isAdmin)
    return nil
  }
}
