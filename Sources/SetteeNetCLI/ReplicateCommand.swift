import ArgumentParser
import Foundation
import SetteeCLI
import Settee
import SetteeCore
import SetteeReplication

struct ReplicateCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "replicate",
    abstract: NetworkCommands.replicateAbstract,
    discussion:
      #"Each side is a URL of a CouchDB-protocol database (http://name:password@host:5984/db: CouchDB, settee serve), or a collection of a local file written FILE#COLLECTION (FILE alone: its default collection). A replication resumes from the checkpoints both sides keep. Shows progress on standard error when it is a terminal, and prints CouchDB's _replicate answer as JSON at the end. --continuous runs until Ctrl-C or SIGTERM."#
  )

  @Argument(help: "Where documents come from: a URL or FILE[#COLLECTION].") var source: String
  @Argument(help: "Where they go: a URL or FILE[#COLLECTION].") var target: String
  @Flag(help: "Follow the source's changes until stopped.") var continuous = false
  @Flag(help: "Create the target database if it does not exist.") var createTarget = false
  @Flag(help: "Copy only winning revisions, not conflicts.") var winningRevsOnly = false
  @Option(
    help:
      "Replicate only these document ids: a JSON array (for ids that hold commas), or comma-separated."
  ) var docIds: String?
  @Option(help: "Replicate only documents this Mango selector (JSON) matches.") var selector:
    String?
  @Option(
    help:
      "Replicate only the changes this design document's JavaScript filter function keeps (\"design/filter\"), or with _view those a view's map function emits a row for (--query-params '{\"view\": \"design/view\"}'): a server source runs it, a file source runs it here on JavaScriptCore."
  ) var filter: String?
  @Option(help: "With --filter: the filter's req.query, as a JSON object.") var queryParams: String?
  @Option(help: "Start after this source sequence instead of at the checkpoint.") var since: String?
  @Option(help: "Changes read at a time.") var batchSize = 1_000
  @Option(help: "Seconds between checkpoints, at most.") var checkpointInterval: Double = 5
  @Option(help: "Seconds a request may take before the connection counts as stalled.")
  var requestTimeout: Double = 60
  @Flag(
    inversion: .prefixedNo,
    help: "Read and write checkpoints on both sides (--no-checkpoints starts from the beginning and leaves none)."
  ) var checkpoints = true
  @Flag(
    inversion: .prefixedNo,
    help: "Read a server source's documents with _bulk_get (--no-bulk-get: each by open_revs).")
  var bulkGet = true

  func validate() throws {
    guard [docIds, selector, filter].compactMap({ $0 }).count <= 1 else {
      throw ValidationError("give one of --doc-ids, --selector and --filter")
    }
    guard queryParams == nil || filter != nil else {
      throw ValidationError("--query-params goes with --filter")
    }
    guard batchSize >= 1 else { throw ValidationError("--batch-size must be at least 1") }
    guard requestTimeout.isFinite, (1...86_400).contains(requestTimeout) else {
      throw ValidationError("--request-timeout must be a number of seconds from 1 to 86400")
    }
    guard checkpointInterval.isFinite, (0...86_400).contains(checkpointInterval) else {
      throw ValidationError("--checkpoint-interval must be a number of seconds from 0 to 86400")
    }
  }

  func run() async throws {
    var databases: [String: Database] = [:]
    func endpoint(_ text: String) throws -> ReplicationEndpoint {
      let lowered = text.lowercased()
      if lowered.hasPrefix("http://") || lowered.hasPrefix("https://") {
        guard let url = URL(string: text) else {
          // Not echoed: it may hold a password.
          throw SetteeError(.invalidArgument, "a side that starts with http(s):// is not a URL")
        }
        return .url(url)
      }
      let parts = text.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)
      let path = String(parts[0])
      let name = parts.count > 1 ? String(parts[1]) : Database.defaultCollectionName
      guard !path.isEmpty, !name.isEmpty else {
        throw SetteeError(.invalidArgument, "a local side is FILE or FILE#COLLECTION, not \(text)")
      }
      let key = URL(fileURLWithPath: path).standardizedFileURL.path
      if databases[key] == nil { databases[key] = try Database(path: path) }
      return .collection(databases[key]!.collection(name))
    }
    var filter = ReplicationFilter.none
    if let docIds {
      if docIds.trimmingCharacters(in: .whitespaces).hasPrefix("[") {
        guard case .array(let items)? = try? JSONParser.parse(docIds),
          items.allSatisfy({ $0.stringValue != nil })
        else {
          throw SetteeError(.invalidArgument, "--doc-ids that starts with [ must be a JSON array of strings")
        }
        filter = .documentIDs(items.compactMap(\.stringValue))
      } else {
        filter = .documentIDs(
          docIds.split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) })
      }
    } else if let selector {
      guard case .object(let object)? = try? JSONParser.parse(selector) else {
        throw SetteeError(.invalidArgument, "--selector must be a JSON object")
      }
      filter = .selector(object)
    } else if let name = self.filter {
      var parameters: JSONObject = [:]
      if let queryParams {
        guard case .object(let object)? = try? JSONParser.parse(queryParams) else {
          throw SetteeError(.invalidArgument, "--query-params must be a JSON object")
        }
        parameters = ReplicationFilter.queryParameters(object)
      }
      filter = .design(name, queryParameters: parameters)
    }
    let replicator = try Replicator(
      ReplicationConfiguration(
        source: try endpoint(source), target: try endpoint(target), continuous: continuous,
        createTarget: createTarget, filter: filter, sinceSequence: since,
        winningRevisionsOnly: winningRevsOnly, batchSize: batchSize,
        checkpointInterval: .milliseconds(Int64(checkpointInterval * 1000)),
        requestTimeout: .milliseconds(Int64(requestTimeout * 1000)),
        useCheckpoints: checkpoints, useBulkGet: bulkGet))
    let stopping = Termination.onSignal { replicator.stop() }
    defer { stopping.forEach { $0.cancel() } }
    let showsProgress = Console.stderrIsTerminal
    var last = ReplicationProgress()
    for await progress in replicator.start() {
      last = progress
      if showsProgress { Console.err("\r\u{1B}[K" + Self.line(progress)) }
    }
    if showsProgress { Console.err("\n") }
    Console.outJSON(last.json)
    if last.state == .failed {
      Console.error(name: "replication_failed", reason: last.lastError ?? "failed")
      throw ExitCode(1)
    }
  }

  /// The progress line drawn on a terminal.
  static func line(_ progress: ReplicationProgress) -> String {
    var text = ""
    // A bar of the changes read against those the source says are left.
    if let pending = progress.pending, progress.changesRead + pending > 0 {
      let done = Double(progress.changesRead) / Double(progress.changesRead + pending)
      let filled = Int((done * 20).rounded(.down))
      text +=
        "[" + String(repeating: "#", count: filled)
        + String(repeating: ".", count: 20 - filled) + "] \(Int(done * 100))% "
    }
    text += "\(progress.state.rawValue): \(progress.docsWritten) written"
    if progress.docWriteFailures > 0 { text += ", \(progress.docWriteFailures) refused" }
    if let pending = progress.pending, pending > 0 { text += ", \(pending) pending" }
    if progress.state == .retrying, let error = progress.lastError { text += " (\(error))" }
    return text
  }

}
