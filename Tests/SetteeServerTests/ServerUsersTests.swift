import Foundation
import Settee
import SetteeCore
import SetteeJavaScript
import SetteeTestSupport
import Testing

@testable import SetteeServer

/// Users other than administrators, as CouchDB 3 has them: the `_users` database (sign-up,
/// a password stored as its PBKDF2 hash, each user reading and changing only their own
/// document), their logins, and each database's `_security` deciding who reads, writes and
/// changes design documents.
@Suite("settee serve: users and database security")
struct ServerUsersTests {
  let directory = TemporaryDirectory()

  static let basic = ServerAuthTests.basic

  /// A CouchDB user document with a PBKDF2-HMAC-SHA-256 hash made by Python's `hashlib`
  /// (1,000 iterations, so that a debug build checks it fast): the salt is used as text,
  /// as CouchDB uses it.
  static func userDocument(_ name: String, password: String, roles: [String]) throws -> JSON {
    let salt = "0123456789abcdef0123456789abcdef"
    let key = try ServerAuthTests.python(
      "import hashlib; print(hashlib.pbkdf2_hmac('sha256', b'\(password)', b'\(salt)', 1000).hex())"
    )
    return [
      "_id": .string("org.couchdb.user:" + name), "name": .string(name), "type": "user",
      "roles": .array(roles.map(JSON.string)), "password_scheme": "pbkdf2",
      "pbkdf2_prf": "sha256", "iterations": 1_000, "salt": .string(salt),
      "derived_key": .string(key),
    ]
  }

  /// A server with administrator `boss` (the credentials returned) and a `_users`
  /// database.
  func serverWithUsers(_ file: String) async throws -> (ServerProcess, [String: String]) {
    let server = try await ServerProcess(
      db: directory.path(file), ["--log-level", "none", "--admin", "boss"],
      environment: ["SETTEE_ADMIN_PASSWORD": "boss pass"])
    let boss = Self.basic("boss", "boss pass")
    #expect(try await server.request("PUT", "/_users", headers: boss).status == 201)
    return (server, boss)
  }

  @Test func usersSignUpLogInAndKeepToTheirOwnDocument() async throws {
    let (server, boss) = try await serverWithUsers("users.db")
    // CouchDB 3 creates every database admin-only; sign-up needs _users opened.
    let closed = try await server.put(
      "/_users/org.couchdb.user:ann",
      ["name": "ann", "password": "ann pass", "roles": [], "type": "user"])
    #expect(closed.status == 401)
    #expect(closed.json["reason"] == "You are not authorized to access this db.")
    #expect(
      try await server.request(
        "PUT", "/_users/_security",
        json: ["members": ["roles": []], "admins": ["roles": ["_admin"]]],
        headers: boss
      ).status == 200)

    // Sign-up by an anonymous client: the password is stored as its hash.
    let signUp = try await server.put(
      "/_users/org.couchdb.user:ann",
      ["name": "ann", "password": "ann pass", "roles": [], "type": "user"])
    #expect(signUp.status == 201, "\(signUp.json)")
    let stored = try await server.request(
      "GET", "/_users/org.couchdb.user:ann", headers: boss
    ).json
    #expect(stored["password"] == nil)
    #expect(stored["password_scheme"] == "pbkdf2" && stored["pbkdf2_prf"] == "sha256")
    #expect(stored["iterations"] == .int(Int64(Authenticator.iterations)))
    let salt = try #require(stored["salt"]?.stringValue)
    #expect(salt.count == 32)
    // Python's hashlib derives the same key from the same password and the salt's text.
    let reference = try ServerAuthTests.python(
      "import hashlib; print(hashlib.pbkdf2_hmac('sha256', b'ann pass', b'\(salt)', \(Authenticator.iterations)).hex())"
    )
    #expect(stored["derived_key"]?.stringValue == reference)

    // Roles are for administrators to give.
    let greedy = try await server.put(
      "/_users/org.couchdb.user:eve",
      ["name": "eve", "password": "x", "roles": ["editors"], "type": "user"])
    #expect(greedy.status == 403 && greedy.json["reason"] == "Only _admin may set roles")
    let bob = try await server.request(
      "PUT", "/_users/org.couchdb.user:bob",
      json: try Self.userDocument("bob", password: "bob pass", roles: ["editors"]), headers: boss)
    #expect(bob.status == 201, "\(bob.json)")

    // Logins: a cookie for ann, Basic for bob, each with their roles.
    let login = try await server.post("/_session", ["name": "ann", "password": "ann pass"])
    #expect(login.json == ["ok": true, "name": "ann", "roles": []])
    let cookie = [
      "Cookie": String(try #require(login.headers["set-cookie"]).split(separator: ";")[0])
    ]
    #expect(
      try await server.request("GET", "/_session", headers: cookie).json["userCtx"]
        == ["name": "ann", "roles": []])
    let bobBasic = Self.basic("bob", "bob pass")
    let bobSession = try await server.request("GET", "/_session", headers: bobBasic).json
    #expect(bobSession["userCtx"] == ["name": "bob", "roles": ["editors"]])
    let wrong = try await server.request("GET", "/", headers: Self.basic("bob", "nope"))
    #expect(wrong.status == 401 && wrong.json["reason"] == "Name or password is incorrect.")

    // Each reads their own document only; the listings are the administrators'.
    #expect(
      try await server.request("GET", "/_users/org.couchdb.user:ann", headers: cookie).status
        == 200)
    let others = try await server.request("GET", "/_users/org.couchdb.user:bob", headers: cookie)
    #expect(others.status == 404 && others.error == "not_found")
    #expect(try await server.get("/_users/org.couchdb.user:ann").status == 404)
    for path in ["/_users/_changes", "/_all_dbs", "/_active_tasks"] {
      let answer = try await server.request("GET", path, headers: cookie)
      #expect(answer.status == 401, "\(path)")
      #expect(answer.json["reason"] == "You are not a server admin.", "\(path)")
    }
    let listing = try await server.request("GET", "/_users/_all_docs", headers: cookie)
    #expect(listing.status == 403)
    #expect(listing.json["reason"] == "Only admins can access _all_docs of system databases.")
    #expect(try await server.request("GET", "/_users/_all_docs", headers: boss).status == 200)
    // Nor may a view or a design document of _users show them.
    let view: JSON = [
      "views": ["all": ["map": "function (doc) { emit(doc._id, doc.derived_key); }"]]
    ]
    #expect(
      try await server.request("PUT", "/_users/_design/peek", json: view, headers: boss).status
        == 201)
    for path in ["/_users/_design/peek", "/_users/_design/peek/_view/all"] {
      let answer = try await server.request("GET", path, headers: cookie)
      #expect(answer.status == 403, "\(path)")
      #expect(
        answer.json["reason"] == "Only administrators can view design docs in the users database.")
    }
    let write = try await server.request("PUT", "/_users/_design/peek", json: view, headers: cookie)
    #expect(write.status == 403 && write.json["reason"] == "You are not a db or server admin.")

    // Changing one's own document: not one's roles, not someone else's, a new password.
    var own = try #require(
      try await server.request("GET", "/_users/org.couchdb.user:ann", headers: cookie).json
        .objectValue)
    own["roles"] = ["editors"]
    let promoted = try await server.request(
      "PUT", "/_users/org.couchdb.user:ann", json: .object(own), headers: cookie)
    #expect(promoted.status == 403 && promoted.json["reason"] == "Only _admin may edit roles")
    var bobs = try #require(
      try await server.request("GET", "/_users/org.couchdb.user:bob", headers: boss).json
        .objectValue)
    bobs["roles"] = []
    let meddling = try await server.request(
      "PUT", "/_users/org.couchdb.user:bob", json: .object(bobs), headers: cookie)
    #expect(meddling.status == 404)
    own["roles"] = []
    own["password"] = "new pass"
    #expect(
      try await server.request(
        "PUT", "/_users/org.couchdb.user:ann", json: .object(own), headers: cookie
      )
      .status == 201)
    #expect(
      try await server.request("GET", "/_session", headers: Self.basic("ann", "ann pass")).status
        == 401)
    #expect(
      try await server.request("GET", "/_session", headers: Self.basic("ann", "new pass")).json[
        "userCtx"]?["name"] == "ann")
    // The changed password ended the old cookie's session: it is anonymous now.
    #expect(
      try await server.request("GET", "/_session", headers: cookie).json["userCtx"]?["name"]
        == .null)
  }

  /// What a member of `_users` reaches there besides their own document, as CouchDB lets
  /// them: `_find` and `_bulk_get` give their own document and drop the others one by one,
  /// `_bulk_docs` signs up, `_design_docs` lists without documents, `GET _security`.
  @Test func usersMembersFindTheirOwnDocumentOnly() async throws {
    let (server, boss) = try await serverWithUsers("members.db")
    let open: JSON = ["members": ["roles": []], "admins": ["roles": ["_admin"]]]
    #expect(
      try await server.request("PUT", "/_users/_security", json: open, headers: boss).status
        == 200)
    // Bob's document made by an administrator, with its hash (a PBKDF2 of the server's
    // 100,000 iterations less for a debug build to run).
    let bob = try Self.userDocument("bob", password: "bob pass", roles: [])
    #expect(
      try await server.request("PUT", "/_users/org.couchdb.user:bob", json: bob, headers: boss)
        .status == 201)
    // Sign-up through _bulk_docs, as an anonymous client; a write of another's document
    // in the same batch is refused on its own.
    let signUp = try await server.post(
      "/_users/_bulk_docs",
      [
        "docs": [
          [
            "_id": "org.couchdb.user:ann", "name": "ann", "password": "ann pass", "roles": [],
            "type": "user",
          ],
          // Another sign-up of a name that exists: refused on its own (not its owner).
          [
            "_id": "org.couchdb.user:bob", "name": "bob", "password": "x", "roles": [],
            "type": "user",
          ],
        ]
      ])
    #expect(signUp.status == 201, "\(signUp.json)")
    #expect(signUp.json[0]?["ok"] == true && signUp.json[1]?["error"] != nil, "\(signUp.json)")
    let ann = Self.basic("ann", "ann pass")
    let hijack = try await server.request(
      "POST", "/_users/_bulk_docs",
      json: [
        "docs": [["_id": "org.couchdb.user:bob", "name": "bob", "roles": ["x"], "type": "user"]]
      ],
      headers: ann)
    #expect(hijack.json[0]?["error"] == "not_found", "\(hijack.json)")
    #expect(
      try await server.request("PUT", "/_users/_design/app", json: [:], headers: boss).status
        == 201)

    let everyone: JSON = ["selector": ["type": "user"], "fields": ["_id"]]
    let found = try await server.request("POST", "/_users/_find", json: everyone, headers: ann)
    #expect(found.status == 200, "\(found.json)")
    #expect(found.json["docs"] == [["_id": "org.couchdb.user:ann"]])
    let anonymous = try await server.post("/_users/_find", everyone)
    #expect(anonymous.status == 200 && anonymous.json["docs"] == [])
    let all = try await server.request("POST", "/_users/_find", json: everyone, headers: boss)
    #expect(all.json["docs"]?.arrayValue?.count == 2)

    let bulkGet = try await server.request(
      "POST", "/_users/_bulk_get",
      json: [
        "docs": [
          ["id": "org.couchdb.user:ann"], ["id": "org.couchdb.user:bob"], ["id": "_design/app"],
        ]
      ], headers: ann)
    let results = bulkGet.json["results"]?.arrayValue ?? []
    #expect(results.count == 3)
    #expect(results.first?["docs"]?[0]?["ok"]?["name"] == "ann")
    #expect(results.dropFirst().first?["docs"]?[0]?["error"]?["error"] == "not_found")
    #expect(results.last?["docs"]?[0]?["error"]?["error"] == "forbidden")

    let designs = try await server.request("GET", "/_users/_design_docs", headers: ann)
    #expect(designs.status == 200)
    #expect(
      designs.json["rows"]?.arrayValue?.map { $0["id"] } == ["_design/_auth", "_design/app"])
    let withDocs = try await server.request(
      "GET", "/_users/_design_docs?include_docs=true", headers: ann)
    #expect(withDocs.status == 403)
    let security = try await server.request("GET", "/_users/_security", headers: ann)
    #expect(security.status == 200 && security.json == open)
    #expect(
      try await server.request("PUT", "/_users/_security", json: open, headers: ann).status == 403)
  }

  /// User documents as CouchDB before 3.4 hashed them (PBKDF2-HMAC-SHA-1, 10 iterations,
  /// no `pbkdf2_prf`) and as CouchDB 1 did (`simple`), hashed by Python's `hashlib`: a
  /// `_users` database replicated from such a CouchDB logs its users in.
  @Test func olderCouchDBHashesLogIn() async throws {
    let (server, boss) = try await serverWithUsers("older.db")
    let salt = "8d2e5c1a0f6b4e3d9c7a1b2c3d4e5f60"
    let sha1Key = try ServerAuthTests.python(
      "import hashlib; print(hashlib.pbkdf2_hmac('sha1', b'old pass', b'\(salt)', 10).hex())")
    let simple = try ServerAuthTests.python(
      "import hashlib; print(hashlib.sha1(b'older pass' + b'\(salt)').hexdigest())")
    let documents: [JSON] = [
      [
        "_id": "org.couchdb.user:old", "name": "old", "type": "user", "roles": ["r"],
        "password_scheme": "pbkdf2", "iterations": 10, "salt": .string(salt),
        "derived_key": .string(sha1Key),
      ],
      [
        "_id": "org.couchdb.user:older", "name": "older", "type": "user", "roles": [],
        "password_scheme": "simple", "salt": .string(salt), "password_sha": .string(simple),
      ],
    ]
    for document in documents {
      let id = document["_id"]!.stringValue!
      #expect(
        try await server.request("PUT", "/_users/\(id)", json: document, headers: boss).status
          == 201)
    }
    let old = try await server.request("GET", "/_session", headers: Self.basic("old", "old pass"))
    #expect(old.json["userCtx"] == ["name": "old", "roles": ["r"]])
    let older = try await server.post("/_session", ["name": "older", "password": "older pass"])
    #expect(older.json == ["ok": true, "name": "older", "roles": []])
    #expect(
      try await server.request("GET", "/_session", headers: Self.basic("old", "older pass")).status
        == 401)
    // Both hashes were stored again, as CouchDB 3.4 upgrades them: PBKDF2-HMAC-SHA-256
    // with the current iterations, a new revision; the passwords still log in, and the
    // cookie the login gave holds (it is signed with the new salt).
    for name in ["old", "older"] {
      let upgraded = try await server.request(
        "GET", "/_users/org.couchdb.user:\(name)", headers: boss
      ).json
      #expect(upgraded["_rev"]?.stringValue?.hasPrefix("2-") == true, "\(name)")
      #expect(upgraded["pbkdf2_prf"] == "sha256" && upgraded["password_sha"] == nil)
      #expect(upgraded["iterations"] == .int(Int64(Authenticator.iterations)))
    }
    let cookie = try #require(older.headers["set-cookie"]?.split(separator: ";").first)
    let viaCookie = try await server.request(
      "GET", "/_session", headers: ["Cookie": String(cookie)])
    #expect(viaCookie.json["userCtx"]?["name"] == "older")
    let again = try await server.request(
      "GET", "/_session", headers: Self.basic("old", "old pass"))
    #expect(again.json["userCtx"] == ["name": "old", "roles": ["r"]])
  }

  /// A `_users` database replicated from another server (as from a CouchDB) logs its
  /// users in: the hashes travel as they are, and no password is needed again.
  @Test func replicatedUsersLogIn() async throws {
    let (source, boss) = try await serverWithUsers("users-source.db")
    let signedUp = try await source.request(
      "PUT", "/_users/org.couchdb.user:ann",
      json: ["name": "ann", "password": "ann pass", "roles": [], "type": "user"], headers: boss)
    #expect(signedUp.status == 201)
    let older = try await source.request(
      "PUT", "/_users/org.couchdb.user:old",
      json: try Self.userDocument("old", password: "old pass", roles: ["r"]), headers: boss)
    #expect(older.status == 201)
    let target = try await ServerProcess(
      db: directory.path("users-target.db"), ["--log-level", "none", "--admin", "root"],
      environment: ["SETTEE_ADMIN_PASSWORD": "root pass"])
    let root = Self.basic("root", "root pass")
    let sourceURL = source.url.replacingOccurrences(of: "http://", with: "http://boss:boss%20pass@")
    let replicated = try await target.request(
      "POST", "/_replicate",
      json: ["source": .string(sourceURL + "_users"), "target": "_users", "create_target": true],
      headers: root)
    #expect(replicated.status == 200, "\(replicated.json)")
    // The two users and `_design/_auth`, as from a CouchDB.
    #expect(replicated.json["history"]?[0]?["docs_written"] == 3)
    for (name, password, roles) in [("ann", "ann pass", [] as [JSON]), ("old", "old pass", ["r"])] {
      let who = try await target.request("GET", "/_session", headers: Self.basic(name, password))
      #expect(who.json["userCtx"] == ["name": .string(name), "roles": .array(roles)], "\(name)")
    }
  }

  @Test func databaseSecurityDecidesWhoReadsAndWrites() async throws {
    let (server, boss) = try await serverWithUsers("security.db")
    for (name, roles) in [("ann", [String]()), ("bob", ["editors"]), ("cat", [])] {
      let made = try await server.request(
        "PUT", "/_users/org.couchdb.user:\(name)",
        json: try Self.userDocument(name, password: "\(name) pass", roles: roles), headers: boss)
      #expect(made.status == 201, "\(made.json)")
    }
    let ann = Self.basic("ann", "ann pass")
    let bob = Self.basic("bob", "bob pass")
    let cat = Self.basic("cat", "cat pass")
    #expect(try await server.request("PUT", "/notes", headers: boss).status == 201)

    // A new database is its administrators' (CouchDB 3's admin_only default).
    #expect(
      try await server.request("GET", "/notes/_security", headers: boss).json
        == .object(SecurityObject.adminOnly))
    let anonymous = try await server.get("/notes")
    #expect(anonymous.status == 401 && anonymous.error == "unauthorized")
    #expect(anonymous.json["reason"] == "You are not authorized to access this db.")
    let named = try await server.request("GET", "/notes", headers: ann)
    #expect(named.status == 403 && named.error == "forbidden")
    #expect(named.json["reason"] == "You are not allowed to access this db.")
    #expect(try await server.request("GET", "/missing", headers: ann).status == 404)
    let create = try await server.request("PUT", "/other", headers: ann)
    #expect(create.status == 401 && create.json["reason"] == "You are not a server admin.")

    // Members by role, an admin by name.
    let security: JSON = [
      "members": ["names": [], "roles": ["editors"]], "admins": ["names": ["ann"], "roles": []],
    ]
    let bad = try await server.request(
      "PUT", "/notes/_security", json: ["members": ["names": "bob"]], headers: boss)
    #expect(bad.status == 400)
    #expect(
      try await server.request("PUT", "/notes/_security", json: security, headers: boss).status
        == 200)
    #expect(try await server.request("GET", "/notes/_security", headers: bob).json == security)
    #expect(
      try await server.request("PUT", "/notes/n1", json: ["a": 1], headers: bob).status == 201)
    #expect(try await server.request("GET", "/notes/n1", headers: ann).status == 200)
    #expect(try await server.request("GET", "/notes/n1", headers: cat).status == 403)
    #expect(try await server.get("/notes/n1").status == 401)

    // Design documents, _security and _revs_limit are the database admins'.
    let design: JSON = [
      "validate_doc_update": """
      function (newDoc, oldDoc, userCtx, secObj) {
        if (userCtx.roles.indexOf('_admin') === -1 && secObj.admins.names.indexOf(userCtx.name) === -1
            && newDoc.author !== userCtx.name) {
          throw({forbidden: 'author must be ' + userCtx.name + ' (' + userCtx.roles.join(',') + ')'});
        }
      }
      """
    ]
    let byMember = try await server.request(
      "PUT", "/notes/_design/rules", json: design, headers: bob)
    #expect(
      byMember.status == 403 && byMember.json["reason"] == "You are not a db or server admin.")
    #expect(
      try await server.request("PUT", "/notes/_security", json: [:], headers: bob).status == 403)
    #expect(
      try await server.request("PUT", "/notes/_revs_limit", json: 5, headers: bob).status == 403)
    #expect(
      try await server.request("POST", "/notes/_compact", json: [:], headers: bob).status == 401)
    let bulk = try await server.request(
      "POST", "/notes/_bulk_docs",
      json: ["docs": [["_id": "_design/sneaky"], ["_id": "n2", "author": "bob"]]], headers: bob)
    #expect(bulk.status == 201)
    #expect(bulk.json[0]?["error"] == "forbidden" && bulk.json[1]?["ok"] == true, "\(bulk.json)")
    guard DesignFunctions.isAvailable else { return }
    let byAdmin = try await server.request(
      "PUT", "/notes/_design/rules", json: design, headers: ann)
    #expect(byAdmin.status == 201, "\(byAdmin.json)")

    // validate_doc_update sees the user's name and roles.
    #expect(
      try await server.request("PUT", "/notes/n3", json: ["author": "bob"], headers: bob).status
        == 201)
    let forged = try await server.request("PUT", "/notes/n4", json: ["author": "ann"], headers: bob)
    #expect(forged.status == 403 && forged.json["reason"] == "author must be bob (editors)")
    #expect(
      try await server.request("PUT", "/notes/n4", json: ["author": "x"], headers: ann).status
        == 201)
  }

  /// A user document `a` with `changes` (a `nil` value removes the member).
  static func user(_ changes: [String: JSON?] = [:]) -> JSONObject {
    var document: JSONObject = [
      "_id": "org.couchdb.user:a", "type": "user", "name": "a", "roles": [],
    ]
    for (key, value) in changes { document[key] = value }
    return document
  }

  static let authCases: [(JSONObject, String?)] = [
    (user(), nil),
    (user(["type": "admin"]), "doc.type must be user"),
    (user(["name": nil]), "doc.name is required"),
    (user(["roles": nil]), "doc.roles must exist"),
    (user(["roles": "x"]), "doc.roles must be an array"),
    (user(["roles": [1]]), "doc.roles can only contain strings"),
    (user(["_id": "org.couchdb.user:b"]), "Doc ID must be of the form org.couchdb.user:name"),
    (user(["password_scheme": "md5"]), "Password scheme `md5` not supported."),
    (user(["password_scheme": "pbkdf2", "derived_key": "x"]), "iterations must be a number."),
    (user(["password_scheme": "pbkdf2", "iterations": 10]), "derived_key must be a string."),
    (user(["roles": ["_admin"]]), "No system roles (starting with underscore) in users db."),
    (user(["roles": ["_metrics"]]), nil),
    (
      user(["name": "_a", "_id": "org.couchdb.user:_a"]), "Username may not start with underscore."
    ),
    (
      user(["name": "a:b", "_id": "org.couchdb.user:a:b"]),
      "Character `:` is not allowed in usernames."
    ),
  ]

  /// CouchDB's `_auth` validation, case by case, with its words.
  @Test(arguments: authCases)
  func authValidation(_ document: JSONObject, _ reason: String?) {
    let refusal = UsersDatabase.refusal(
      of: document, replacing: nil, by: .administrator, isAdmin: true)
    #expect(refusal == reason)
  }

  /// The session cookie's expiry as CouchDB 3.5 wrote it in the recordings
  /// (`Expires=Sat, 28-Nov-2026 01:00:31 GMT; Max-Age=600`).
  @Test func sessionCookiesExpireAsCouchDBs() {
    #expect(Authenticator.cookieDate(1_795_827_631) == "Sat, 28-Nov-2026 01:00:31 GMT")
    #expect(Authenticator.cookieDate(0) == "Thu, 01-Jan-1970 00:00:00 GMT")
    let cookie = Authenticator.setCookie("t", now: 1_795_827_031)
    #expect(
      cookie
        == "AuthSession=t; Version=1; Expires=Sat, 28-Nov-2026 01:00:31 GMT; Max-Age=600; Path=/; HttpOnly"
    )
  }

  @Test func nonAdministratorsChangeOnlyTheirOwnDocumentAndNotItsRoles() {
    let old: JSONObject = [
      "type": "user", "name": "a", "roles": ["x"], "_id": "org.couchdb.user:a",
    ]
    var edited = old
    edited["roles"] = ["x", "y"]
    let owner = UserContext(name: "a", roles: ["x"])
    #expect(
      UsersDatabase.refusal(of: old, replacing: old, by: owner, isAdmin: false) == nil)
    #expect(
      UsersDatabase.refusal(of: edited, replacing: old, by: owner, isAdmin: false)
        == "Only _admin may edit roles")
    #expect(
      UsersDatabase.refusal(of: old, replacing: old, by: UserContext(name: "b"), isAdmin: false)
        == "You may only update your own user document.")
    var renamed = old
    renamed["name"] = "b"
    renamed["_id"] = "org.couchdb.user:b"
    #expect(
      UsersDatabase.refusal(of: renamed, replacing: old, by: .administrator, isAdmin: true)
        == "Usernames can not be changed.")
    let deletion: JSONObject = ["_id": "org.couchdb.user:a", "_deleted": true]
    #expect(UsersDatabase.refusal(of: deletion, replacing: old, by: owner, isAdmin: false) == nil)
    #expect(
      UsersDatabase.refusal(
        of: deletion, replacing: old, by: UserContext(name: "b"), isAdmin: false)
        == "Only admins may delete other user docs.")
  }
}
