import ArgumentParser
import Foundation
import Settee
import SetteeCore

struct ImportCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "import",
    abstract: "Import documents from a JSON array or NDJSON file.",
    discussion:
      "The input is streamed, so files of any size import in bounded memory. By default the import is one transaction: all records or, if one is bad, none; the error names its line. Records keep their \"_rev\" when the document is new to the collection, so the output of 'settee export' imports back unchanged."
  )

  @OptionGroup var local: GlobalOptions
  @ParentCommand var root: SetteeCommand
  var options: GlobalOptions { local.merged(with: root.options) }
  @Argument(help: "The file to read, or - for standard input.") var file: String
  @Option(help: "Commit every N documents instead of all at once (not all-or-nothing).")
  var batchSize: Int?
  @Flag(help: "Do not draw a progress bar, even on a terminal.") var quiet = false

  func run() throws {
    if let batchSize, batchSize < 1 {
      throw ValidationError("--batch-size must be at least 1")
    }
    let collection = try options.openCollection(readOnly: false)
    let input = try InputFile(path: file)
    let limits = collection.database.configuration.limits
    var reader = JSONRecordReader(maxRecordBytes: limits.maxRecordBytes) {
      try input.read()
    }
    let bar = (!quiet && Console.stderrIsTerminal) ? ProgressBar(total: input.size) : nil
    let summary = try collection.importDocuments(from: &reader, batchSize: batchSize) { progress in
      bar?.show(progress)
    }
    bar?.finish()
    Console.outJSON([
      "ok": true, "docs": .int(Int64(summary.documents)), "batches": .int(Int64(summary.batches)),
    ])
  }
}

struct ExportCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "export",
    abstract: "Print every document as NDJSON, ordered by id.",
    discussion:
      "With --all-revisions, every leaf of every document (deleted ones and losing branches too) with its \"_revisions\" and its attachments inline: import grafts such records back into the same trees."
  )

  @OptionGroup var local: GlobalOptions
  @ParentCommand var root: SetteeCommand
  var options: GlobalOptions { local.merged(with: root.options) }
  @Flag(help: "Export whole revision trees: every leaf, its ancestry and attachments.")
  var allRevisions = false

  func run() throws {
    let collection = try options.openCollection(readOnly: true)
    if allRevisions {
      try collection.exportRevisionTrees { chunk in Console.out(chunk) }
    } else {
      try collection.exportDocuments { chunk in Console.out(chunk) }
    }
  }
}

/// A one-line progress display on standard error.
final class ProgressBar {
  private let total: Int?
  private let start = Date()

  init(total: Int?) { self.total = total }

  func show(_ progress: ImportProgress) {
    let elapsed = max(Date().timeIntervalSince(start), 0.001)
    let rate = Int(Double(progress.documents) / elapsed)
    var line = "\r"
    if let total, total > 0 {
      let fraction = min(Double(progress.bytes) / Double(total), 1)
      let width = 30
      let filled = Int(fraction * Double(width))
      line +=
        "[" + String(repeating: "=", count: filled)
        + String(repeating: " ", count: width - filled) + "] "
      line += String(format: "%3d%% ", Int(fraction * 100))
    }
    line += "\(progress.documents) docs, \(rate) docs/s "
    Console.err(line)
  }

  func finish() { Console.err("\n") }
}
