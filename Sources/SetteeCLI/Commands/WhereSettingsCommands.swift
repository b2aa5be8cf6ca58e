import ArgumentParser
import Settee
import SetteeCore

// The configuration of a collection's `where` face (seed 003): indexes, queryable fields,
// default values and aliases, each kept in the database.

struct WhereIndexCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "where-index",
    abstract: "Add, list and remove the indexes of `settee where` queries.",
    subcommands: [
      WhereIndexAddCommand.self, WhereIndexListCommand.self, WhereIndexRemoveCommand.self,
    ])
}

struct WhereIndexAddCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "add",
    abstract: "Add an index: fields in square brackets, each optionally ASC or DESC.",
    discussion:
      "Example: settee where-index add '[last_name], [first_name] DESC'; with --unique, a write that repeats a value fails (unique_violation) and writes nothing."
  )

  @OptionGroup var local: GlobalOptions
  @ParentCommand var root: SetteeCommand
  @Argument(help: "The fields, such as '[email]' or '[last], [first] DESC'.") var keys: String
  @Flag(help: "Refuse two documents with the same values.") var unique = false

  func run() throws {
    let collection = try local.merged(with: root.options).openCollection(readOnly: false)
    if unique { try collection.addUniqueIndex(keys) } else { try collection.addIndex(keys) }
    Console.outJSON(["ok": true])
  }
}

struct WhereIndexListCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "list",
    abstract: "Print the indexes as {\"indexes\":[{\"fields\":…,\"unique\":…}]}.")

  @OptionGroup var local: GlobalOptions
  @ParentCommand var root: SetteeCommand

  func run() throws {
    let indexes = try local.merged(with: root.options).openCollection(readOnly: true)
      .whereIndexes()
    Console.outJSON([
      "indexes": .array(
        indexes.map { ["fields": .string($0.description), "unique": .bool($0.isUnique)] })
    ])
  }
}

struct WhereIndexRemoveCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "remove", abstract: "Remove the index over these fields.")

  @OptionGroup var local: GlobalOptions
  @ParentCommand var root: SetteeCommand
  @Argument(help: "The fields, as given to add.") var keys: String

  func run() throws {
    try local.merged(with: root.options).openCollection(readOnly: false).removeIndex(keys)
    Console.outJSON(["ok": true])
  }
}

struct QueryableCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "queryable",
    abstract: "Add, list and remove queryable fields (kept beside the documents for `where`).",
    subcommands: [QueryableAddCommand.self, QueryableListCommand.self, QueryableRemoveCommand.self])
}

struct QueryableAddCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "add",
    abstract: "Make fields cheap to query: settee queryable add '[address.country]'.")

  @OptionGroup var local: GlobalOptions
  @ParentCommand var root: SetteeCommand
  @Argument(help: "Fields in square brackets, comma-separated.") var fields: String

  func run() throws {
    try local.merged(with: root.options).openCollection(readOnly: false).addQueryableFields(fields)
    Console.outJSON(["ok": true])
  }
}

struct QueryableListCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "list", abstract: "Print the queryable fields as {\"fields\":[…]}.")

  @OptionGroup var local: GlobalOptions
  @ParentCommand var root: SetteeCommand

  func run() throws {
    let fields = try local.merged(with: root.options).openCollection(readOnly: true)
      .queryableFields()
    Console.outJSON(["fields": .array(fields.map { .string($0.bracketed) })])
  }
}

struct QueryableRemoveCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "remove", abstract: "Stop keeping fields (an index over one keeps it).")

  @OptionGroup var local: GlobalOptions
  @ParentCommand var root: SetteeCommand
  @Argument(help: "Fields in square brackets, comma-separated.") var fields: String

  func run() throws {
    try local.merged(with: root.options).openCollection(readOnly: false).removeQueryableFields(
      fields)
    Console.outJSON(["ok": true])
  }
}

struct DefaultsCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "defaults",
    abstract: "Set and print the values `where` queries use for missing fields.",
    subcommands: [DefaultsSetCommand.self, DefaultsGetCommand.self])
}

struct DefaultsSetCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "set",
    abstract: "Replace the defaults: settee defaults set '{\"flag\": false}' ({} for none).")

  @OptionGroup var local: GlobalOptions
  @ParentCommand var root: SetteeCommand
  @Argument(help: "A JSON object nested as the documents are, or - for standard input.")
  var defaults: String

  func run() throws {
    guard case .object(let object) = try parseJSONArgument(defaults) else {
      throw SetteeError(
        .invalidArgument, "the defaults must be a JSON object, such as '{\"flag\": false}'")
    }
    try local.merged(with: root.options).openCollection(readOnly: false).setDefaults(object)
    Console.outJSON(["ok": true])
  }
}

struct DefaultsGetCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "get", abstract: "Print the defaults.")

  @OptionGroup var local: GlobalOptions
  @ParentCommand var root: SetteeCommand

  func run() throws {
    Console.outJSON(
      .object(try local.merged(with: root.options).openCollection(readOnly: true).defaults()))
  }
}

struct AliasCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "alias",
    abstract: "Set, list and remove aliases: bare names that stand for an expression in `where`.",
    subcommands: [AliasSetCommand.self, AliasRemoveCommand.self, AliasListCommand.self])
}

struct AliasSetCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "set", abstract: "Set one alias: settee alias set firstName '[user.first_name]'.")

  @OptionGroup var local: GlobalOptions
  @ParentCommand var root: SetteeCommand
  @Argument(help: "The alias (letters, digits and _).") var name: String
  @Argument(help: "What it stands for: a field or an expression without ?.") var expression: String

  func run() throws {
    let collection = try local.merged(with: root.options).openCollection(readOnly: false)
    var aliases = try collection.aliases()
    aliases[name] = expression
    try collection.setAliases(aliases)
    Console.outJSON(["ok": true])
  }
}

struct AliasRemoveCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "remove", abstract: "Remove an alias.")

  @OptionGroup var local: GlobalOptions
  @ParentCommand var root: SetteeCommand
  @Argument(help: "The alias.") var name: String

  func run() throws {
    let collection = try local.merged(with: root.options).openCollection(readOnly: false)
    var aliases = try collection.aliases()
    guard aliases.removeValue(forKey: name) != nil else {
      throw SetteeError(.notFound, "no alias \(JSON.string(name))")
    }
    try collection.setAliases(aliases)
    Console.outJSON(["ok": true])
  }
}

struct AliasListCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "list", abstract: "Print the aliases as a JSON object.")

  @OptionGroup var local: GlobalOptions
  @ParentCommand var root: SetteeCommand

  func run() throws {
    let aliases = try local.merged(with: root.options).openCollection(readOnly: true).aliases()
    Console.outJSON(
      .object(JSONObject(aliases.sorted { $0.key < $1.key }.map { ($0, .string($1)) })))
  }
}
