import GRDB
import GRDBSQLite
import SetteeCore

/// How an async form's operation uses the database (``Database/withConnection(_:_:)``).
enum ConnectionUse: Sendable {
  /// It reads (a query that must first bring a view up to date writes through the writer
  /// as the blocking form does).
  case reading
  /// It reads a few rows by key (a document by its id, a metadata value): its time does
  /// not grow with the database, so it runs on the calling thread on one of
  /// ``BriefReaders`` when one is free, without a thread switch to a lane and back (a third
  /// of a server's `GET /{db}/{docid}`, issue 59), and as `.reading` otherwise.
  case brief
  /// It reads what is usually brief but may not be (a `find` page): it runs as `.brief`
  /// for at most ``ConnectionUse/tentativeSeconds``, and a read that takes longer is stopped
  /// there and runs again as `.reading`, from the start. Its operation must be one that
  /// can run twice (a read whose results are made inside it).
  case tentative
  /// It writes, or reads and writes in several steps: it runs on the writer connection.
  case writing

  /// How long a `.tentative` read runs on the calling thread before it moves to a lane:
  /// several times what an indexed `find` of one document takes in a release build, and a
  /// query that takes longer loses at most this much (a thousandth of a one-second query).
  static let tentativeSeconds = 0.001
}

// One async story for every face: an async form awaits a connection without holding a
// thread (a write waits in GRDB's async access; a read waits for a reader lane, which takes
// a reader from GRDB's pool), runs the same synchronous operation as its blocking twin there,
// and is cancelled with its task. The operation's reads and writes use the lent connection
// (ThreadAccess.lent), so no thread waits on SQLite but the connections' and lanes' own.
// A brief read (a few rows by key) is the one exception: it runs on the task's own thread,
// on a connection that nothing else uses and that it never waits for (BriefReaders); so
// does a tentative read (a find page) for its first millisecond.
extension Database {
  /// Runs a synchronous operation (one that reaches the database through ``read(_:)``,
  /// ``write(_:)`` and ``writeWithoutTransaction(_:)``) as an async call.
  ///
  /// A brief read on a file (`.brief`) runs on the calling thread with one of
  /// ``BriefReaders`` when one is free. Another read on a file (`.reading`, or `.brief` when
  /// none is free) moves the task onto one of ``ReaderLanes`` (as many as reader
  /// connections), which takes a reader and runs the operation there; a write (and
  /// every use of an in-memory database, which has one connection) waits for the writer
  /// without holding a thread and runs on its queue. Threads are bounded by the connections,
  /// however many tasks wait.
  ///
  /// Cancelling the task before the operation starts throws `CancellationError` without
  /// running it; cancelling it while it runs stops its SQLite statements (GRDB interrupts
  /// the connection, and the progress handler of ``QueryBudget`` stops statements begun
  /// after), rolls back what it was writing, and throws `CancellationError`.
  func withConnection<T: Sendable>(
    _ use: ConnectionUse, _ operation: @escaping @Sendable () throws -> T
  ) async throws -> T {
    // The operation's own errors come back as it threw them (a caller's error from a
    // streaming body included); only the access's are converted here.
    let outcome: Result<T, any Error>
    do {
      if use == .brief || use == .tentative, let briefReaders, ThreadAccess.current == .none,
        let result = try briefReaders.run({ db -> Result<T, any Error>? in
          try Task.checkCancellation()
          return ThreadAccess.lending(db, isWriter: false) {
            guard use == .tentative else {
              return Result { try QueryBudget.cancellable(operation) }
            }
            // Past its time here, it runs again on a lane (under a query time limit
            // shorter still, it runs again to meet that limit there).
            let seconds = min(ConnectionUse.tentativeSeconds, configuration.queryTimeLimit ?? 1)
            do {
              return try QueryBudget.cancellable {
                try QueryBudget.briefly(seconds, operation)
              }.map { .success($0) }
            } catch { return .failure(error) }
          }
        }), let result
      {
        outcome = result
      } else if use != .writing, let pool {
        // The connection in use, interrupted when the task is cancelled (as GRDB's async
        // access does): the progress handler alone would see it only a thousand steps on.
        let connection = Locked<OpaquePointer?>(nil)
        outcome = try await withTaskCancellationHandler {
          try await readerLanes.run {
            try pool.unsafeRead { db in
              connection.withLock { $0 = db.sqliteConnection }
              defer { connection.withLock { $0 = nil } }
              return ThreadAccess.lending(db, isWriter: false) {
                Result { try QueryBudget.cancellable(operation) }
              }
            }
          }
        } onCancel: {
          // SQLite clears an interrupt when the connection's next statement starts with no
          // other running: one that comes after the operation reaches no other user.
          connection.withLock { if let db = $0 { sqlite3_interrupt(db) } }
        }
      } else {
        outcome = try await writer.writeWithoutTransaction { db in
          ThreadAccess.lending(db, isWriter: true) {
            Result { try QueryBudget.cancellable(operation) }
          }
        }
      }
    } catch {
      if Task.isCancelled || error is CancellationError { throw CancellationError() }
      throw SetteeError.from(
        error, "database access failed", busyTimeout: configuration.busyTimeout)
    }
    do { return try outcome.get() } catch {
      // A statement stopped by the cancellation fails with an interruption.
      if Task.isCancelled { throw CancellationError() }
      throw error
    }
  }
}
