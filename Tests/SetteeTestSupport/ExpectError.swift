import SetteeCore
import Testing

/// Expects `body` to throw a ``SetteeError`` with `code`, and returns it for more checks.
@discardableResult
package func expectError(
  _ code: SetteeError.Code, sourceLocation: SourceLocation = #_sourceLocation,
  _ body: () throws -> Void
) -> SetteeError? {
  do {
    try body()
    Issue.record("expected a \(code) error, got success", sourceLocation: sourceLocation)
  } catch let error as SetteeError {
    #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
    return error
  } catch {
    Issue.record("expected a SetteeError \(code), got \(error)", sourceLocation: sourceLocation)
  }
  return nil
}
