import Foundation

/// Which database access the current thread is running inside, so that a call made from
/// a user's closure during a read (the streaming `find`, `exportDocuments`) or a write
/// (an import's progress) does not re-enter GRDB, which traps on reentrant accesses.
///
/// GRDB runs an access's closure on the calling thread (its queues are entered with
/// `sync`), so a thread-local value set around the closure is seen by nested calls.
///
/// An async form runs its synchronous operation on a connection that GRDB's async access
/// gave it (``Database/withConnection(_:_:)``): the thread is then ``lent`` that
/// connection, and the operation's own reads and writes use it instead of asking GRDB for
/// one (which would block the thread, or trap on reentrance).
enum ThreadAccess: Int {
  case none = 0
  case read = 1
  case write = 2
  /// The thread holds a connection lent by an async form, with no access open on it.
  case lent = 3

  /// The access the current thread is inside.
  static var current: ThreadAccess {
    ThreadAccess(rawValue: Int(bitPattern: pthread_getspecific(key))) ?? .none
  }

  /// Runs `body` marked as inside `access`, restoring the previous mark after.
  static func inside<T>(_ access: ThreadAccess, _ body: () throws -> T) rethrows -> T {
    let previous = pthread_getspecific(key)
    pthread_setspecific(key, UnsafeRawPointer(bitPattern: access.rawValue))
    defer { pthread_setspecific(key, previous) }
    return try body()
  }

  /// The connection lent to the current thread, and whether it is the writer; `nil`
  /// outside ``lending(_:isWriter:_:)``.
  static var lentConnection: (db: SQLConnection, isWriter: Bool)? {
    guard let pointer = pthread_getspecific(connectionKey) else { return nil }
    let lent = Unmanaged<LentConnection>.fromOpaque(pointer).takeUnretainedValue()
    return (lent.db, lent.isWriter)
  }

  /// The lent connection when it is the writer and no access is open on it: a write
  /// begins its transaction there.
  static var lentWriter: SQLConnection? {
    guard current == .lent, let lent = lentConnection, lent.isWriter else { return nil }
    return lent.db
  }

  /// Runs `body` with `db` lent to the current thread (``lent``).
  static func lending<T>(_ db: SQLConnection, isWriter: Bool, _ body: () throws -> T) rethrows
    -> T
  {
    let lent = LentConnection(db: db, isWriter: isWriter)
    let previous = pthread_getspecific(connectionKey)
    pthread_setspecific(connectionKey, Unmanaged.passUnretained(lent).toOpaque())
    defer {
      pthread_setspecific(connectionKey, previous)
      withExtendedLifetime(lent) {}
    }
    return try inside(.lent, body)
  }

  private final class LentConnection {
    let db: SQLConnection
    let isWriter: Bool
    init(db: SQLConnection, isWriter: Bool) { (self.db, self.isWriter) = (db, isWriter) }
  }

  private static let key: pthread_key_t = {
    var key = pthread_key_t()
    pthread_key_create(&key, nil)
    return key
  }()

  private static let connectionKey: pthread_key_t = {
    var key = pthread_key_t()
    pthread_key_create(&key, nil)
    return key
  }()
}
