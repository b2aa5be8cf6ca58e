import SetteeCLI

/// The commands of `settee-net`: the ones `settee` hands over.
public enum SetteeNetCLI {
  /// Makes the root command offer the real `serve`, `replicate`, `replicator` and `bench`
  /// in place of `settee`'s hand-overs; called by `settee-net` before it parses.
  public static func registerCommands() {
    NetworkCommands.commands.withLock {
      $0 = [ServeCommand.self, ReplicateCommand.self, ReplicatorCommand.self, BenchCommand.self]
    }
  }
}
