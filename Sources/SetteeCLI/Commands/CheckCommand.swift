import ArgumentParser
import Settee
import SetteeCore

struct CheckCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "check",
    abstract: "Check the database file: SQLite's integrity, every document, every index entry.",
    discussion:
      #"Prints {"ok":…,"integrity":[…],"documents":N,"index_entries":N,"problems":[…]}; exits with status 1 when anything is wrong. Only reads: works on read-only files."#
  )

  @OptionGroup var local: GlobalOptions
  @ParentCommand var root: SetteeCommand
  var options: GlobalOptions { local.merged(with: root.options) }

  func run() throws {
    let report = try options.openDatabase(readOnly: true).check()
    let problems: [JSON] = report.problems.map { problem in
      var entry: JSONObject = [:]
      if let collection = problem.collection { entry["collection"] = .string(collection) }
      if let id = problem.documentID { entry["id"] = .string(id) }
      if let index = problem.index { entry["index"] = .string(index) }
      entry["problem"] = .string(problem.message)
      return .object(entry)
    }
    Console.outJSON([
      "ok": .bool(report.isHealthy), "integrity": .array(report.integrity.map { .string($0) }),
      "documents": .int(Int64(report.documents)),
      "index_entries": .int(Int64(report.indexEntries)), "problems": .array(problems),
      "problem_count": .int(Int64(report.problemCount)),
    ])
    guard report.isHealthy else {
      throw SetteeError(
        .corruption,
        "the database is damaged: \(report.problemCount) problem(s) in documents or indexes, \(report.integrity.count) from SQLite's integrity check (listed on standard output)"
      )
    }
  }
}
