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
    let authenticator = Authenticator(admins: ["boss": admin], secret: [1, 2, 3])
    #expect(await authenticator.verify("boss", "right") != nil)
    // Measured in turns, the best of five each, so that a busy machine does not decide;
    // before, an unknown name took a thousandth of a wrong password's time.
    var best = (wrong: Double.infinity, unknown: Double.infinity)
    for attempt in 0..<5 {
      for name in ["boss", "nobody"] {
        let start = ContinuousClock.now
        #expect(await authenticator.verify(name, "wrong \(attempt)") == nil)
        let elapsed = ContinuousClock.now - start
        let seconds =
          Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        if name == "boss" {
          best.wrong = min(best.wrong, seconds)
        } else {
          best.unknown = min(best.unknown, seconds)
        }
      }
    }
    #expect(
      best.unknown > best.wrong / 10,
      "unknown name: \(best.unknown) s, wrong password: \(best.wrong) s")
    // The decoy is the same for a name each time, and differs between names.
    #expect(authenticator.decoy(for: "nobody") == authenticator.decoy(for: "nobody"))
    #expect(authenticator.decoy(for: "nobody").salt != authenticator.decoy(for: "other").salt)
    #expect(authenticator.decoy(for: "x").iterations == 10_000)
  }
}
