import Foundation

/// Runs `body` on a thread of its own and gives its result without holding a task's
/// thread meanwhile: blocking waits (sockets, child processes, locks) must not sit on one
/// of the two threads Swift's tasks share on this machine, nor on Dispatch's global pool,
/// which on Linux is the same. A test that did starved the rest of the suite.
package func onThread<Value: Sendable>(_ body: @escaping @Sendable () throws -> Value)
  async throws -> Value
{
  try await withCheckedThrowingContinuation { continuation in
    Thread { continuation.resume(with: Result { try body() }) }.start()
  }
}

/// ``onThread(_:)-(()->Value)`` for a body that cannot throw.
package func onThread<Value: Sendable>(_ body: @escaping @Sendable () -> Value) async -> Value {
  await withCheckedContinuation { continuation in
    Thread { continuation.resume(returning: body()) }.start()
  }
}
