import Foundation

/// Waits until `condition` holds, for at most `timeout` seconds (for observers that are
/// told of changes on their own schedule). The default is long: while the whole suite
/// runs, long synchronous tests can hold every thread of Swift's cooperative pool on two
/// cores, and the observers' tasks then wait for one (a fresh-clone CI run with 120 s
/// here failed so: a live query's first result came after more than two minutes). Only a
/// failing wait lasts this long.
package func eventually(_ timeout: Double = 300, _ condition: () -> Bool) async -> Bool {
  let deadline = Date().addingTimeInterval(timeout)
  while !condition() {
    if Date() > deadline { return false }
    try? await Task.sleep(nanoseconds: 5_000_000)
  }
  return true
}

/// Waits until an async `condition` holds (a read of a collection, say), for at most
/// `timeout` seconds; ``eventually(_:_:)`` for conditions that must await. As long by
/// default, for the same reason: under the whole suite, tasks wait for threads.
package func waitUntil(_ timeout: Double = 300, _ condition: () async throws -> Bool)
  async rethrows -> Bool
{
  let deadline = Date().addingTimeInterval(timeout)
  while try await !condition() {
    if Date() > deadline { return false }
    try? await Task.sleep(nanoseconds: 10_000_000)
  }
  return true
}

/// Runs `operation` in a task that is cancelled after `seconds`: a wait that should end on
/// its own (a feed read up to a last write) fails the test, with the operation's
/// `CancellationError`, instead of hanging the suite.
package func cancelling<T: Sendable>(
  after seconds: Double, _ operation: @escaping @Sendable () async throws -> T
) async throws -> T {
  let task = Task { try await operation() }
  let watchdog = Task {
    try await Task.sleep(nanoseconds: UInt64(seconds * 1e9))
    task.cancel()
  }
  defer { watchdog.cancel() }
  return try await task.value
}
