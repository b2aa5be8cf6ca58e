import NIOCore
import NIOPosix
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

  /// Makes NIO's event loops (the threads that read and write the sockets) run Swift's
  /// tasks, in place of a cooperative pool of their own; `settee-net` calls it first, before
  /// any task runs, and returns whether it took effect.
  ///
  /// A request then runs from its head to its answer on the thread of its connection: its
  /// handler's task no longer starts on a pool thread and sends its answer back to the
  /// event loop, two thread switches each. Over 16 connections on two cores, `GET
  /// /{db}/{docid}` went from 0.45 to 0.57 of the constant answer's rate (issue 59,
  /// `docs/performance.md`). The threads are as many as the pool's (one per core), and the
  /// rule is the pool's: no task blocks its thread (waits on SQLite happen on the reader
  /// lanes and the writer's queue; brief reads run inline on connections nothing else
  /// holds, `BriefReaders`).
  @discardableResult
  public static func runTasksOnEventLoops() -> Bool {
    NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
  }
}
