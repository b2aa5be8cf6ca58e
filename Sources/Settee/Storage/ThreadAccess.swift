import Foundation

/// Which database access the current thread is running inside, so that a call made from
/// a user's closure during a read (the streaming `find`, `exportDocuments`) or a write
/// (an import's progress) does not re-enter GRDB, which traps on reentrant accesses.
///
/// GRDB runs an access's closure on the calling thread (its queues are entered with
/// `sync`), so a thread-local value set around the closure is seen by nested calls.
enum ThreadAccess: Int {
  case none = 0
  case read = 1
  case write = 2

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

  private static let key: pthread_key_t = {
    var key = pthread_key_t()
    pthread_key_create(&key, nil)
    return key
  }()
}
