import SetteeCore
import Testing

@testable import SetteeServer

/// The failed-login table: the threshold within the lifetime, the lock's end, a success
/// clearing the count, names and clients apart, and its bound.
@Suite("Failed-login lockout")
struct LockoutTests {
  @Test func locksAfterTheThresholdUntilTheFailuresAreOld() {
    let lockout = Lockout()
    let key = Lockout.key(client: "10.0.0.1", name: "boss")
    for second in 0..<Int64(Lockout.threshold - 1) {
      lockout.fail(key, now: 1_000 + second)
      #expect(!lockout.isLocked(key, now: 1_000 + second))
    }
    lockout.fail(key, now: 1_010)
    #expect(lockout.isLocked(key, now: 1_010))
    #expect(lockout.isLocked(key, now: 1_000 + Lockout.lifetime - 1))
    #expect(!lockout.isLocked(key, now: 1_000 + Lockout.lifetime))
    // Another client, and another name, are not locked.
    #expect(!lockout.isLocked(Lockout.key(client: "10.0.0.2", name: "boss"), now: 1_010))
    #expect(!lockout.isLocked(Lockout.key(client: "10.0.0.1", name: "other"), now: 1_010))
    // Failures past the lifetime start a new count.
    lockout.fail(key, now: 2_000)
    #expect(!lockout.isLocked(key, now: 2_000))
  }

  @Test func aSuccessClearsTheCount() {
    let lockout = Lockout()
    let key = Lockout.key(client: nil, name: "boss")
    for _ in 1..<Lockout.threshold { lockout.fail(key, now: 0) }
    lockout.clear(key)
    lockout.fail(key, now: 1)
    #expect(!lockout.isLocked(key, now: 1))
  }

  @Test func theTableIsBounded() {
    let lockout = Lockout()
    for number in 0..<(Lockout.maxEntries + 100) {
      lockout.fail(Lockout.key(client: "c\(number)", name: "n"), now: Int64(number / 1_000))
    }
    #expect(lockout.count <= Lockout.maxEntries)
    // The newest is still counted.
    let newest = Lockout.key(client: "c\(Lockout.maxEntries + 99)", name: "n")
    for _ in 1..<Lockout.threshold { lockout.fail(newest, now: 10) }
    #expect(lockout.isLocked(newest, now: 10))
  }
}

/// A name that is no administrator's takes the same work as a wrong password (issue 44,
/// item 9: 1 ms against 66-103 ms told names apart).
@Suite("Administrator names")
struct AdministratorNameTests {
  @Test func anUnknownNameCostsWhatAWrongPasswordCosts() async throws {
    // Fewer iterations than a new hash gets (as CouchDB's own hashes may have): the decoy
    // takes the stored ones.
    let salt = Authenticator.randomBytes(16)
    let admin = Authenticator.Account(
      salt: salt,
      derivedKey: SHA256.pbkdf2(password: Array("right".utf8), salt: salt, iterations: 10_000),
      iterations: 10_000)
    var authenticator = Authenticator(admins: ["boss": admin], secret: [1, 2, 3])
    #expect(await authenticator.verify("boss", "right") != nil)
    // Before, an unknown name took a thousandth of a wrong password's time: it was checked
    // against nothing. Now both run PBKDF2-HMAC-SHA-256 with the stored iterations.
    let work = await Self.wrongPasswordWork(&authenticator, ["boss", "nobody"])
    #expect(work["boss"] == [Work(scheme: .pbkdf2SHA256, iterations: 10_000)])
    #expect(work["nobody"] == work["boss"], "\(work)")
    // The decoy is the same for a name each time, and differs between names.
    #expect(authenticator.decoy(for: "nobody") == authenticator.decoy(for: "nobody"))
    #expect(authenticator.decoy(for: "nobody").salt != authenticator.decoy(for: "other").salt)
    #expect(authenticator.decoy(for: "x").iterations == 10_000)
  }

  /// A user whose hash CouchDB before 3.4 wrote (PBKDF2-HMAC-SHA-1, 10 iterations: checked
  /// in microseconds) costs a wrong password the decoy's work too, so that such names
  /// are not told apart from unknown ones; a right password stores the hash again in the
  /// current scheme, and the new account is what the login gives (its cookie's salt).
  @Test func anOldHashCostsWhatANewOneCostsAndIsUpgraded() async throws {
    let salt = Array("8d2e5c1a0f6b4e3d".utf8)
    let old = Authenticator.Account(
      salt: salt,
      derivedKey: SHA1.pbkdf2(password: Array("right".utf8), salt: salt, iterations: 10),
      iterations: 10, roles: ["r"], scheme: .pbkdf2SHA1)
    let adminSalt = Authenticator.randomBytes(16)
    let admin = Authenticator.Account(
      salt: adminSalt,
      derivedKey: SHA256.pbkdf2(password: Array("x".utf8), salt: adminSalt, iterations: 10_000),
      iterations: 10_000)
    let stored = Locked<Authenticator.Account>(old)
    var authenticator = Authenticator(admins: ["boss": admin], secret: [1, 2, 3]) { name in
      name == "old" ? stored.withLock { $0 } : nil
    }
    authenticator.upgrade = { _, password in
      let salt = Authenticator.randomBytes(16)
      let new = Authenticator.Account(
        salt: salt,
        derivedKey: SHA256.pbkdf2(password: Array(password.utf8), salt: salt, iterations: 10_000),
        iterations: 10_000, roles: ["r"])
      stored.withLock { $0 = new }
      return new
    }
    // Before, the old hash answered in a thousandth of the unknown name's time: its 10
    // iterations of SHA-1 were all the work. Now the decoy's work follows them.
    let work = await Self.wrongPasswordWork(&authenticator, ["old", "nobody"])
    #expect(work["nobody"] == [Work(scheme: .pbkdf2SHA256, iterations: 10_000)])
    #expect(
      work["old"]
        == [Work(scheme: .pbkdf2SHA1, iterations: 10), Work(scheme: .pbkdf2SHA256, iterations: 10_000)],
      "\(work)")
    #expect(stored.withLock { $0 } == old)
    // The right password: upgraded, and the login gives the new account.
    let loggedIn = try #require(await authenticator.verify("old", "right"))
    #expect(loggedIn.scheme == .pbkdf2SHA256 && loggedIn.iterations == 10_000)
    #expect(loggedIn == stored.withLock { $0 })
    #expect(await authenticator.verify("old", "right") == loggedIn)
    #expect(await authenticator.verify("old", "wrong") == nil)
  }

  /// One hash a password was checked against: what the check cost.
  struct Work: Equatable, CustomStringConvertible {
    var scheme: Authenticator.Account.Scheme
    var iterations: Int
    var description: String { "\(scheme) × \(iterations)" }
  }

  /// The hashes a wrong password was checked against, for each name: the work that a
  /// client could time (counted, not timed: the guide's rule, and timings on a loaded
  /// CI machine are noise).
  static func wrongPasswordWork(_ authenticator: inout Authenticator, _ names: [String]) async
    -> [String: [Work]]
  {
    let seen = Locked<[Work]>([])
    authenticator.checked = { hash in
      seen.withLock { $0.append(Work(scheme: hash.scheme, iterations: hash.iterations)) }
    }
    var work: [String: [Work]] = [:]
    for name in names {
      seen.withLock { $0 = [] }
      #expect(await authenticator.verify(name, "wrong") == nil)
      work[name] = seen.withLock { $0 }
    }
    return work
  }
}
