import Foundation
import SetteeCore

/// Failed logins, counted per client address and name, as CouchDB 3.4's
/// `chttpd_auth_lockout` counts them: ``threshold`` failures within ``lifetime`` seconds
/// lock the client out of that name until the first of them is that old. The table is
/// bounded (``maxEntries``; the oldest are forgotten first).
final class Lockout: Sendable {
  static let threshold = 5
  static let lifetime: Int64 = 300
  static let maxEntries = 10_000

  private struct Failures {
    var count: Int
    var since: Int64
  }
  private let failures = Locked<[[UInt8]: Failures]>([:])

  /// The table's key for `name` from `client`: bytes, so that names only canonically
  /// equivalent are counted apart, as CouchDB counts them.
  static func key(client: String?, name: String) -> [UInt8] {
    Array((client ?? "").utf8) + [0] + Array(name.utf8)
  }

  func isLocked(_ key: [UInt8], now: Int64) -> Bool {
    failures.withLock { table in
      guard let entry = table[key] else { return false }
      return entry.count >= Self.threshold && now - entry.since < Self.lifetime
    }
  }

  func fail(_ key: [UInt8], now: Int64) {
    failures.withLock { table in
      if var entry = table[key], now - entry.since < Self.lifetime {
        entry.count += 1
        table[key] = entry
        return
      }
      if table.count >= Self.maxEntries {
        table = table.filter { now - $0.value.since < Self.lifetime }
        if table.count >= Self.maxEntries {
          let oldest = table.sorted { $0.value.since < $1.value.since }.prefix(table.count / 2)
          for (old, _) in oldest { table[old] = nil }
        }
      }
      table[key] = Failures(count: 1, since: now)
    }
  }

  func clear(_ key: [UInt8]) {
    _ = failures.withLock { $0.removeValue(forKey: key) }
  }

  /// How many clients and names are counted (for tests).
  var count: Int { failures.withLock { $0.count } }
}

/// Two threads of their own for password hashing. Not dispatch queues: on Linux, dispatch's
/// global queues and Swift's cooperative threads share one pool of threads as wide as the
/// cores, so PBKDF2 there still kept every request waiting (measured: `/_up` answered after
/// 1.25 s behind four wrong passwords). These threads are the system's to schedule beside
/// the cooperative ones; past two checks at once, the others wait their turn in order.
final class PasswordWorkers: @unchecked Sendable {
  static let shared = PasswordWorkers(threads: 2)

  private let condition = NSCondition()
  /// Guarded by `condition`.
  private var jobs: [@Sendable () -> Void] = []

  private init(threads: Int) {
    for number in 0..<threads {
      let thread = Thread { [self] in work() }
      thread.name = "settee-password-\(number)"
      thread.start()
    }
  }

  /// Queues `job` for the next free thread.
  func submit(_ job: @escaping @Sendable () -> Void) {
    condition.lock()
    jobs.append(job)
    condition.signal()
    condition.unlock()
  }

  private func work() {
    while true {
      condition.lock()
      while jobs.isEmpty { condition.wait() }
      let job = jobs.removeFirst()
      condition.unlock()
      job()
    }
  }
}
