import Foundation
import GRDB
import Settee

extension Settee.Database {
  /// Holds the write lock (an open write transaction that has written) for `seconds` on a
  /// background thread, and returns once it is held; `done` is signalled at release.
  package func holdWriteLock(for seconds: Double) -> DispatchSemaphore {
    holdWriteLock(until: DispatchSemaphore(value: 0), atMost: seconds)
  }
}

extension Settee.Database {
  /// Holds the write lock (an open write transaction that has written) on a thread of its
  /// own (Dispatch's global threads are those Swift's tasks run on here) until `release`
  /// is signalled or `seconds` pass, and returns once it is held; `done` is signalled when
  /// the transaction has ended.
  package func holdWriteLock(until release: DispatchSemaphore, atMost seconds: Double)
    -> DispatchSemaphore
  {
    let locked = DispatchSemaphore(value: 0)
    let done = DispatchSemaphore(value: 0)
    let writer = self.writer
    Thread {
      try? writer.write { db in
        try db.execute(sql: "UPDATE collections SET last_seq = last_seq")
        locked.signal()
        _ = release.wait(timeout: .now() + seconds)
      }
      done.signal()
    }.start()
    locked.wait()
    return done
  }
}

extension Settee.Database {
  /// Runs `sql` on the file behind Settee's back, as damage or tampering would change it
  /// (for tests of how damage is answered).
  package func damage(_ sql: String) throws {
    try writer.writeWithoutTransaction { try $0.execute(sql: sql) }
  }
}

extension Settee.Database {
  /// The entry tables SQLite's planner has statistics for (`sqlite_stat1` rows of `ix_…`).
  package func statisticsTables() throws -> [String] {
    try writer.read { db in
      guard try db.tableExists("sqlite_stat1") else { return [] }
      return try String.fetchAll(
        db, sql: "SELECT tbl FROM sqlite_stat1 WHERE tbl GLOB 'ix_*' ORDER BY tbl")
    }
  }
}
