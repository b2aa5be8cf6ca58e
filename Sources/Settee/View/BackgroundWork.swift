import Foundation
import SetteeCore

/// Work started on a queue (a reader lane's: ``ReaderLanes/start(_:)``), whose result the
/// starter waits for (``wait()``): for a blocking call that does two things at once, as a
/// view's catch-up maps one slice while it writes the one before.
///
/// `@unchecked Sendable`: `result` is written once, before `done` is signalled, and read
/// only after waiting for it.
final class BackgroundWork<T: Sendable>: @unchecked Sendable {
  private var result: Result<T, any Error>? = nil
  private let done = DispatchSemaphore(value: 0)

  /// Starts `body` at once on `queue`.
  init(on queue: DispatchQueue, _ body: @escaping @Sendable () throws -> T) {
    queue.async {
      self.result = Result { try body() }
      self.done.signal()
    }
  }

  /// Blocks until the work has finished; its result. Called once.
  func wait() -> Result<T, any Error> {
    done.wait()
    return result!
  }
}
