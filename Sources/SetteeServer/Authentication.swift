import Foundation
import HTTPTypes
import Hummingbird
import Settee
import SetteeCore

/// The server's administrators, its users and their sessions, as CouchDB keeps them:
/// administrators' names with PBKDF2 password hashes (stored in the file's metadata under
/// `couchdb:admins`, never the password), users in the `_users` database
/// (``UsersDatabase``), Basic authentication, and `AuthSession` cookies signed with
/// HMAC-SHA-256 under the file's `couchdb:secret` and the account's salt, valid for
/// ``sessionTimeout`` seconds and renewed as CouchDB renews them.
struct Authenticator: Sendable {
  /// One account's stored hash: an administrator's, or a user's from `_users`.
  struct Account: Sendable, Hashable {
    /// How a password was hashed.
    enum Scheme: Sendable, Hashable {
      /// PBKDF2-HMAC-SHA-256: what Settee writes, and CouchDB since 3.4.
      case pbkdf2SHA256
      /// PBKDF2-HMAC-SHA-1: what CouchDB wrote before 3.4 (`pbkdf2_prf` absent or `sha`).
      case pbkdf2SHA1
      /// CouchDB 1's `simple`: `password_sha`, the SHA-1 of the password and the salt.
      case simple
    }

    var salt: [UInt8]
    var derivedKey: [UInt8]
    var iterations: Int
    /// What the account may do: `_admin` for an administrator, a user's `roles`.
    var roles: [String]
    var scheme = Scheme.pbkdf2SHA256

    var json: JSON {
      [
        "password_scheme": "pbkdf2", "pbkdf2_prf": "sha256", "derived_key": .string(derivedKey.hex),
        "salt": .string(salt.hex), "iterations": .int(Int64(iterations)),
      ]
    }

    init(
      salt: [UInt8], derivedKey: [UInt8], iterations: Int, roles: [String] = ["_admin"],
      scheme: Scheme = .pbkdf2SHA256
    ) {
      self.salt = salt
      self.derivedKey = derivedKey
      self.iterations = iterations
      self.roles = roles
      self.scheme = scheme
    }

    init?(json: JSON) {
      guard let salt = json["salt"]?.stringValue.flatMap({ [UInt8](hex: $0) }),
        let key = json["derived_key"]?.stringValue.flatMap({ [UInt8](hex: $0) }),
        let iterations = json["iterations"]?.intValue, iterations > 0
      else { return nil }
      self.init(salt: salt, derivedKey: key, iterations: iterations)
    }

    /// Whether checking a password against this hash costs less than against `other`
    /// (PBKDF2-HMAC-SHA-256 with fewer iterations, or an older scheme).
    func isCheaper(than other: Account) -> Bool {
      scheme != .pbkdf2SHA256 || iterations < other.iterations
    }

    func matches(_ password: String) -> Bool {
      let password = Array(password.utf8)
      let derived =
        switch scheme {
        case .pbkdf2SHA256: SHA256.pbkdf2(password: password, salt: salt, iterations: iterations)
        case .pbkdf2SHA1: SHA1.pbkdf2(password: password, salt: salt, iterations: iterations)
        case .simple: SHA1.hash(password + salt)
        }
      return SHA256.constantTimeEqual(derived, derivedKey)
    }
  }

  static let adminsKey = "couchdb:admins"
  static let secretKey = "couchdb:secret"
  /// PBKDF2 iterations for a new password hash.
  static let iterations = 100_000
  /// How long a session cookie is valid, in seconds (CouchDB's default).
  static let sessionTimeout: Int64 = 600

  let admins: [String: Account]
  let secret: [UInt8]
  /// The user named so in `_users`, with the hash a password is checked against; `nil`
  /// when there is none (or its hash is not one Settee checks).
  var users: @Sendable (String) async -> Account? = { _ in nil }
  /// Stores a new hash of user `name`'s password, given after it was checked, in the
  /// current scheme (CouchDB 3.4's `upgrade_hash_on_auth`), and gives the account as now
  /// stored; `nil` when it could not be stored (the old hash stays, and still logs in).
  var upgrade: @Sendable (_ name: String, _ password: String) async -> Account? = { _, _ in nil }
  /// Told of every hash a password is checked against (the account's, a decoy's): what a
  /// check costs is their schemes and iterations, which tests count instead of timing
  /// checks on a loaded machine.
  var checked: @Sendable (_ hash: Account) -> Void = { _ in }
  /// Basic credentials already verified (keyed by a digest of them): PBKDF2 runs once per
  /// credential, not once per request.
  private let verified = Locked<Set<[UInt8]>>([])
  /// Failed logins by client and name (CouchDB 3.4's `chttpd_auth_lockout`).
  let lockout = Lockout()

  var isEnabled: Bool { !admins.isEmpty }

  /// The administrators stored in the file.
  static func load(_ database: Database) async throws -> Authenticator {
    var admins: [String: Account] = [:]
    if case .object(let stored)? = try await database.metadata(forKey: adminsKey) {
      for member in stored { admins[member.key] = Account(json: member.value) }
    }
    let secret =
      try await database.metadata(forKey: secretKey)?.stringValue
      .flatMap { [UInt8](hex: $0) } ?? []
    var authenticator = Authenticator(admins: admins, secret: secret) { name in
      await UsersDatabase.account(named: name, in: database)
    }
    authenticator.upgrade = { name, password in
      await UsersDatabase.upgrade(name, password: password, in: database)
    }
    return authenticator
  }

  /// Stores (or replaces) an administrator's password hash, and makes the cookie secret
  /// when there is none.
  static func storeAdmin(_ name: String, password: String, in database: Database) async throws {
    guard !name.isEmpty, !name.utf8.contains(UInt8(ascii: ":")) else {
      throw SetteeError(.invalidArgument, "an admin name must be non-empty and hold no ':'")
    }
    guard !password.isEmpty else {
      throw SetteeError(.invalidArgument, "the admin password must not be empty")
    }
    var stored = try await database.metadata(forKey: adminsKey)?.objectValue ?? [:]
    let salt = randomBytes(16)
    let admin = Account(
      salt: salt,
      derivedKey: SHA256.pbkdf2(password: Array(password.utf8), salt: salt, iterations: iterations),
      iterations: iterations)
    stored[name] = admin.json
    try await database.setMetadata(.object(stored), forKey: adminsKey)
    if try await database.metadata(forKey: secretKey) == nil {
      try await database.setMetadata(.string(randomBytes(32).hex), forKey: secretKey)
    }
  }

  static func randomBytes(_ count: Int) -> [UInt8] {
    var generator = SystemRandomNumberGenerator()
    return (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
  }

  // MARK: - Requests

  /// Who made a request, and how.
  struct Identity: Sendable {
    var name: String
    /// `_admin` for an administrator, a user's roles from `_users`.
    var roles: [String]
    var method: String
    /// A renewed cookie to send back.
    var renewedCookie: String?
  }

  /// The identity of a request's credentials: Basic, or an `AuthSession` cookie; `nil`
  /// when it has none (the client is anonymous) or a cookie that no longer holds (CouchDB
  /// ignores it).
  ///
  /// - Throws: ``CouchError`` `401 unauthorized` for a wrong name or password, `403
  ///   forbidden` while `client` is locked out of the name (``Lockout``), `400
  ///   bad_request` for an `AuthSession` cookie that is not base64url of three
  ///   `:`-separated parts, whatever else the request carries (CouchDB's cookie handler
  ///   runs first, and says so in these words).
  func identify(
    _ headers: HTTPFields, client: String? = nil, now: Int64 = Int64(Date().timeIntervalSince1970)
  ) async throws -> Identity? {
    if let token = Self.cookie(headers, named: "AuthSession"), !token.isEmpty,
      Self.unbase64url(token).map({ $0.count(where: { $0 == UInt8(ascii: ":") }) < 2 }) ?? true
    {
      throw CouchError(
        .badRequest, "bad_request", "Malformed AuthSession cookie. Please clear your cookies.")
    }
    if let authorization = headers[.authorization], authorization.lowercased().hasPrefix("basic ") {
      guard let (name, password) = Self.basic(authorization),
        let account = try await authenticate(name, password, client: client, now: now)
      else {
        throw CouchError(.unauthorized, "unauthorized", "Name or password is incorrect.")
      }
      return Identity(name: name, roles: account.roles, method: "default")
    }
    guard let token = Self.cookie(headers, named: "AuthSession"),
      let (name, issued, account) = await session(token, now: now)
    else { return nil }
    // CouchDB renews a cookie once a tenth of its life has passed.
    let renewed =
      now - issued > Self.sessionTimeout / 10 ? makeToken(name, account, now: now) : nil
    return Identity(
      name: name, roles: account.roles, method: "cookie",
      renewedCookie: renewed.map { Self.setCookie($0, now: now) })
  }

  /// The account named `name`: an administrator, else a user of `_users`.
  func account(named name: String) async -> Account? {
    if let admin = admin(named: name) { return admin }
    return await users(name)
  }

  /// The administrator named `name` byte for byte (a `Dictionary` of `String`s would also
  /// find a name only canonically equivalent to it).
  func admin(named name: String) -> Account? {
    admins.first { $0.key.isExactly(name) }?.value
  }

  /// Checks a name and password from `client` (an address), counting failures: past
  /// ``Lockout/threshold`` of them the client is refused for the name, right password or
  /// not, until the failures are old (an attacker's guesses each cost PBKDF2's 100,000
  /// iterations of CPU, and are limited as CouchDB limits them).
  ///
  /// - Returns: the account, or `nil` for a wrong name or password.
  /// - Throws: ``CouchError`` `403 forbidden` while locked out.
  func authenticate(
    _ name: String, _ password: String, client: String?,
    now: Int64 = Int64(Date().timeIntervalSince1970)
  ) async throws -> Account? {
    let key = Lockout.key(client: client, name: name)
    if lockout.isLocked(key, now: now) {
      throw CouchError(
        .forbidden, "forbidden",
        "Account is temporarily locked due to multiple authentication failures")
    }
    guard let account = await verify(name, password) else {
      lockout.fail(key, now: now)
      return nil
    }
    lockout.clear(key)
    return account
  }

  /// Checks a name and password (once per distinct pair; later calls hit the cache). A
  /// name that is no administrator's costs the same PBKDF2 work as a wrong password
  /// (against ``decoy(for:)``), so that timing does not tell names apart (issue 44: 1 ms
  /// against 66-103 ms). So does a user whose stored hash is cheaper to check (CouchDB
  /// before 3.4 wrote PBKDF2-HMAC-SHA-1 with 10 iterations: microseconds): after its wrong
  /// password the decoy's work is done as well (issue 57). After a right password, an
  /// older scheme's hash (SHA-1, `simple`) is stored again as PBKDF2-HMAC-SHA-256
  /// (``upgrade``), as CouchDB 3.4 does; a SHA-256 hash keeps its iterations.
  ///
  /// PBKDF2 runs on a dispatch queue, off Swift's cooperative threads: its 100,000
  /// iterations take 66-103 ms (0.16 s in a debug build), and two guesses at
  /// once held both of this machine's cooperative threads, and with them every request.
  func verify(_ name: String, _ password: String) async -> Account? {
    let checked = self.checked
    guard let account = await account(named: name) else {
      let decoy = decoy(for: name)
      _ = await Self.offTheCooperativePool {
        checked(decoy)
        return decoy.matches(password)
      }
      return nil
    }
    let key = Self.memo(name, password, account)
    if verified.withLock({ $0.contains(key) }) { return account }
    let decoy = decoy(for: name)
    let padding = account.isCheaper(than: decoy) ? decoy : nil
    let matches = await Self.offTheCooperativePool {
      checked(account)
      let matches = account.matches(password)
      // A wrong password costs what it costs for an unknown name.
      if !matches, let padding {
        checked(padding)
        _ = padding.matches(password)
      }
      return matches
    }
    guard matches else { return nil }
    if account.scheme != .pbkdf2SHA256, admin(named: name) == nil,
      let upgraded = await upgrade(name, password)
    {
      remember(name, password, upgraded)
      return upgraded
    }
    remember(name, password, account)
    return account
  }

  /// What ``verified`` remembers of a right password: the stored key is part of it, so
  /// that a changed password forgets it.
  private static func memo(_ name: String, _ password: String, _ account: Account) -> [UInt8] {
    SHA256.hash(Array("\(name):\(password)".utf8) + account.salt + [0] + account.derivedKey)
  }

  /// Remembers that `password` is `account`'s.
  private func remember(_ name: String, _ password: String, _ account: Account) {
    let key = Self.memo(name, password, account)
    verified.withLock { set in
      // Bounded: a stream of distinct right passwords cannot grow it without end.
      if set.count >= 10_000 { set.removeAll() }
      set.insert(key)
    }
  }

  /// Runs `work` on one of ``PasswordWorkers``' threads and waits for it without holding
  /// a thread.
  static func offTheCooperativePool<Value: Sendable>(
    _ work: @escaping @Sendable () -> Value
  ) async -> Value {
    await withCheckedContinuation { continuation in
      PasswordWorkers.shared.submit { continuation.resume(returning: work()) }
    }
  }

  /// What an unknown name is checked against: the iterations of the administrators there
  /// are, a salt that depends on the name (as a stored one would), a key nothing derives.
  func decoy(for name: String) -> Account {
    Account(
      salt: Array(SHA256.hash(secret + Array(name.utf8)).prefix(16)),
      derivedKey: [UInt8](repeating: 0, count: 32),
      iterations: admins.values.map(\.iterations).max() ?? Self.iterations)
  }

  private static func basic(_ header: String) -> (String, String)? {
    let encoded = header.dropFirst("basic ".count).trimmingCharacters(in: .whitespaces)
    // Split at the first `:` byte, as CouchDB does: a password that starts with a
    // combining mark makes one `Character` of the colon and the mark.
    guard let data = Data(base64Encoded: encoded), String(data: data, encoding: .utf8) != nil,
      let colon = data.firstIndex(of: UInt8(ascii: ":"))
    else { return nil }
    return (
      String(decoding: data[..<colon], as: UTF8.self),
      String(decoding: data[(colon + 1)...], as: UTF8.self)
    )
  }
}
