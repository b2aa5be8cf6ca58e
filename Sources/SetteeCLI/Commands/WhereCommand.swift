import ArgumentParser
import Settee
import SetteeCore

struct WhereCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "where",
    abstract: "Find documents with a SQLite WHERE clause over [fields] (seed 003).",
    discussion:
      #"Example: settee where '[age] > ? AND [name] LIKE ?' --args '[30,"m%"]' --order-by '[name] DESC' --limit 10. Prints {"docs":[…]}, or {"count":N} with --count. Values reach SQL only through ? and --args; see docs/where.md for the grammar. A where string of - is read from standard input."#
  )

  @OptionGroup var local: GlobalOptions
  @ParentCommand var root: SetteeCommand
  @Argument(help: "The where clause (empty for every document; - reads it from standard input).")
  var condition: String = ""
  @Option(help: "The values of the ?s, as a JSON array.") var args: String = "[]"
  @Option(name: .customLong("order-by"), help: "Expressions with ASC/DESC, comma-separated.")
  var orderBy: String = ""
  @Option(help: "The most documents to print.") var limit: Int?
  @Flag(help: "Print how many documents match instead.") var count = false
  @Flag(help: "Print the SQL Settee wrote and SQLite's plan for it instead.") var explain = false

  func run() throws {
    let options = local.merged(with: root.options)
    guard case .array(let arguments) = try parseJSONArgument(args) else {
      throw SetteeError(.invalidQuery, "--args must be a JSON array, such as '[30, \"m%\"]'")
    }
    // A string too long for one command-line argument (128 KiB) comes on standard input,
    // as UTF-8 (invalid bytes are an error, never replaced). `-` alone is no where string.
    var condition = condition
    if condition == "-" {
      let bytes = try InputFile(path: "-").readAll()
      guard let text = String(validatingUTF8: bytes) else {
        throw SetteeError(.invalidJSON, "the where string on standard input is not valid UTF-8")
      }
      condition = text
    }
    let collection = try options.openCollection(readOnly: true)
    if explain {
      let plan = try collection.explain(
        where: condition, args: arguments, orderBy: orderBy, limit: limit)
      Console.outJSON(["sql": .string(plan.sql), "plan": .array(plan.steps.map(JSON.string))])
      return
    }
    if count {
      Console.outJSON([
        "count": .int(Int64(try collection.count(where: condition, args: arguments)))
      ])
      return
    }
    let documents = try collection.find(
      where: condition, args: arguments, orderBy: orderBy, limit: limit)
    Console.outJSON(["docs": .array(documents.map { .object($0.json) })])
  }
}
