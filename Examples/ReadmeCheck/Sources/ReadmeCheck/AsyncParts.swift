// The README's async functions are awaited here, from the synchronous top level that
// extract-readme.sh writes: a top-level `await` would make the whole README's top level
// async code, where its blocking calls are (rightly) compile errors.
import Dispatch
import Foundation

enum AsyncParts {
  /// Runs `body` on a task and blocks this (main) thread until it ends; the README's
  /// async functions are nonisolated, so they never need the main thread meanwhile.
  static func wait(_ body: @escaping @Sendable () async throws -> Void) throws {
    let outcome = Outcome()
    let done = DispatchSemaphore(value: 0)
    Task.detached {
      do { try await body() } catch { outcome.set(error) }
      done.signal()
    }
    done.wait()
    if let error = outcome.error { throw error }
  }

  private final class Outcome: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: (any Error)?
    var error: (any Error)? { lock.withLock { stored } }
    func set(_ error: any Error) { lock.withLock { stored = error } }
  }
}
