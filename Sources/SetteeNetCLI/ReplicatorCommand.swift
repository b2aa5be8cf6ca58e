import ArgumentParser
import Foundation
import SetteeCLI
import Settee
import SetteeCore
import SetteeReplication

/// `settee replicator`: the file's `_replicator` documents run as `settee serve` runs
/// them, without a server.
struct ReplicatorCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "replicator",
    abstract: NetworkCommands.replicatorAbstract,
    discussion:
      #"Each document of the _replicator collection describes a replication in the shape of CouchDB's _replicate body (source and target: URLs, or names of collections of the same file), as settee serve runs them: one-shot ones once (not again unless their document changes), continuous ones until their document is deleted. At most --max-jobs run at once; the others wait their turn, and a failing one waits longer after each failure (CouchDB's scheduler). Prints CouchDB's _scheduler/docs entry of a document as a JSON line on standard output each time its state changes; stops on Ctrl-C or SIGTERM, and the continuous ones resume from their checkpoints next time."#
  )

  @OptionGroup var local: GlobalOptions
  @ParentCommand var root: SetteeCommand
  @Option(help: "How many replications run at once (CouchDB's max_jobs).") var maxJobs = 500

  func validate() throws {
    guard maxJobs >= 1 else { throw ValidationError("--max-jobs must be at least 1") }
  }

  func run() async throws {
    let database = try local.merged(with: root.options).openDatabase(readOnly: false)
    let replicator = ReplicatorDatabase(
      database: database, scheduler: ReplicationScheduler(limits: .init(maxJobs: maxJobs)))
    let following = Task { await replicator.follow() }
    let stopping = Termination.onSignal { following.cancel() }
    defer { stopping.forEach { $0.cancel() } }
    // Each document's state as last printed.
    var printed: [String: String] = [:]
    func show() {
      for entry in replicator.schedulerDocuments {
        guard let id = entry["doc_id"]?.stringValue, let state = entry["state"]?.stringValue,
          printed[id] != state
        else { continue }
        printed[id] = state
        Console.outJSON(entry)
      }
    }
    while !following.isCancelled {
      show()
      try? await Task.sleep(for: .milliseconds(200))
    }
    await following.value
    show()
  }
}
