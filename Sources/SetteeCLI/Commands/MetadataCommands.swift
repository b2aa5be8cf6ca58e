import ArgumentParser
import Settee
import SetteeCore

struct MetadataCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "metadata", abstract: "Read and write the store-wide metadata (JSON by key).",
    subcommands: [
      MetadataGetCommand.self, MetadataSetCommand.self, MetadataDeleteCommand.self,
      MetadataListCommand.self,
    ])
}

struct MetadataGetCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "get", abstract: "Print the value stored under a key (not_found when none).")

  @OptionGroup var local: GlobalOptions
  @ParentCommand var root: SetteeCommand
  @Argument(help: "The key.") var key: String

  func run() throws {
    let database = try local.merged(with: root.options).openDatabase(readOnly: true)
    guard let value = try database.metadata(forKey: key) else {
      throw SetteeError(.notFound, "no metadata under \(JSON.string(key))")
    }
    Console.outJSON(value)
  }
}

struct MetadataSetCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "set", abstract: "Store a JSON value under a key (replacing what was there).")

  @OptionGroup var local: GlobalOptions
  @ParentCommand var root: SetteeCommand
  @Argument(help: "The key.") var key: String
  @Argument(help: "The value as JSON, or - to read it from standard input.") var value: String

  func run() throws {
    let value = try parseJSONArgument(self.value)
    try local.merged(with: root.options).openDatabase(readOnly: false).setMetadata(
      value, forKey: key)
    Console.outJSON(["ok": true])
  }
}

struct MetadataDeleteCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "delete", abstract: "Remove a key.")

  @OptionGroup var local: GlobalOptions
  @ParentCommand var root: SetteeCommand
  @Argument(help: "The key.") var key: String

  func run() throws {
    try local.merged(with: root.options).openDatabase(readOnly: false).setMetadata(nil, forKey: key)
    Console.outJSON(["ok": true])
  }
}

struct MetadataListCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "list", abstract: "Print every key and its value.")

  @OptionGroup var local: GlobalOptions
  @ParentCommand var root: SetteeCommand

  func run() throws {
    let database = try local.merged(with: root.options).openDatabase(readOnly: true)
    var object = JSONObject()
    for key in try database.metadataKeys() { object[key] = try database.metadata(forKey: key) }
    Console.outJSON(.object(object))
  }
}
