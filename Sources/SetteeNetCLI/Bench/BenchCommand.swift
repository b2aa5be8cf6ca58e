import ArgumentParser
import Foundation
import GRDB
import Settee
import SetteeCLI
import SetteeCore

struct BenchCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "bench",
    abstract: NetworkCommands.benchAbstract,
    discussion:
      "Build with 'swift build -c release' first: a debug build measures the compiler's checks. Each workload runs Settee's API and a baseline that does the same work with hand-written SQL through GRDB, on the same file and the same documents, and prints the medians and their ratio."
  )

  @Flag(help: "A smoke run that takes seconds (2,000 documents, one repetition).") var quick = false
  @Option(help: "How many documents in the main collection.") var docs: Int?
  @Flag(help: "Print JSON instead of a table.") var json = false
  @Option(
    help:
      "A new file to create the benchmark database in, kept afterwards (default: a temporary file, removed)."
  )
  var db: String?
  @ParentCommand var root: SetteeCommand
  @Option(
    help: ArgumentHelp(
      "Run only these workloads (comma-separated): \(BenchSuite.workloads.joined(separator: ", ")); with --server: \(ServerBench.workloads.keys.sorted().joined(separator: ", ")).",
      valueName: "keys"))
  var only: String?
  @Flag(
    name: .customLong("compare-sqlite3"),
    help:
      "Instead: whole processes of this binary (import, index create, find) against the sqlite3 shell doing the same work by hand, best of 3 (issue 16's table)."
  )
  var compareSQLite3 = false
  @Flag(
    name: .customLong("server"),
    help:
      "Instead: settee serve's requests per second over loopback against a Hummingbird server answering a constant body of the same size, and _bulk_docs against import (issue 32's figures)."
  )
  var server = false
  @Flag(
    name: .customLong("replication"),
    help:
      "Instead: push and pull between a file and settee serve and between two servers against import, a no-op replication, and continuous latency (issue 33's figures)."
  )
  var replication = false
  @Option(
    help: ArgumentHelp(
      "An earlier run's --json report: after this run, name each row whose ratio moved beyond the two runs' noise.",
      valueName: "file"))
  var compare: String?

  /// `--db` given before or after `bench`.
  var keptPath: String? { db ?? root.options.db }

  func validate() throws {
    if let path = keptPath, FileManager.default.fileExists(atPath: path) {
      throw ValidationError(
        "--db \(path) exists; the benchmark needs a new file, which it fills with its own collections"
      )
    }
    let known = server ? ServerBench.workloads.keys.sorted() : BenchSuite.workloads
    for key in selected ?? [] where !known.contains(key) {
      throw ValidationError(
        "unknown workload '\(key)' in --only; choose from \(known.joined(separator: ", "))")
    }
    if selected != nil && replication {
      throw ValidationError("--only does not apply to --replication")
    }
  }

  var selected: Set<String>? {
    only.map { Set($0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }) }
  }

  func run() async throws {
    let count = docs ?? (quick ? 2_000 : 100_000)
    guard count >= 100 else { throw ValidationError("--docs must be at least 100") }
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
      "settee-bench-\(UUID().uuidString.prefix(8))")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    if compareSQLite3 {
      let rows = try await onOwnThread {
        try CompareSQLite3(count: count, directory: directory) { message in
          Console.err(message + "\n")
        }.run()
      }
      Console.out(CompareSQLite3.table(rows))
      return
    }
    if server || replication {
      let json = json
      let log: @Sendable (String) -> Void = { message in
        if !json { Console.err(message + "\n") }
      }
      let results =
        server
        ? try await ServerBench(
          count: count, quick: quick, directory: directory, log: log, only: selected
        ).run()
        : try await ReplicationBench(count: count, quick: quick, directory: directory, log: log)
          .run()
      if json {
        Console.outJSON(["machine": BenchSuite.machine, "benchmarks": .array(results.map(\.json))])
      } else {
        Console.out(BenchSuite.table(results))
      }
      return
    }
    let path = keptPath ?? directory.appendingPathComponent("bench.db").path
    var suite = try BenchSuite(path: path, documents: count, quick: quick) { message in
      if !json { Console.err(message + "\n") }
    }
    suite.only = selected
    #if DEBUG
      if !json {
        Console.err(
          "warning: this is a debug build; run 'swift build -c release' and .build/release/settee bench\n"
        )
      }
    #endif
    let earlier = try compare.map { path in
      try JSONParser.parse(try InputFile(path: path).readAll())
    }
    let results = try await BenchSuite.run(suite)
    let moved = earlier.map { BenchComparison.moved(from: $0, to: results) }
    if json {
      var report: JSONObject = [
        "machine": BenchSuite.machine,
        "benchmarks": .array(results.map(\.json)),
        "peak_memory_bytes": .int(Int64(Measure.peakMemory)),
      ]
      if let moved { report["moved"] = .array(moved.map { .string($0) }) }
      Console.outJSON(.object(report))
    } else {
      Console.out(BenchSuite.table(results))
      Console.out("peak memory: \(Measure.peakMemory / 1_048_576) MB\n")
      if let moved {
        Console.out(
          moved.isEmpty
            ? "no row moved beyond its noise since \(compare ?? "")\n"
            : moved.joined(separator: "\n") + "\n")
      }
    }
  }
}

/// One measured workload.
struct BenchResult: Sendable {
  var name: String
  var n: Int
  var settee: Double
  var baseline: Double
  /// The ratio the project aims for, if any.
  var target: Double?
  /// The seed's own figure for the same work (iPhone 5, 2014), if it published one.
  var seed: Double?
  /// For a figure with no baseline (a latency): the most it should take, in seconds.
  var limit: Double? = nil
  /// The lowest and highest ratio of one run of each side, when the two were timed in
  /// alternation: how far the ratio moves by itself on this machine.
  var ratios: ClosedRange<Double>? = nil

  var ratio: Double { baseline > 0 ? settee / baseline : 0 }

  var json: JSON {
    var object: JSONObject = [
      "name": .string(name), "n": .int(Int64(n)), "settee_s": .double(settee),
      "baseline_s": .double(baseline),
      "ratio": .double((ratio * 1000).rounded() / 1000),
    ]
    if let target { object["target"] = .double(target) }
    if let limit { object["limit_s"] = .double(limit) }
    if let seed { object["seed_iphone5_s"] = .double(seed) }
    if let ratios {
      object["ratio_low"] = .double((ratios.lowerBound * 1000).rounded() / 1000)
      object["ratio_high"] = .double((ratios.upperBound * 1000).rounded() / 1000)
    }
    return .object(object)
  }
}

extension BenchResult {
  /// A row from work timed in alternation against its baseline.
  init(name: String, n: Int, _ timed: Paired, target: Double?, seed: Double? = nil) {
    self.init(
      name: name, n: n, settee: timed.settee, baseline: timed.baseline, target: target,
      seed: seed, ratios: timed.ratios)
  }
}
