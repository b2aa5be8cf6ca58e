import Foundation

/// A value behind a lock: Synchronization's `Mutex`, which needs macOS 15 and iOS 18, for
/// the platforms Settee declares (macOS 13, iOS 16), as GRDB ships a lock of its own.
///
/// `@unchecked Sendable`: every access to `value` goes through `withLock`, under `lock`.
package final class Locked<Value>: @unchecked Sendable {
  private var value: Value
  private let lock = NSLock()

  /// A lock around `value`.
  package init(_ value: Value) { self.value = value }

  /// Runs `body` with the value, exclusively.
  package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
    lock.lock()
    defer { lock.unlock() }
    return try body(&value)
  }
}
