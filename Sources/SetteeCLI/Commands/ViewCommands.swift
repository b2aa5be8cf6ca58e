import ArgumentParser
import Foundation
import Settee
import SetteeJavaScript
import SetteeCore

struct ViewCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "view", abstract: "Define, list, query and delete map/reduce views.",
    discussion: "See docs/views.md for the definition shape, the collation and every option.",
    subcommands: [
      ViewCreateCommand.self, ViewListCommand.self, ViewQueryCommand.self, ViewDeleteCommand.self,
    ])
}

struct ViewCreateCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "create",
    abstract: "Define a view (or change its definition, which rebuilds it).",
    discussion:
      #"Example: settee view create '{"name":"by_store","key":["store","item"],"value":"price","reduce":"_sum"}'. Members: name, key (a field or an array of fields), each (the field whose array elements or object values emit a row each; true for a one-field key), value (null, a field, an array of fields, or "_doc"), filter (a Mango selector), reduce ("_count", "_sum", "_stats", "_approx_count_distinct"), collation ("unicode" or "raw"). Prints {"result":"created"|"updated"|"exists","name":…}; the view is built by its first query."#
  )

  @OptionGroup var local: GlobalOptions
  @ParentCommand var root: SetteeCommand
  @Argument(help: "The view definition as JSON, or - to read it from standard input.")
  var definition: String

  func run() throws {
    let options = local.merged(with: root.options)
    let definition = try ViewDefinition(json: parseJSONArgument(self.definition))
    let collection = try options.openCollection(readOnly: false)
    let before = try collection.views().first { $0.name == definition.name }
    try collection.defineView(definition)
    let result =
      before == nil ? "created" : before?.definition == definition.json ? "exists" : "updated"
    Console.outJSON(["result": .string(result), "name": .string(definition.name)])
  }
}

struct ViewListCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "list",
    abstract: "List the views: definition (or Swift version), rows, update sequence.")

  @OptionGroup var local: GlobalOptions
  @ParentCommand var root: SetteeCommand

  func run() throws {
    let options = local.merged(with: root.options)
    let views = try options.openCollection(readOnly: true).views()
    Console.outJSON(["total_rows": .int(Int64(views.count)), "views": .array(views.map(\.json))])
  }
}

struct ViewQueryCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "query",
    abstract: "Query a view with CouchDB's options; prints CouchDB's view response.",
    discussion:
      #"Example: settee view query by_store '{"startkey":["Safeway"],"endkey":["Safeway",{}],"group_level":1}'. Options: key, keys, startkey, endkey, startkey_docid, endkey_docid, inclusive_end, descending, skip, limit, group, group_level, reduce, include_docs, stale ("ok", "update_after"), update, prefix_match_level. Prints {"total_rows":N,"offset":K,"rows":[{"id","key","value"}]} ({"rows":[{"key","value"}]} when reduced). A view whose map function is Swift code can be queried here only with "stale":"ok" when it is behind. "design/view" queries the view of the design document _design/design, JavaScript views included (run on JavaScriptCore: libjavascriptcoregtk-4.1-0 on Linux)."#
  )

  @OptionGroup var local: GlobalOptions
  @ParentCommand var root: SetteeCommand
  @Argument(help: "The view's name.") var name: String
  @Argument(help: "The query options as a JSON object, or - to read them from standard input.")
  var query: String = "{}"

  func run() throws {
    let options = local.merged(with: root.options)
    let query = try parseViewQuery(self.query)
    let collection = try openForView(options, stale: query.stale)
    // "d/v" names the view v of the design document _design/d (JavaScript, run on
    // JavaScriptCore, or "language": "settee") when that design document exists.
    if let slash = name.firstIndex(of: "/"),
      try collection.get("_design/" + name[..<slash]) != nil
    {
      Console.outJSON(try collection.designView(name).query(query).json)
      return
    }
    Console.outJSON(try collection.view(named: name).query(query).json)
  }
}

struct ViewDeleteCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "delete", abstract: "Delete a view and its rows.")

  @OptionGroup var local: GlobalOptions
  @ParentCommand var root: SetteeCommand
  @Argument(help: "The view's name.") var name: String

  func run() throws {
    let options = local.merged(with: root.options)
    try options.openCollection(readOnly: false).deleteView(named: name)
    Console.outJSON(["ok": true])
  }
}

struct AllDocsCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "all-docs",
    abstract: "List documents by id with view options (CouchDB's _all_docs).",
    discussion:
      #"Example: settee all-docs '{"startkey":"a","endkey":"m","limit":10,"include_docs":true}'. Options: key, keys, startkey, endkey, inclusive_end, descending, skip, limit, include_docs, prefix_match_level. Prints {"total_rows":N,"offset":K,"rows":[{"id","key","value":{"rev"}}]}."#
  )

  @OptionGroup var local: GlobalOptions
  @ParentCommand var root: SetteeCommand
  @Argument(help: "The query options as a JSON object, or - to read them from standard input.")
  var query: String = "{}"

  func run() throws {
    let options = local.merged(with: root.options)
    let result = try options.openCollection(readOnly: true).allDocuments(parseViewQuery(query))
    Console.outJSON(result.json)
  }
}

/// A view query may write (to bring the view up to date): it opens the database for
/// writing unless it reads stale rows, and falls back to read-only when the file cannot
/// be written (a view that is behind then says so).
func openForView(_ options: GlobalOptions, stale: ViewQuery.Staleness) throws -> DocumentCollection
{
  // A query never creates a database: without a file, the read-only open says so.
  // (An empty file is no database either, as a read-only open says.)
  let exists = try Database.exists(atPath: options.databasePath)
  if stale == .ok || !exists {
    return try options.openCollection(readOnly: true)
  }
  do { return try options.openCollection(readOnly: false) } catch let error as SetteeError
    where error.code == .readOnly
  {
    return try options.openCollection(readOnly: true)
  }
}

/// View query options from an argument: CouchDB's response always has `offset`, so the
/// command line counts it unless told otherwise (`"include_offset": false`).
func parseViewQuery(_ argument: String) throws -> ViewQuery {
  let json = try parseJSONArgument(argument)
  var query = try ViewQuery(json: json)
  if json["include_offset"] == nil { query.includeOffset = true }
  return query
}
