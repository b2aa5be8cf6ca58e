import ArgumentParser
import Foundation
import Settee
import SetteeCore

struct DemoCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "demo",
    abstract: "Create a demo database from the bundled sample data and show what Settee does.")

  @OptionGroup var local: GlobalOptions
  @ParentCommand var root: SetteeCommand
  /// `--db`: where to create the demo database; it must not exist. Default: a new temporary file.
  var db: String? { local.merged(with: root.options).db }

  @Option(
    help: ArgumentHelp(
      "Only write the demo's sample people as NDJSON to this file (- for stdout), for `settee import`.",
      valueName: "file"))
  var sample: String?

  func run() async throws {
    if let sample {
      let text = Array(
        (DemoData.people.hasSuffix("\n") ? DemoData.people : DemoData.people + "\n").utf8)
      if sample == "-" {
        Console.out(String(decoding: text, as: UTF8.self))
      } else {
        do {
          try Data(text).write(to: URL(fileURLWithPath: sample), options: .withoutOverwriting)
        } catch {
          throw SetteeError(
            .io,
            "cannot write the sample to \(sample) (it must not exist yet): \(error.localizedDescription)"
          )
        }
      }
      return
    }
    let path = try demoPath()
    let database = try Database(path: path)
    let people = database.collection(DemoData.collectionName)
    let output = DemoOutput()
    Console.out("Settee demo: a JSON document database in one SQLite file.\n")
    Console.out("   database: \(path)\n")
    try showTheEngine(database, people, output)
    try await showLiveQueries(people, output)
    try showExport(people, path, output)
  }

  /// Import, documents, revisions, Codable, conflicts, changes, queries, full text, views
  /// and value indexes: the blocking calls, each as a user would write it.
  private func showTheEngine(
    _ database: Database, _ people: DocumentCollection, _ output: DemoOutput
  ) throws {
    func section(_ title: String) { output.section(title) }
    func show(_ label: String, _ value: JSON) { output.show(label, value) }

    section("Import the bundled sample data set (NDJSON, one transaction)")
    var lines = DemoData.people.split(separator: "\n").map { Array($0.utf8) + [10] }.makeIterator()
    var reader = JSONRecordReader(maxRecordBytes: 1 << 20) { lines.next() }
    let summary = try people.importDocuments(from: &reader)
    Console.out("   imported \(summary.documents) documents into collection \"\(people.name)\"\n")

    section("Read a document by id")
    let mike = try people.get("mike34")!
    show("get mike34 ->", .object(mike.json))

    section("Update it: the write must name the current _rev")
    var changed = mike.json
    changed["age"] = 35
    let updated = try people.put(changed)
    show(
      "put ->", ["ok": true, "id": .string(updated.id), "rev": .string(updated.rev.description)])

    section("A stale _rev is a conflict, and nothing is written")
    do {
      try people.put(changed)
    } catch let error as SetteeError {
      show(
        "put with the old _rev ->",
        ["error": .string(error.code.name), "reason": .string(error.reason)])
    }

    section("Delete leaves a tombstone; the revision history stays")
    let deleted = try people.delete(try people.get("fred23")!)
    show("delete fred23 ->", ["ok": true, "rev": .string(deleted.rev.description)])
    show("get fred23 ->", try people.get("fred23").map { .object($0.json) } ?? .null)
    for revision in try people.revisions(of: "fred23") {
      Console.out("   history: \(revision.rev)\(revision.isDeleted ? " (deleted)" : "")\n")
    }

    section("Swift Codable values in and out")
    let kiki = Person(name: "kiki", age: 9, pet: .init(species: "axolotl"))
    let stored = try people.put(kiki, id: "kiki9")
    let back = try people.get(Person.self, id: "kiki9")!
    Console.out(
      "   put Person(name: \"kiki\") as kiki9 at \(stored.rev); read back: \(back.name), \(back.age), \(back.pet?.species ?? "-")\n"
    )

    section("Revisions from a peer: a conflict, listed and resolved (CouchDB's model)")
    let first = try people.put(["_id": "note", "text": "buy milk"])
    try people.put(["_id": "note", "_rev": .string(first.rev.description), "text": "buy oat milk"])
    // Another replica edited the same first revision; replication brings its branch as it
    // is (new_edits: false), and the same winner is picked on both sides.
    try people.put(
      [
        "_id": "note", "text": "buy bread",
        "_revisions": ["start": 2, "ids": ["f00d", .string(first.rev.digest)]],
      ], newEdits: false)
    show("conflicted ids ->", .array(try people.conflictedDocumentIDs().map { .string($0) }))
    for leaf in try people.leaves(of: "note") {
      Console.out("   leaf \(leaf.rev!): \(JSONWriter.string(leaf["text"] ?? .null))\n")
    }
    let merged = try people.resolveConflicts(of: "note") { leaves in
      .merged([
        "text": .string(leaves.compactMap { $0["text"]?.stringValue }.joined(separator: ", "))
      ])
    }
    show(
      "resolved by merging ->",
      [
        "rev": .string(merged?.rev.description ?? ""),
        "conflicts": .int(Int64(try people.conflictCount())),
      ])
    let attached = try people.putAttachment(
      "list.txt", to: "note", rev: merged?.rev, contentType: "text/plain",
      data: Array("oat milk\nbread\n".utf8))
    show(
      "attachment list.txt ->",
      .object(try people.attachments(of: "note", rev: attached.rev)[0].json))

    section("The changes feed, from sequence \(summary.documents) on")
    for change in try people.changes(since: Int64(summary.documents)) {
      Console.out(
        "   seq \(change.seq): \(change.id) \(change.rev)\(change.isDeleted ? " deleted" : "")\n")
    }

    section("Query with Cloudant Query selectors (seed 000), with and without an index")
    try people.ensureIndexed(["name", "age", "pet.species"], name: "basic")
    Console.out("   ensureIndexed([\"name\", \"age\", \"pet.species\"], name: \"basic\")\n")
    let examples: [(String, String)] = [
      (#"{"selector": {"pet.species": "cat"}, "fields": ["name"]}"#, "cats"),
      (
        #"{"selector": {"age": {"$gt": 12, "$lt": 30}}, "sort": [{"age": "asc"}], "fields": ["name", "age"]}"#,
        "12 < age < 30, by age"
      ),
      (
        #"{"selector": {"$or": [{"pet.species": "dog"}, {"$and": [{"age": {"$gt": 30}}, {"name": "mike"}]}]}, "fields": ["name"]}"#,
        "dogs, or mikes over 30"
      ),
      (
        #"{"selector": {"name": "mike", "age": {"$gte": 30}}, "fields": ["name", "age"]}"#,
        "indexed: name and age"
      ),
      (
        #"{"selector": {"tags": {"$all": ["student", "reader"]}}, "fields": ["name", "tags"]}"#,
        "arrays: $all"
      ),
      (
        #"{"selector": {"comment": {"$regex": "(?i)doctor"}}, "sort": ["name"], "fields": ["name"], "limit": 3}"#,
        "$regex, sorted, limit 3"
      ),
    ]
    for (text, title) in examples {
      let query = try FindQuery(json: JSONParser.parse(text))
      let plan = try people.explain(query)
      let names = try people.find(query).map { JSONWriter.string(.object($0.body)) }
      Console.out("   \(title): \(text)\n")
      Console.out("     -> \(names.joined(separator: " "))\n")
      Console.out(
        "     plan: \(plan.indexes.isEmpty ? "collection scan" : "index " + plan.indexes.joined(separator: ", "))\n"
      )
    }

    section("Full-text search (a TEXT index, FTS4 query syntax, any language)")
    if database.isTextSearchEnabled {
      try people.ensureIndexed(
        ["name", "comment"], name: "comments", type: .text, settings: ["tokenize": "porter"])
      Console.out(
        "   ensureIndexed([\"name\", \"comment\"], name: \"comments\", type: .text, settings: [\"tokenize\": \"porter\"])\n"
      )
      for search in [
        "doctor books", "\"is a doctor\"", "doc*", "retire", "teach* OR pilot", "léa", "東京",
      ] {
        let query = try FindQuery(matching: .text(search), sort: [.relevance], fields: ["name"])
        let names = try people.find(query).compactMap { $0["name"]?.stringValue }
        Console.out(
          "   $search \(JSONWriter.string(.string(search))) -> \(names.joined(separator: ", "))\n")
      }
    } else {
      Console.out(
        "   this SQLite has no FTS4, so text search is off (isTextSearchEnabled is false)\n")
    }

    section(
      "Map/reduce views (seed 002): compound keys in CouchDB's collation, _sum by group level")
    let groceries = database.collection("groceries")
    try groceries.putAll(DemoData.groceries)
    let byStore = try groceries.view("byStoreItem", version: "1", reduce: .sum) { doc, emit in
      emit([doc["store"], doc["item"]], doc["price"] ?? nil)
    }
    Console.out(
      "   view(\"byStoreItem\", version: \"1\", reduce: .sum) { doc, emit in emit([doc[\"store\"], doc[\"item\"]], doc[\"price\"]) }\n"
    )
    let safeway = try byStore.query(
      ViewQuery(startKey: ["Safeway"], endKey: ["Safeway", [:]], reduce: false))
    Console.out("   startKey [\"Safeway\"], endKey [\"Safeway\", {}], reduce false:\n")
    for row in safeway.rows { Console.out("     \(row.key) -> \(row.value)\n") }
    Console.out("   groupLevel 1 (total per store):\n")
    for row in try byStore.query(ViewQuery(groupLevel: 1)).rows {
      Console.out("     \(row.key) -> \(row.value)\n")
    }
    let declared = try groceries.defineView(
      json: ["name": "items", "key": "item", "value": "store", "collation": "unicode"])
    let sorted = try declared.query().rows.map { $0.key.stringValue ?? "" }
    Console.out("   a declarative view (JSON, usable from the CLI), keys in Unicode order:\n")
    Console.out("     \(sorted.joined(separator: ", "))\n")

    section("Value indexes (seed 001): indexing functions, min/max queries, unique values")
    let indexes = people.valueIndexes
    try indexes.define("age", field: "age", type: .integer)
    try indexes.define("species", type: .string, version: "1") { doc in
      doc[path: "pet.species"].map { [$0] } ?? []
    }
    let thirties = try indexes.documents(
      matching: ["age": .between(30, 39)], sortedBy: "age", descending: true)
    Console.out(
      "   age between 30 and 39, oldest first: \(thirties.compactMap { $0["name"]?.stringValue }.joined(separator: ", "))\n"
    )
    Console.out(
      "   unique species: \(try indexes.uniqueValues(of: "species").compactMap(\.stringValue).joined(separator: ", "))\n"
    )

  }

  /// Live queries, which are async sequences: awaited, as an app awaits them.
  private func showLiveQueries(_ people: DocumentCollection, _ output: DemoOutput) async throws {
    func section(_ title: String) { output.section(title) }
    section("Live queries: results that update themselves (seed 002)")
    let seniors = try FindQuery(
      matching: Field("age") >= 60, sort: [.ascending("name")], fields: ["name"])
    func names(_ result: LiveResult<[Document]>?) -> String {
      (result?.value ?? []).compactMap { $0["name"]?.stringValue }.joined(separator: ", ")
    }
    var live = people.observe(seniors).makeAsyncIterator()
    Console.out("   observe(age >= 60) -> \(names(try await live.next()))\n")
    try await people.put(["_id": "ada", "name": "ada", "age": 72])
    Console.out("   put ada (72)        -> \(names(try await live.next()))\n")
    try await people.put(["_id": "tim", "name": "tim", "age": 7])
    try await people.upsert(["_id": "ada", "name": "ada", "age": 59])
    Console.out(
      "   put tim (7), ada turns 59 -> \(names(try await live.next())) (tim changed nothing)\n")

  }

  /// The export, and what to try next.
  private func showExport(_ people: DocumentCollection, _ path: String, _ output: DemoOutput)
    throws
  {
    func section(_ title: String) { output.section(title) }
    section("Export (NDJSON, first 3 lines)")
    var exported: [UInt8] = []
    try people.exportDocuments { exported.append(contentsOf: $0) }
    for line in String(decoding: exported, as: UTF8.self).split(separator: "\n").prefix(3) {
      Console.out("   \(line)\n")
    }
    Console.out("   … \(try people.count()) documents in all\n")

    Console.out(
      """

      Try it yourself:
         settee --db \(path) --collection people get mike34
         settee --db \(path) --collection people export
         settee --db \(path) --collection people changes --since 20
         settee --db \(path) --collection people find '{"selector": {"pet.species": "cat"}}'
         settee --db \(path) --collection people explain '{"selector": {"age": {"$gt": 40}}}'
         settee --db \(path) --collection people find '{"selector": {"$text": {"$search": "doctor OR pilot"}}, "fields": ["name"]}'
         settee --db \(path) --collection groceries view query items '{"startkey": "c", "limit": 3}'
         settee --db \(path) --collection groceries all-docs '{"limit": 3}'
         settee --db \(path) --collection people changes --feed continuous --since 40   # then put from another shell

      """)
  }

  private func demoPath() throws -> String {
    if let db {
      if FileManager.default.fileExists(atPath: db) {
        throw ValidationError("\(db) already exists; the demo creates a new database")
      }
      return db
    }
    let directory = FileManager.default.temporaryDirectory
      .appendingPathComponent("settee-demo-\(UUID().uuidString.prefix(8))")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    return directory.appendingPathComponent("demo.db").path
  }
}

/// The Swift type the demo stores with Codable.
private struct Person: Codable {
  struct Pet: Codable { var species: String }
  var name: String
  var age: Int
  var pet: Pet?
}

/// The demo's numbered sections.
private final class DemoOutput {
  private var step = 0

  func section(_ title: String) {
    step += 1
    Console.out("\n\(step). \(title)\n")
  }

  func show(_ label: String, _ value: JSON) {
    Console.out("   \(label) \(JSONWriter.string(value))\n")
  }
}
