import Foundation
import HTTPTypes
import SetteeCore

/// Session cookies (`AuthSession`): made, read and checked as CouchDB makes them.
extension Authenticator {
  static func cookie(_ headers: HTTPFields, named name: String) -> String? {
    for field in headers[values: .cookie] {
      for pair in field.split(separator: ";") {
        let parts = pair.split(separator: "=", maxSplits: 1).map {
          $0.trimmingCharacters(in: .whitespaces)
        }
        if parts.count == 2 && parts[0] == name { return parts[1] }
      }
    }
    return nil
  }

  /// A session token for `account`: base64url of `name:issued-hex:` and the HMAC of
  /// `name:issued-hex` under the secret and the account's salt (a changed password ends
  /// the account's sessions, as in CouchDB).
  func makeToken(_ name: String, _ account: Account, now: Int64) -> String {
    let payload = "\(name):\(String(now, radix: 16, uppercase: true))"
    let signature = SHA256.hmac(key: secret + account.salt, Array(payload.utf8))
    return Self.base64url(Array((payload + ":").utf8) + signature)
  }

  /// The name, issue time and account of a valid, unexpired token.
  func session(_ token: String, now: Int64) async -> (String, Int64, Account)? {
    guard let bytes = Self.unbase64url(token), admins.isEmpty == false else { return nil }
    guard let first = bytes.firstIndex(of: UInt8(ascii: ":")),
      let second = bytes[(first + 1)...].firstIndex(of: UInt8(ascii: ":"))
    else { return nil }
    let name = String(decoding: bytes[..<first], as: UTF8.self)
    let time = String(decoding: bytes[(first + 1)..<second], as: UTF8.self)
    guard let issued = Int64(time, radix: 16), let account = await account(named: name) else {
      return nil
    }
    let signature = Array(bytes[(second + 1)...])
    let expected = SHA256.hmac(key: secret + account.salt, Array(bytes[..<second]))
    guard SHA256.constantTimeEqual(signature, expected), now - issued < Self.sessionTimeout,
      issued <= now + 60
    else { return nil }
    return (name, issued, account)
  }

  /// CouchDB's `Set-Cookie` for a session issued at `now`: persistent for the session's
  /// life (`allow_persistent_cookies`, on by default), so that a browser keeps it across a
  /// restart until it expires.
  static func setCookie(_ token: String, now: Int64) -> String {
    "AuthSession=\(token); Version=1; Expires=\(cookieDate(now + sessionTimeout)); Max-Age=\(sessionTimeout); Path=/; HttpOnly"
  }

  /// A cookie's date as CouchDB writes it: `Sat, 28-Nov-2026 01:00:31 GMT`.
  static func cookieDate(_ seconds: Int64) -> String {
    var time = time_t(seconds)
    var parts = tm()
    gmtime_r(&time, &parts)
    let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    let months = [
      "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ]
    func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
    return
      "\(days[Int(parts.tm_wday)]), \(two(parts.tm_mday))-\(months[Int(parts.tm_mon)])-\(parts.tm_year + 1900) \(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
  }

  static func base64url(_ bytes: [UInt8]) -> String {
    Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
      .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
  }

  static func unbase64url(_ text: String) -> [UInt8]? {
    var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(
      of: "_", with: "/")
    while base64.count % 4 != 0 { base64 += "=" }
    return Data(base64Encoded: base64).map(Array.init)
  }
}
