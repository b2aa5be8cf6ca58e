import Foundation
import Settee
import SetteeCore
import SetteeTestSupport
import Testing

/// An administrator configured: Basic and cookie authentication, what is the
/// administrators' refused without them; and CORS for browsers.
@Suite("settee serve: authentication and CORS")
struct ServerAuthTests {
  let directory = TemporaryDirectory()

  static func basic(_ name: String, _ password: String) -> [String: String] {
    ["Authorization": "Basic " + Data("\(name):\(password)".utf8).base64EncodedString()]
  }

  @Test func adminRequiresCredentials() async throws {
    let path = directory.path("auth.db")
    let server = try await ServerProcess(
      db: path, ["--log-level", "none", "--admin", "boss"],
      environment: ["SETTEE_ADMIN_PASSWORD": "s3cret pass"])
    let good = Self.basic("boss", "s3cret pass")

    // Without credentials, as CouchDB 3 answers an anonymous client: the welcome, and 401
    // with CouchDB's body for what is the administrators'. A database that does not exist
    // is 404 (CouchDB says so before it checks who asks).
    #expect(try await server.get("/").json["couchdb"] == "Welcome")
    for (method, path) in [("GET", "/_all_dbs"), ("PUT", "/db"), ("GET", "/_active_tasks")] {
      let answer = try await server.request(method, path, json: method == "GET" ? nil : [:])
      #expect(answer.status == 401, "\(method) \(path)")
      #expect(answer.json == ["error": "unauthorized", "reason": "You are not a server admin."])
      #expect(answer.headers["www-authenticate"] == nil)
    }
    #expect(try await server.get("/db/doc").status == 404)
    #expect(try await server.get("/_up").status == 200)
    #expect(try await server.get("/_session").json["userCtx"] == ["name": .null, "roles": []])
    #expect(
      try await server.request("GET", "/", headers: Self.basic("boss", "wrong")).status == 401)
    #expect(
      try await server.request("GET", "/", headers: Self.basic("nobody", "s3cret pass")).status
        == 401)

    // Basic authentication.
    #expect(try await server.request("PUT", "/db", headers: good).status == 201)
    // A database is its administrators' (CouchDB 3's admin_only default).
    for (method, path) in [("GET", "/db/doc"), ("POST", "/db/_find"), ("GET", "/db")] {
      let answer = try await server.request(method, path, json: method == "GET" ? nil : [:])
      #expect(answer.status == 401, "\(method) \(path)")
      #expect(
        answer.json == [
          "error": "unauthorized", "reason": "You are not authorized to access this db.",
        ])
    }
    #expect(try await server.request("GET", "/_all_dbs", headers: good).json == ["db"])
    let who = try await server.request("GET", "/_session", headers: good).json
    #expect(who["userCtx"] == ["name": "boss", "roles": ["_admin"]])
    #expect(who["info"]?["authenticated"] == "default")

    // Cookie authentication: JSON and form logins.
    let refused = try await server.post("/_session", ["name": "boss", "password": "nope"])
    #expect(refused.status == 401 && refused.json["reason"] == "Name or password is incorrect.")
    let login = try await server.post("/_session", ["name": "boss", "password": "s3cret pass"])
    #expect(login.json == ["ok": true, "name": "boss", "roles": ["_admin"]])
    let setCookie = try #require(login.headers["set-cookie"])
    #expect(setCookie.hasPrefix("AuthSession=") && setCookie.contains("HttpOnly"))
    let cookie = String(setCookie.split(separator: ";")[0])
    #expect(try await server.request("GET", "/db", headers: ["Cookie": cookie]).status == 200)
    let viaCookie = try await server.request("GET", "/_session", headers: ["Cookie": cookie]).json
    #expect(viaCookie["info"]?["authenticated"] == "cookie")
    let form = try await server.request(
      "POST", "/_session", body: Array("name=boss&password=s3cret+pass".utf8),
      headers: ["Content-Type": "application/x-www-form-urlencoded"])
    #expect(form.status == 200 && form.headers["set-cookie"] != nil)
    // A cookie changed by a byte is refused.
    var tampered = Array(cookie.utf8)
    tampered[tampered.count - 3] =
      tampered[tampered.count - 3] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
    #expect(
      try await server.request(
        "GET", "/db", headers: ["Cookie": String(decoding: tampered, as: UTF8.self)]
      ).status == 401)
    // A cookie that is not one at all is CouchDB's 400, even beside good credentials; one
    // that decodes but does not hold is anonymous.
    for malformed in ["%%%", "bm9jb2xvbg", "YTpi"] {
      let answer = try await server.request(
        "GET", "/db", headers: good.merging(["Cookie": "AuthSession=" + malformed]) { a, _ in a })
      #expect(answer.status == 400, "\(malformed)")
      #expect(
        answer.json == [
          "error": "bad_request",
          "reason": "Malformed AuthSession cookie. Please clear your cookies.",
        ])
    }
    let forged = Data("boss:FFFFFFFF:abc".utf8).base64EncodedString()
      .replacingOccurrences(of: "=", with: "")
    #expect(
      try await server.request("GET", "/_session", headers: ["Cookie": "AuthSession=" + forged])
        .json["userCtx"] == ["name": .null, "roles": []])
    let logout = try await server.request("DELETE", "/_session", headers: ["Cookie": cookie])
    #expect(logout.headers["set-cookie"]?.contains("Max-Age=0") == true)

    // The file keeps the administrator (a hash, never the password): a restart without
    // --admin still asks.
    server.stop()
    let metadata = try await SetteeBinary.run(["--db", path, "metadata", "get", "couchdb:admins"])
    #expect(metadata.stdout.contains("pbkdf2") && !metadata.stdout.contains("s3cret"))
    let again = try await ServerProcess(db: path)
    #expect(try await again.get("/db").status == 401)
    #expect(try await again.request("GET", "/db", headers: good).status == 200)
  }

  /// CouchDB 3.4's lockout: five failed logins for a name from one address refuse that
  /// address the name, right password or not (Basic and `_session` alike), without
  /// locking out another name.
  /// What tools and replicators probe before anything else: `/_membership` and the
  /// node's configuration, read-only, for administrators (CouchDB's rule).
  @Test func membershipAndTheNodesConfiguration() async throws {
    let server = try await ServerProcess(
      db: directory.path("node.db"),
      ["--log-level", "none", "--admin", "boss", "--max-request-size", "1048576"],
      environment: ["SETTEE_ADMIN_PASSWORD": "pass"])
    let boss = Self.basic("boss", "pass")
    for path in ["/_membership", "/_node/_local/_config", "/_node/_local"] {
      #expect(try await server.get(path).status == 401, "\(path)")
    }
    let membership = try await server.request("GET", "/_membership", headers: boss).json
    #expect(
      membership == ["all_nodes": ["nonode@nohost"], "cluster_nodes": ["nonode@nohost"]])
    #expect(
      try await server.request("GET", "/_node/_local", headers: boss).json
        == ["name": "nonode@nohost"])
    let config = try await server.request("GET", "/_node/_local/_config", headers: boss)
    #expect(config.status == 200)
    #expect(config.json["chttpd"]?["max_http_request_size"] == "1048576")
    #expect(config.json["chttpd_auth"]?["authentication_db"] == "_users")
    #expect(config.json["admins"] == nil)
    let uuid = try await server.get("/").json["uuid"]
    for (path, value): (String, JSON) in [
      ("/_node/_local/_config/couchdb/uuid", uuid ?? .null),
      ("/_node/nonode@nohost/_config/chttpd/require_valid_user", "false"),
      ("/_node/_local/_config/chttpd_auth_lockout/threshold", "5"),
    ] {
      #expect(try await server.request("GET", path, headers: boss).json == value, "\(path)")
    }
    let section = try await server.request("GET", "/_node/_local/_config/httpd", headers: boss)
    #expect(section.json == ["enable_cors": "false"])
    let missing = try await server.request(
      "GET", "/_node/_local/_config/couchdb/nope", headers: boss)
    #expect(missing.status == 404)
    #expect(
      try await server.request("GET", "/_node/other@host/_config", headers: boss).status == 404)
    let change = try await server.request(
      "PUT", "/_node/_local/_config/couchdb/max_document_size", json: "1", headers: boss)
    #expect(change.status == 405 && change.json["error"] == "method_not_allowed")
  }

  @Test func repeatedFailuresLockTheClientOut() async throws {
    // The administrator's hash is stored with 1,000 PBKDF2 iterations (by Python's
    // hashlib, as CouchDB's format has it) instead of --admin's 100,000: what is tested is
    // the count of failures within the lockout's 300 s, which five 100,000-iteration
    // checks of a debug build could outlast while the whole suite ran on two cores.
    let path = directory.path("lockout.db")
    let salt = "00112233445566778899aabbccddeeff"
    let key = try Self.python(
      "import hashlib; print(hashlib.pbkdf2_hmac('sha256', b'right', bytes.fromhex('\(salt)'), 1000).hex())"
    )
    do {
      let database = try Database(path: path)
      try await database.setMetadata(
        [
          "boss": [
            "password_scheme": "pbkdf2", "pbkdf2_prf": "sha256", "derived_key": .string(key),
            "salt": .string(salt), "iterations": 1_000,
          ]
        ], forKey: "couchdb:admins")
      try await database.setMetadata(
        .string(String(repeating: "5a", count: 32)), forKey: "couchdb:secret")
    }
    let server = try await ServerProcess(db: path, ["--log-level", "none"])
    for attempt in 1...5 {
      let wrong = try await server.request("GET", "/", headers: Self.basic("boss", "wrong"))
      #expect(wrong.status == 401, "attempt \(attempt)")
    }
    let locked = try await server.request("GET", "/", headers: Self.basic("boss", "right"))
    #expect(locked.status == 403 && locked.error == "forbidden", "\(locked.json)")
    #expect(locked.json["reason"]?.stringValue?.contains("temporarily locked") == true)
    let login = try await server.post("/_session", ["name": "boss", "password": "right"])
    #expect(login.status == 403)
    // Another name is not locked by boss's failures.
    #expect(
      try await server.request("GET", "/", headers: Self.basic("other", "x")).status == 401)
  }

  @Test func corsForAllowedOrigins() async throws {
    let server = try await ServerProcess(
      db: directory.path("cors.db"), ["--log-level", "none", "--cors", "http://app.example"])
    let preflight = try await server.request(
      "OPTIONS", "/db/doc",
      headers: [
        "Origin": "http://app.example", "Access-Control-Request-Method": "PUT",
        "Access-Control-Request-Headers": "content-type",
      ])
    #expect(preflight.status == 204)
    #expect(preflight.headers["access-control-allow-origin"] == "http://app.example")
    #expect(preflight.headers["access-control-allow-methods"]?.contains("PUT") == true)
    #expect(preflight.headers["access-control-allow-headers"] == "content-type")
    let allowed = try await server.request("GET", "/", headers: ["Origin": "http://app.example"])
    #expect(allowed.headers["access-control-allow-origin"] == "http://app.example")
    #expect(allowed.headers["access-control-allow-credentials"] == "true")
    let other = try await server.request("GET", "/", headers: ["Origin": "http://evil.example"])
    #expect(other.headers["access-control-allow-origin"] == nil)
    // Every answer depends on Origin once CORS is on: caches must key on it.
    for answer in [preflight, allowed, other] { #expect(answer.headers["vary"] == "Origin") }
  }

  /// PBKDF2 runs off Swift's cooperative threads (issue 45): while four wrong passwords
  /// are checked (seconds each), a request that needs no credentials is answered at once;
  /// it waited for them when they held both threads. The administrator's hash is stored
  /// with 1,000,000 iterations (seconds a check in a debug build), so that the checks
  /// outlast the request however fast PBKDF2 is; only wrong passwords are sent, so its
  /// key need not derive from anything.
  @Test func passwordChecksHoldNoRequestThread() async throws {
    let path = directory.path("pbkdf2.db")
    do {
      let database = try Database(path: path)
      try await database.setMetadata(
        [
          "boss": [
            "password_scheme": "pbkdf2", "pbkdf2_prf": "sha256",
            "derived_key": .string(String(repeating: "00", count: 32)),
            "salt": "00112233445566778899aabbccddeeff", "iterations": 1_000_000,
          ]
        ], forKey: "couchdb:admins")
    }
    let server = try await ServerProcess(db: path, ["--log-level", "none"])
    defer { server.stop() }
    var guesses: [Int32] = []
    defer { for fd in guesses { close(fd) } }
    for guess in 0..<4 {
      let header = Self.basic("boss", "wrong \(guess)")["Authorization"]!
      guesses.append(
        try server.connectAndSend(
          Array(
            "GET /db HTTP/1.1\r\nHost: x\r\nAuthorization: \(header)\r\nConnection: close\r\n\r\n"
              .utf8)))
    }
    try await Task.sleep(for: .milliseconds(100))
    // Timed on the thread that sends, not across an `await`: resuming this task waits for
    // one of the cooperative threads, which the whole suite keeps busy (16 s once).
    let (up, seconds) = try await onThread {
      let started = Date()
      let up = try RawHTTP.send(WireMessage(method: "GET", path: "/_up"), to: server)
      return (up, Date().timeIntervalSince(started))
    }
    #expect(up.status == 200)
    // One check takes about 3 s in a debug build, and longer under the whole suite: a
    // request held behind four of them would wait for several.
    #expect(seconds < 2, "/_up waited \(seconds) s for password checks")
    // A bound only: four checks on two threads, beside the whole suite, took over 20 s.
    for fd in guesses {
      #expect(await server.receive(fd, timeout: 300).hasPrefix("HTTP/1.1 401"))
    }
  }

  /// What a Python one-liner prints, trimmed.
  static func python(_ script: String) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["python3", "-c", script]
    let output = ChildPipe()
    try process.run(output: output, errors: nil)
    let text = output.fileHandleForReading.readAllBytes()
    process.waitUntilExit()
    return String(decoding: text, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
  }
}
