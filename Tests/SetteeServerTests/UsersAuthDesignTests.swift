import Foundation
import Settee
import SetteeCore
import SetteeJavaScript
import SetteeTestSupport
import Testing

@testable import SetteeServer

/// `_users/_design/_auth` as CouchDB keeps it (written when `_users` is made and put back
/// when the server starts), its JavaScript the same rules as the server's Swift ones, and
/// users and roles told apart byte for byte, as CouchDB tells them apart.
@Suite("settee serve: _users/_design/_auth and exact names")
struct UsersAuthDesignTests {
  let directory = TemporaryDirectory()

  // MARK: - The JavaScript and the Swift rules agree

  static let names: [JSON?] = [
    "ann", "bob", "\u{E9}", "e\u{301}", "_x", "a:b", "a:\u{301}b", "_\u{301}x", "", 5, nil,
  ]
  static let roleLists: [JSON?] = [
    [], ["x"], ["x", "y"], ["y", "x"], ["\u{E9}"], ["e\u{301}"], ["_admin"], ["_metrics"],
    ["_\u{301}x"], [1], "x", .null, nil,
  ]
  static let schemes: [JSON?] = ["pbkdf2", "simple", "simple+pbkdf2", "md5", 7, .null, nil]

  /// A user document (or a deletion) built from random parts, some of them wrong.
  static func randomDocument(_ random: inout SplitMix64) -> JSONObject {
    var document: JSONObject = [:]
    let name = names.randomElement(using: &random)!
    if let name { document["name"] = name }
    let idName =
      Bool.random(using: &random)
      ? name?.stringValue
      : names.randomElement(
        using: &random)!?.stringValue
    document["_id"] = .string(UsersDatabase.idPrefix + (idName ?? "nobody"))
    if Int.random(in: 0..<8, using: &random) == 0 {
      return ["_id": document["_id"]!, "_deleted": true]
    }
    let types: [JSON?] = ["user", "user", "user", "admin", nil]
    if let type = types.randomElement(using: &random)! { document["type"] = type }
    if let roles = roleLists.randomElement(using: &random)! { document["roles"] = roles }
    if let scheme = schemes.randomElement(using: &random)! { document["password_scheme"] = scheme }
    let iterations: [JSON?] = [10, 10.5, "10", nil]
    if let count = iterations.randomElement(using: &random)! { document["iterations"] = count }
    let keys: [JSON?] = ["ab12", 3, nil]
    if let key = keys.randomElement(using: &random)! { document["derived_key"] = key }
    if Int.random(in: 0..<4, using: &random) == 0 { document["password_sha"] = "ab" }
    if Bool.random(using: &random) { document["salt"] = "cd" }
    return document
  }

  /// The writers: a server administrator, users by name (some of them canonically
  /// equivalent to others), a user holding a role, and an anonymous client.
  static let writers: [UserContext] = [
    .administrator, UserContext(name: "ann"), UserContext(name: "bob", roles: ["x"]),
    UserContext(name: "\u{E9}"), UserContext(name: "e\u{301}"), UserContext(name: "a:b"),
    UserContext(name: "boss", roles: ["keepers"]), UserContext(),
  ]
  static let securities: [JSONObject] = [
    [:], ["admins": ["names": ["\u{E9}"], "roles": ["keepers"]]],
  ]

  /// Thousands of writes, each judged by the JavaScript in `_design/_auth` and by
  /// ``UsersDatabase/refusal(of:replacing:by:isAdmin:)``: the same refusal, in the same
  /// words, or both accept.
  @Test(
    .enabled(
      if: DesignFunctions.isAvailable,
      "JavaScriptCore (libjavascriptcoregtk-4.1-0) is not installed"))
  func theJavaScriptRulesAreTheSwiftRules() async throws {
    let database = try Database(path: directory.path("rules.db"))
    let users = database.collection(UsersDatabase.name)
    try await users.put(UsersDatabase.authDesign)
    let rules = try await users.designValidation()
    #expect(rules.designDocuments == [UsersDatabase.authDesignID])
    var random = SplitMix64(seed: 57)
    var compared = 0
    var refused = Set<String>()
    for writer in Self.writers {
      for security in Self.securities {
        var writes: [ValidatedWrite] = []
        for _ in 0..<250 {
          let new = Self.randomDocument(&random)
          let old: JSONObject? = Bool.random(using: &random) ? nil : Self.randomDocument(&random)
          writes.append(ValidatedWrite(new, replacing: old?["_deleted"] == true ? nil : old))
        }
        let isAdmin = SecurityObject(security).isAdmin(writer)
        let byJavaScript = try await rules.validate(writes, as: writer, security: security)
        for (write, javaScript) in zip(writes, byJavaScript) {
          let swift = UsersDatabase.refusal(
            of: write.newDocument, replacing: write.oldDocument, by: writer, isAdmin: isAdmin)
          #expect(
            javaScript?.reason == swift,
            "\(write.newDocument) over \(write.oldDocument.map { "\($0)" } ?? "nothing") by \(writer)"
          )
          if javaScript != nil { #expect(javaScript?.kind == .forbidden) }
          if let swift { refused.insert(swift) }
          compared += 1
        }
      }
    }
    #expect(compared == 4_000)
    // The random writes reach every rule.
    #expect(refused.count >= 14, "\(refused.sorted())")
  }

  // MARK: - The design document on the wire

  func server(_ file: String) throws -> ServerProcess {
    try ServerProcess(
      db: directory.path(file), ["--log-level", "none", "--admin", "boss"],
      environment: ["SETTEE_ADMIN_PASSWORD": "boss pass"])
  }

  static let boss = ServerAuthTests.basic("boss", "boss pass")

  /// Made with `_users`, readable by administrators only, put back when the server
  /// starts; sign-up and logins work beside it with or without JavaScriptCore (its
  /// function, while it is Settee's, is enforced in Swift), and an edited one runs.
  @Test func authDesignIsKeptAsCouchDBKeepsIt() async throws {
    let path = directory.path("auth.db")
    var server = try server("auth.db")
    #expect(try await server.request("PUT", "/_users", headers: Self.boss).status == 201)
    let design = try await server.request("GET", "/_users/_design/_auth", headers: Self.boss)
    #expect(design.status == 200)
    #expect(design.json["language"] == "javascript")
    #expect(design.json["validate_doc_update"]?.stringValue == UsersDatabase.authValidation)
    #expect(design.json["_rev"]?.stringValue?.hasPrefix("1-") == true)
    let info = try await server.request("GET", "/_users", headers: Self.boss).json
    #expect(info["doc_count"] == 1)
    #expect(try await server.get("/_users/_design/_auth").status == 401)

    // Open sign-up, then a user signs up and reads their own document, but not the design.
    #expect(
      try await server.request(
        "PUT", "/_users/_security", json: ["members": ["roles": []]], headers: Self.boss
      ).status == 200)
    let ann = try ServerUsersTests.userDocument("ann", password: "ann pass", roles: [])
    #expect(try await server.put("/_users/org.couchdb.user:ann", ann).status == 201)
    let annAuth = ServerAuthTests.basic("ann", "ann pass")
    #expect(
      try await server.request("GET", "/_users/org.couchdb.user:ann", headers: annAuth).status
        == 200)
    let refused = try await server.request("GET", "/_users/_design/_auth", headers: annAuth)
    #expect(refused.status == 403)
    #expect(refused.error == "forbidden")
    // The rules hold (in Swift, JavaScriptCore or not).
    var bad = ann.objectValue!
    bad["_id"] = "org.couchdb.user:eve"
    bad["name"] = "eve"
    bad["roles"] = ["_admin"]
    let badAnswer = try await server.put("/_users/org.couchdb.user:eve", .object(bad))
    #expect(badAnswer.status == 403)
    #expect(badAnswer.json["reason"] == "Only _admin may set roles")

    // An administrator edits the function and adds a member of their own.
    var edited = design.json.objectValue!
    edited["validate_doc_update"] =
      "function (newDoc) { if (newDoc.name === 'carl') throw {forbidden: 'no carl'}; }"
    edited["comment"] = "kept"
    #expect(
      try await server.request(
        "PUT", "/_users/_design/_auth", json: .object(edited), headers: Self.boss
      ).status == 201)
    if DesignFunctions.isAvailable {
      let carl = try ServerUsersTests.userDocument("carl", password: "carl pass", roles: [])
      let carlAnswer = try await server.put("/_users/org.couchdb.user:carl", carl)
      #expect(carlAnswer.status == 403)
      #expect(carlAnswer.json["reason"] == "no carl")
    }

    // A restart puts Settee's function back and keeps the rest.
    server.stop()
    server = try await ServerProcess(
      db: path, ["--log-level", "none", "--admin", "boss"],
      environment: ["SETTEE_ADMIN_PASSWORD": "boss pass"])
    defer { server.stop() }
    let restored = try await server.request("GET", "/_users/_design/_auth", headers: Self.boss)
    #expect(restored.json["validate_doc_update"]?.stringValue == UsersDatabase.authValidation)
    #expect(restored.json["comment"] == "kept")
    #expect(restored.json["_rev"]?.stringValue?.hasPrefix("3-") == true)
    let carl = try ServerUsersTests.userDocument("carl", password: "carl pass", roles: [])
    #expect(try await server.put("/_users/org.couchdb.user:carl", carl).status == 201)
  }

  // MARK: - public_fields and users_db_public

  /// CouchDB's `public_fields`: another user's document reads as its `_id`, `_rev` and
  /// public members (`404` without any); `users_db_public` lets every user list `_users`,
  /// each row's document reduced to the public members alone, as CouchDB's rows are.
  @Test(arguments: [false, true])
  func publicFieldsShowWhatTheyName(listing: Bool) async throws {
    let file = "public-\(listing).db"
    let server = try await ServerProcess(
      db: directory.path(file),
      ["--log-level", "none", "--admin", "boss", "--users-public-fields", " nick ,email"]
        + (listing ? ["--users-db-public"] : []),
      environment: ["SETTEE_ADMIN_PASSWORD": "boss pass"])
    defer { server.stop() }
    try await Self.openUsers(server)
    var ann = Self.userDocument("ann", password: "ann pass").objectValue!
    ann["nick"] = "annie"
    let bob = Self.userDocument("bob", password: "bob pass")
    for (id, document) in [
      ("org.couchdb.user:ann", JSON.object(ann)), ("org.couchdb.user:bob", bob),
    ] {
      #expect(
        try await server.request("PUT", "/_users/" + id, json: document, headers: Self.boss).status
          == 201)
    }
    let bobAuth = ServerAuthTests.basic("bob", "bob pass")
    let annAuth = ServerAuthTests.basic("ann", "ann pass")
    let seen = try await server.request("GET", "/_users/org.couchdb.user:ann", headers: bobAuth)
    #expect(seen.status == 200)
    #expect(seen.json.objectValue?.map(\.key) == ["_id", "_rev", "nick"])
    #expect(seen.json["nick"] == "annie")
    let none = try await server.request("GET", "/_users/org.couchdb.user:bob", headers: annAuth)
    #expect(none.status == 404)
    #expect(none.error == "not_found")
    // The owner reads it whole; design documents stay the administrators'.
    let own = try await server.request("GET", "/_users/org.couchdb.user:bob", headers: bobAuth)
    #expect(own.json["derived_key"] != nil)
    #expect(
      try await server.request("GET", "/_users/_design/_auth", headers: bobAuth).status == 403)

    // `_bulk_get` reduces them one by one the same way.
    let bulk = try await server.request(
      "POST", "/_users/_bulk_get",
      json: ["docs": [["id": "org.couchdb.user:ann"], ["id": "org.couchdb.user:bob"]]],
      headers: annAuth)
    let results = bulk.json["results"]?.arrayValue ?? []
    #expect(results.first?["docs"]?[0]?["ok"]?["derived_key"] != nil, "\(bulk.text)")
    #expect(results.last?["docs"]?[0]?["error"]?["error"] == "not_found", "\(bulk.text)")
    let reduced = try await server.request(
      "POST", "/_users/_bulk_get",
      json: ["docs": [["id": "org.couchdb.user:ann", "rev": seen.json["_rev"] ?? .null]]],
      headers: bobAuth)
    #expect(
      reduced.json["results"]?[0]?["docs"]?[0]?["ok"]?.objectValue?.map(\.key)
        == ["_id", "_rev", "nick"], "\(reduced.text)")

    let config = try await server.request(
      "GET", "/_node/_local/_config/chttpd_auth", headers: Self.boss
    ).json
    #expect(config["public_fields"] == "nick, email")
    #expect(config["users_db_public"] == .string(listing ? "true" : "false"))

    let list = try await server.request(
      "GET", "/_users/_all_docs?include_docs=true", headers: bobAuth)
    guard listing else {
      #expect(list.status == 403)
      #expect(list.json["reason"] == "Only admins can access _all_docs of system databases.")
      return
    }
    #expect(list.status == 200)
    let rows = list.json["rows"]?.arrayValue ?? []
    #expect(
      rows.map { $0["id"] }
        == ["_design/_auth", "org.couchdb.user:ann", "org.couchdb.user:bob"])
    #expect(rows.map { $0["doc"] } == [[:], ["nick": "annie"], [:]])
    let whole = try await server.request(
      "GET", "/_users/_all_docs?include_docs=true", headers: Self.boss
    ).json
    #expect(whole["rows"]?[2]?["doc"]?["derived_key"] != nil)
  }

  // MARK: - Names and roles are bytes

  /// "é" as one code point and as `e` with a combining accent are two users to CouchDB,
  /// and to Settee: neither is the other's `_security` member or admin, neither writes
  /// the other's user document, and their failed logins are counted apart. A Basic
  /// password that starts with a combining mark logs in.
  @Test func canonicallyEquivalentNamesAreTwoUsers() async throws {
    let composed = "\u{E9}"
    let decomposed = "e\u{301}"
    let server = try server("names.db")
    defer { server.stop() }
    try await Self.openUsers(server)
    for (name, password) in [(composed, "first"), (decomposed, "\u{301}second")] {
      let document = Self.userDocument(name, password: password)
      let id = "org.couchdb.user:" + name
      let answer = try await server.request(
        "PUT", "/_users/" + Self.escape(id), json: document, headers: Self.boss)
      #expect(answer.status == 201, "\(answer.json)")
    }
    let owner = ServerAuthTests.basic(composed, "first")
    let impostor = ServerAuthTests.basic(decomposed, "\u{301}second")
    #expect(
      try await server.request("GET", "/_session", headers: impostor).json["userCtx"]?["name"]
        == .string(decomposed))

    // A database whose only member and admin is the composed name.
    #expect(try await server.request("PUT", "/vault", headers: Self.boss).status == 201)
    #expect(
      try await server.request(
        "PUT", "/vault/_security",
        json: [
          "members": ["names": [.string(composed)]], "admins": ["names": [.string(composed)]],
        ],
        headers: Self.boss
      ).status == 200)
    #expect(
      try await server.request("PUT", "/vault/secret", json: ["v": 1], headers: owner).status
        == 201)
    #expect(try await server.request("GET", "/vault/secret", headers: owner).status == 200)
    #expect(try await server.request("GET", "/vault/secret", headers: impostor).status == 403)
    #expect(try await server.request("GET", "/vault/_security", headers: impostor).status == 403)

    // The impostor cannot take the owner's user document (a new password would take the
    // account).
    let stolen = try await server.request(
      "GET", "/_users/" + Self.escape("org.couchdb.user:" + composed), headers: owner
    ).json
    var takeover = Self.userDocument(composed, password: "mine").objectValue!
    takeover["_rev"] = stolen["_rev"]
    let answer = try await server.request(
      "PUT", "/_users/" + Self.escape("org.couchdb.user:" + composed), json: .object(takeover),
      headers: impostor)
    #expect(answer.status == 404, "\(answer.json)")
    #expect(try await server.request("GET", "/vault/secret", headers: owner).status == 200)

    // Failed logins of one name do not lock the other out.
    let wrong = ServerAuthTests.basic(decomposed, "wrong")
    for _ in 0..<Lockout.threshold {
      _ = try await server.request("GET", "/_session", headers: wrong)
    }
    #expect(try await server.request("GET", "/_session", headers: impostor).status == 403)
    #expect(try await server.request("GET", "/_session", headers: owner).status == 200)
  }

  /// Names and roles compared as bytes, in Swift.
  @Test func securityGroupsCompareBytes() {
    let group = SecurityObject.Group(["names": ["\u{E9}"], "roles": ["\u{212A}ey"]])
    #expect(group.includes(UserContext(name: "\u{E9}")))
    #expect(!group.includes(UserContext(name: "e\u{301}")))
    #expect(group.includes(UserContext(name: "x", roles: ["\u{212A}ey"])))
    // The Kelvin sign is canonically equivalent to the letter K.
    #expect(!group.includes(UserContext(name: "x", roles: ["Key"])))
    #expect(UsersDatabase.userName(ofID: "org.couchdb.user:a:\u{301}b") == "a:\u{301}b")
    #expect(
      Lockout.key(client: "c", name: "\u{E9}") != Lockout.key(client: "c", name: "e\u{301}"))
  }

  /// A user document whose PBKDF2-SHA-256 hash (1,000 iterations) is made here: the
  /// passwords hold text Python's `b''` literals cannot.
  static func userDocument(_ name: String, password: String) -> JSON {
    let salt = "00112233445566778899aabbccddeeff"
    let key = SHA256.pbkdf2(
      password: Array(password.utf8), salt: Array(salt.utf8), iterations: 1_000)
    return [
      "_id": .string(UsersDatabase.idPrefix + name), "name": .string(name), "type": "user",
      "roles": [], "password_scheme": "pbkdf2", "pbkdf2_prf": "sha256", "iterations": 1_000,
      "salt": .string(salt), "derived_key": .string(key.hex),
    ]
  }

  /// Creates `_users` and lets users in: CouchDB 3 makes it admin-only.
  static func openUsers(_ server: ServerProcess) async throws {
    #expect(try await server.request("PUT", "/_users", headers: boss).status == 201)
    #expect(
      try await server.request(
        "PUT", "/_users/_security", json: ["members": ["roles": []]], headers: boss
      ).status == 200)
  }

  static func escape(_ id: String) -> String {
    id.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? id
  }
}
