import Foundation

/// SIGINT and SIGTERM for the commands that run until stopped (`replicate --continuous`,
/// `replicator`): instead of killing the process, each calls `stop`, so the command ends
/// its work cleanly (checkpoints written, the last state printed).
package enum Termination {
  /// Calls `stop` on SIGINT or SIGTERM until the sources returned are cancelled.
  package static func onSignal(_ stop: @escaping @Sendable () -> Void) -> [any DispatchSourceSignal] {
    [SIGINT, SIGTERM].map { signal in
      Foundation.signal(signal, SIG_IGN)
      let source = DispatchSource.makeSignalSource(signal: signal)
      source.setEventHandler(handler: stop)
      source.resume()
      return source
    }
  }
}
