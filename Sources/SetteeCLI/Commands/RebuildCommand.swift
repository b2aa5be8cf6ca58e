import ArgumentParser
import Foundation
import Settee
import SetteeCore

struct RebuildCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "rebuild",
    abstract:
      "Rebuild secondary indexes from the documents (what repairs `settee check`'s index problems).",
    discussion:
      #"Rebuilds every index of --collection, or of every collection with --all: JSON and TEXT indexes, the where face's field tables and indexes; views and value indexes catch up again when next queried. Documents are not touched. Prints {"ok":true,"collections":[…]}."#
  )

  @OptionGroup var local: GlobalOptions
  @ParentCommand var root: SetteeCommand
  var options: GlobalOptions { local.merged(with: root.options) }

  @Flag(name: .long, help: "Rebuild the indexes of every collection.")
  var all = false

  func run() throws {
    // Rebuilding a database that does not exist is a mistake, not a new empty file.
    guard FileManager.default.fileExists(atPath: options.databasePath) else {
      throw SetteeError(.notFound, "no database at \(options.databasePath) to rebuild")
    }
    let database = try options.openDatabase(readOnly: false)
    let names = all ? try database.collectionNames() : [options.collectionName]
    for name in names { try database.collection(name).rebuildIndexes() }
    Console.outJSON(["ok": true, "collections": .array(names.map { .string($0) })])
  }
}
