import Foundation
import HTTPTypes
import Hummingbird
import Settee
import SetteeCore

extension CouchHandler {
  // MARK: - Session

  /// `/_session`: who is asking (GET), a login setting an `AuthSession` cookie (POST, JSON
  /// or form-encoded `name` and `password`), a logout clearing it (DELETE).
  func session(
    _ request: CouchRequest, _ identity: Authenticator.Identity?, client: String?
  ) async throws -> Response {
    try allow(request, "GET,HEAD,POST,DELETE")
    let handlers: JSON = ["cookie", "default"]
    switch request.method {
    case .delete:
      return CouchResponse.json(
        ["ok": true],
        headers: [.setCookie: "AuthSession=; Version=1; Path=/; HttpOnly; Max-Age=0"])
    case .post:
      let (name, password) = try await credentials(request)
      guard authenticator.isEnabled,
        let account = try await authenticator.authenticate(name, password, client: client)
      else {
        throw CouchError(.unauthorized, "unauthorized", "Name or password is incorrect.")
      }
      let now = Int64(Date().timeIntervalSince1970)
      let token = authenticator.makeToken(name, account, now: now)
      return CouchResponse.json(
        ["ok": true, "name": .string(name), "roles": .array(account.roles.map(JSON.string))],
        headers: [.setCookie: Authenticator.setCookie(token, now: now)])
    default:
      guard authenticator.isEnabled else {
        // No administrator: every client on loopback is one (CouchDB's "admin party").
        return CouchResponse.json([
          "ok": true, "userCtx": ["name": .null, "roles": ["_admin"]],
          "info": ["authentication_handlers": handlers, "authenticated": "default"],
        ])
      }
      guard let identity else {
        return CouchResponse.json([
          "ok": true, "userCtx": ["name": .null, "roles": []],
          "info": ["authentication_handlers": handlers],
        ])
      }
      var response = CouchResponse.json([
        "ok": true,
        "userCtx": [
          "name": .string(identity.name), "roles": .array(identity.roles.map(JSON.string)),
        ],
        "info": ["authentication_handlers": handlers, "authenticated": .string(identity.method)],
      ])
      if let cookie = identity.renewedCookie { response.headers[.setCookie] = cookie }
      return response
    }
  }

  /// `name` (or `username`) and `password` from a JSON or form-encoded body (Hummingbird's
  /// `URLEncodedFormDecoder`).
  private func credentials(_ request: CouchRequest) async throws -> (String, String) {
    let type = (request.headers[.contentType] ?? "").lowercased()
    var login: Login
    if type.hasPrefix("application/x-www-form-urlencoded") {
      let text = String(decoding: try await request.bodyBytes(), as: UTF8.self)
      do { login = try URLEncodedFormDecoder().decode(Login.self, from: text) } catch {
        throw CouchError(.badRequest, "bad_request", "the login form is malformed")
      }
    } else {
      let body = try await request.jsonObjectBody()
      login = Login(
        name: body["name"]?.stringValue, username: body["username"]?.stringValue,
        password: body["password"]?.stringValue)
    }
    // CouchDB takes `username` as well (Cloudant's session authenticator sends it).
    guard let name = login.username ?? login.name, let password = login.password else {
      throw CouchError(.badRequest, "bad_request", "a login needs name and password")
    }
    return (name, password)
  }
}

/// What a login sends.
private struct Login: Decodable {
  var name: String?
  var username: String?
  var password: String?
}
