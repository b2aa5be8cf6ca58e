import ArgumentParser
import Settee
import SetteeCore

struct DescribeCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "describe",
    abstract: "List what the collection keeps beside its documents: every index of every kind.",
    discussion:
      #"Prints {"collection":…,"documents":N,"secondary":[{"kind","name","upkeep","rows"[,"changes_behind"]}]}: JSON and TEXT indexes and the where face's fields are kept by every write ("in_write", "by_trigger"); views and value indexes catch up when queried ("on_read"), "changes_behind" says how far they are. Only reads: works on read-only files."#
  )

  @OptionGroup var local: GlobalOptions
  @ParentCommand var root: SetteeCommand
  var options: GlobalOptions { local.merged(with: root.options) }

  func run() throws {
    let collection = try options.openCollection(readOnly: true)
    Console.outJSON([
      "collection": .string(collection.name), "documents": .int(Int64(try collection.count())),
      "secondary": .array(try collection.secondaryIndexes().map(\.json)),
    ])
  }
}
