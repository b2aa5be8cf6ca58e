import Foundation

/// Waits until `condition` holds, for at most `timeout` seconds (for observers that are
/// told of changes on their own schedule). The default is long: while the whole suite
/// runs, long synchronous tests can hold every thread of Swift's cooperative pool (the
/// random differential tests do for a minute and a half on two cores), and the observers'
/// tasks then wait for one. Only a failing wait lasts this long.
public func eventually(_ timeout: Double = 300, _ condition: () -> Bool) async -> Bool {
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
public func waitUntil(_ timeout: Double = 300, _ condition: () async throws -> Bool)
  async rethrows -> Bool
{
  let deadline = Date().addingTimeInterval(timeout)
  while try await !condition() {
    if Date() > deadline { return false }
    try? await Task.sleep(nanoseconds: 10_000_000)
  }
  return true
}
