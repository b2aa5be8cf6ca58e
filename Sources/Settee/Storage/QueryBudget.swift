import Foundation
import GRDB
import GRDBSQLite

/// The time budget of one query (``Database/Configuration/queryTimeLimit``), whatever face
/// asked for it: SQLite calls a progress handler every few thousand steps of its virtual
/// machine, which stops the statement once the query's deadline has passed (`SQLITE_INTERRUPT`,
/// turned into `limitExceeded`). Memory is bounded by the longest string or blob a
/// statement may build (``maxValueBytes(_:)``).
///
/// The deadline is the running thread's (GRDB runs a read's closure on the calling thread
/// or on one of its own, where it is set), so that concurrent queries each have their own.
/// Time the caller's own closure takes (a streaming `find`'s body) is not counted:
/// ``paused(_:)`` sets the deadline aside while it runs.
enum QueryBudget {
  /// How many virtual machine steps SQLite makes between two looks at the clock.
  static let steps: Int32 = 1_000

  /// Installs the progress handler on a new connection, and the longest value a statement
  /// may make.
  static func install(on db: SQLConnection, configuration: Database.Configuration) {
    sqlite3_progress_handler(
      db.sqliteConnection, steps, { _ in QueryBudget.expired || QueryBudget.cancelled ? 1 : 0 },
      nil)
    sqlite3_limit(db.sqliteConnection, SQLITE_LIMIT_LENGTH, maxValueBytes(configuration))
  }

  /// The longest string or blob a statement may make: room for the largest document
  /// twice over, and at least 64 MiB (SQLite's own default is 1 GB, which let a `where`
  /// string's `printf('%100000000d', …)` take hundreds of megabytes a row).
  static func maxValueBytes(_ configuration: Database.Configuration) -> Int32 {
    Int32(min(1_000_000_000, max(64 << 20, 2 * configuration.limits.maxDocumentBytes + 4096)))
  }

  /// Runs `body` with a deadline `seconds` from now (none for `nil`), restoring the one
  /// before after it (a query inside another keeps the outer one's).
  static func within<T>(_ seconds: Double?, _ body: () throws -> T) rethrows -> T {
    let previous = deadline
    if previous == 0, let seconds {
      deadline = DispatchTime.now().uptimeNanoseconds &+ UInt64(seconds * 1e9)
    }
    defer { deadline = previous }
    return try body()
  }

  /// Runs `body` with a deadline `seconds` from now, for a read that is likely brief but
  /// may not be (``ConnectionUse/tentative``); `nil` when it failed after that deadline, a
  /// query stopped by it (or any error it met past it), so that the caller runs it again
  /// without it. An error met before the deadline is thrown.
  static func briefly<T>(_ seconds: Double, _ body: () throws -> T) throws -> T? {
    let previous = deadline
    let brief = DispatchTime.now().uptimeNanoseconds &+ UInt64(seconds * 1e9)
    deadline = brief
    defer { deadline = previous }
    do {
      return try body()
    } catch {
      if DispatchTime.now().uptimeNanoseconds > brief { return nil }
      throw error
    }
  }

  /// Runs the caller's `body` with the deadline set aside: its time is not the query's.
  static func paused<T>(_ body: () throws -> T) rethrows -> T {
    let saved = deadline
    guard saved != 0 else { return try body() }
    let start = DispatchTime.now().uptimeNanoseconds
    deadline = 0
    defer { deadline = saved &+ (DispatchTime.now().uptimeNanoseconds &- start) }
    return try body()
  }

  /// Runs `body`, an async form's operation (``Database/withConnection(_:_:)``), so that
  /// its statements stop when its task is cancelled.
  static func cancellable<T>(_ body: () throws -> T) rethrows -> T {
    let previous = pthread_getspecific(cancellableKey)
    pthread_setspecific(cancellableKey, UnsafeRawPointer(bitPattern: 1))
    defer { pthread_setspecific(cancellableKey, previous) }
    return try body()
  }

  /// Whether the running thread runs an async form's operation whose task is cancelled
  /// (the operation runs synchronously inside its task, on a connection's queue).
  static var cancelled: Bool {
    pthread_getspecific(cancellableKey) != nil && Task.isCancelled
  }

  /// Whether the running thread's query is past its deadline.
  static var expired: Bool {
    let limit = deadline
    return limit != 0 && DispatchTime.now().uptimeNanoseconds > limit
  }

  /// The seconds left to the running thread's query (`nil`: no deadline).
  static var remainingSeconds: Double? {
    let limit = deadline
    guard limit != 0 else { return nil }
    return Double(Int64(bitPattern: limit &- DispatchTime.now().uptimeNanoseconds)) / 1e9
  }

  /// The running thread's deadline, in uptime nanoseconds (0: none).
  private static var deadline: UInt64 {
    get { UInt64(UInt(bitPattern: pthread_getspecific(key))) }
    set { pthread_setspecific(key, UnsafeRawPointer(bitPattern: UInt(newValue))) }
  }

  private static let cancellableKey: pthread_key_t = {
    var key = pthread_key_t()
    pthread_key_create(&key, nil)
    return key
  }()

  private static let key: pthread_key_t = {
    var key = pthread_key_t()
    pthread_key_create(&key, nil)
    return key
  }()
}
