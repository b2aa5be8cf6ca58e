import Foundation

/// Waits until `condition` holds, for at most `timeout` seconds (for observers that are
/// told of changes on their own schedule).
public func eventually(_ timeout: Double = 10, _ condition: () -> Bool) async -> Bool {
  let deadline = Date().addingTimeInterval(timeout)
  while !condition() {
    if Date() > deadline { return false }
    try? await Task.sleep(nanoseconds: 5_000_000)
  }
  return true
}
