import ArgumentParser
import Settee
import SetteeCore

struct IndexCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "index", abstract: "Create, list and delete query indexes.",
    subcommands: [IndexCreateCommand.self, IndexListCommand.self, IndexDeleteCommand.self])
}

struct IndexCreateCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "create",
    abstract: "Create an index (CouchDB's _index body).",
    discussion:
      #"Example: settee index create '{"index":{"fields":["name","age"]},"name":"basic","type":"json"}'. Prints {"result":"created"|"exists","id":"_design/…","name":…}; without "name", one is made from the definition (the same each time). "ddoc" names the design document; "index" takes "fields" and "partial_filter_selector" (only matching documents are indexed). Documents already stored are indexed before it returns."#
  )

  @OptionGroup var local: GlobalOptions
  @ParentCommand var root: SetteeCommand
  @Argument(help: "The index definition as JSON, or - to read it from standard input.")
  var definition: String

  func run() throws {
    let options = local.merged(with: root.options)
    let definition = try IndexDefinition(json: parseJSONArgument(self.definition))
    let collection = try options.openCollection(readOnly: false)
    let existed = try collection.indexes().contains(definition)
    try collection.ensureIndexed(definition)
    Console.outJSON([
      "result": existed ? "exists" : "created", "id": .string(definition.designDocumentID),
      "name": .string(definition.name),
    ])
  }
}

struct IndexListCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "list", abstract: "List the indexes (CouchDB's GET _index shape).")

  @OptionGroup var local: GlobalOptions
  @ParentCommand var root: SetteeCommand

  func run() throws {
    let options = local.merged(with: root.options)
    let indexes = try options.openCollection(readOnly: true).indexes()
    let listed = [IndexDefinition.allDocsListing] + indexes.map(\.couchDBListing)
    Console.outJSON(["total_rows": .int(Int64(listed.count)), "indexes": .array(listed)])
  }
}

struct IndexDeleteCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "delete", abstract: "Delete an index by name.")

  @OptionGroup var local: GlobalOptions
  @ParentCommand var root: SetteeCommand
  @Argument(help: "The index name.") var name: String

  func run() throws {
    let options = local.merged(with: root.options)
    try options.openCollection(readOnly: false).deleteIndex(named: name)
    Console.outJSON(["ok": true])
  }
}

struct FindCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "find",
    abstract: "Find documents with a Cloudant Query / Mango query.",
    discussion:
      #"Example: settee find '{"selector":{"age":{"$gt":20}},"sort":[{"age":"desc"}],"fields":["name"],"limit":10}'. Prints CouchDB's response, {"docs":[…],"bookmark":"…"} (with "warning" and "execution_stats" when there are any), streaming, so large results do not fill memory."#
  )

  @OptionGroup var local: GlobalOptions
  @ParentCommand var root: SetteeCommand
  @Argument(help: "The query (CouchDB's _find body), or - to read it from standard input.")
  var query: String
  @Option(
    help: ArgumentHelp(
      "Whose query semantics: cloudant-sync (Settee's default) or couchdb (CouchDB 3.5's _find, as settee serve answers it: no implicit array element matching, ranges across types, ICU string order, limit 25 unless given).",
      valueName: "dialect"))
  var dialect: QueryDialect = .cloudantSync

  func run() throws {
    let options = local.merged(with: root.options)
    let query = try FindQuery(json: parseJSONArgument(self.query), dialect: dialect)
    var chunk = Array(#"{"docs":["#.utf8)
    var first = true
    let summary = try options.openCollection(readOnly: true).find(query) { document in
      if !first { chunk.append(UInt8(ascii: ",")) }
      first = false
      chunk.append(UInt8(ascii: "\n"))
      JSONWriter.write(.object(document.json), into: &chunk)
      if chunk.count > 64 * 1024 {
        Console.out(chunk)
        chunk.removeAll(keepingCapacity: true)
      }
    }
    // The rest of CouchDB's response, after the streamed documents.
    var rest: JSONObject = summary.showsBookmark ? ["bookmark": .string(summary.bookmark)] : [:]
    if let warning = summary.warning { rest["warning"] = .string(warning) }
    if let stats = summary.executionStats { rest["execution_stats"] = stats.json }
    chunk.append(contentsOf: Array((first ? "]" : "\n]").utf8))
    if !rest.isEmpty {
      chunk.append(UInt8(ascii: ","))
      JSONWriter.writeMembers(rest, into: &chunk)
    }
    chunk.append(contentsOf: Array("}\n".utf8))
    Console.out(chunk)
  }
}

struct ExplainCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "explain",
    abstract: "Show how a query would run: the index (or a scan), the SQL, and why.")

  @OptionGroup var local: GlobalOptions
  @ParentCommand var root: SetteeCommand
  @Argument(help: "The query, as for find, or - to read it from standard input.") var query: String

  func run() throws {
    let options = local.merged(with: root.options)
    let json = try parseJSONArgument(self.query)
    let query = try FindQuery(json: json)
    var plan = try options.openCollection(readOnly: true).explain(query).json.objectValue ?? [:]
    plan["selector"] = json["selector"] ?? [:]
    plan["skip"] = .int(Int64(query.skip))
    plan["limit"] = .int(Int64(query.limit))
    Console.outJSON(.object(plan))
  }
}

/// Parses a JSON argument, or standard input when it is `-`. Standard input is parsed as
/// bytes, so invalid UTF-8 there is an error with its line and column, never replaced.
func parseJSONArgument(_ argument: String, maxDepth: Int = JSONParser.defaultMaxDepth) throws
  -> JSON
{
  try JSONParser.parse(
    argument == "-" ? try InputFile(path: "-").readAll() : Array(argument.utf8), maxDepth: maxDepth)
}

extension QueryDialect: ExpressibleByArgument {}
