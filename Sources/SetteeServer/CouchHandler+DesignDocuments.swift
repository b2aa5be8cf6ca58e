import Foundation
import Hummingbird
import Settee
import SetteeCore
import SetteeJavaScript

/// Mango index design documents (`"language": "query"`), CouchDB's way of keeping JSON
/// indexes (and Cloudant's of keeping text indexes) as documents, so that they replicate: writing one (by any write endpoint, from a
/// client or a replicator) defines its indexes, deleting it drops them, and `_index`
/// writes and edits the design document as CouchDB does.
extension CouchHandler {
  /// Brings the collection's JSON indexes of the design documents among `ids` in line with
  /// their winning revisions.
  func syncDesignDocuments(_ db: DocumentCollection, _ ids: [String]) async throws {
    for id in Set(ids) where Document.isDesignID(id) {
      try await syncDesignDocument(db, id)
    }
  }

  /// Refuses a design document CouchDB refuses before writing it (`invalid_design_doc`,
  /// `compilation_error`; see ``DesignDocumentCheck``); other documents and deletions
  /// pass.
  func requireWellFormedDesign(_ document: JSONObject) throws {
    guard let id = document["_id"]?.stringValue, Document.isDesignID(id),
      document["_deleted"] != true
    else { return }
    do {
      try DesignDocumentCheck.check(document, timeLimit: configuration.javaScriptTimeLimit)
    } catch let refusal as DesignDocumentRefusal {
      throw CouchError(.badRequest, refusal.error, refusal.reason)
    }
  }

  private func syncDesignDocument(_ db: DocumentCollection, _ id: String) async throws {
    let document = try await db.get(id)
    try await syncViews(db, id, document)
    let existing = try await db.indexes().filter { $0.designDocumentID == id }
    var wanted: [IndexDefinition] = []
    if let document, document.json["language"] == "query" {
      // A view or index that does not read as one of Settee's is left as data, as CouchDB
      // leaves what it cannot use.
      for view in document.json["views"]?.objectValue ?? [:] {
        if let definition = Self.indexDefinition(designDocument: id, view: view.key, view.value) {
          wanted.append(definition)
        }
      }
      for index in document.json["indexes"]?.objectValue ?? [:] {
        if let definition = Self.textIndexDefinition(
          designDocument: id, index: index.key, index.value)
        {
          wanted.append(definition)
        }
      }
    }
    for index in existing where !wanted.contains(index) {
      try await db.deleteIndex(named: index.name)
    }
    for definition in wanted where !existing.contains(definition) {
      _ = try await db.ensureIndexed(definition)
    }
  }

  /// Settee's declarative views kept in a design document with `"language": "settee"`:
  /// each view (a ``ViewDefinition`` without its name) is the collection's view named
  /// `{d}/{v}`, so that views travel with their design document as indexes do.
  private func syncViews(_ db: DocumentCollection, _ id: String, _ document: Document?)
    async throws
  {
    let prefix = String(id.dropFirst("_design/".count)) + "/"
    var wanted: [ViewDefinition] = []
    if let document, document.json["language"] == "settee",
      case .object(let views)? = document.json["views"]
    {
      for view in views {
        guard case .object(var definition) = view.value else { continue }
        definition["name"] = .string(prefix + view.key)
        // A view that does not read as Settee's is left as data.
        if let parsed = try? ViewDefinition(json: .object(definition)) { wanted.append(parsed) }
      }
    }
    let existing = try await db.views().filter { $0.name.hasPrefix(prefix) }
    for view in existing where !wanted.contains(where: { $0.name == view.name }) {
      try await db.deleteView(named: view.name)
    }
    for definition in wanted { _ = try await db.defineView(definition) }
  }

  /// The index a Mango design document's view stands for: `options.def` as `_index`
  /// took it, or else the fields of `map.fields`.
  static func indexDefinition(designDocument: String, view name: String, _ view: JSON)
    -> IndexDefinition?
  {
    var index: JSONObject = [:]
    if case .object(let def)? = view["options"]?["def"], let fields = def["fields"] {
      index["fields"] = fields
      if let filter = def["partial_filter_selector"] { index["partial_filter_selector"] = filter }
    } else if case .object(let fields)? = view["map"]?["fields"] {
      index["fields"] = .array(fields.map { .object(JSONObject([($0.key, $0.value)])) })
    } else {
      return nil
    }
    if index["partial_filter_selector"] == nil,
      let filter = view["map"]?["partial_filter_selector"]
    {
      index["partial_filter_selector"] = filter
    }
    return try? IndexDefinition(
      json: [
        "index": .object(index), "ddoc": .string(designDocument), "name": .string(name),
        "type": "json",
      ])
  }

  /// A Mango design document's view for an index, as CouchDB's `_index` writes it: the
  /// map's fields with their directions and its partial filter as read, and `options.def`
  /// as the request gave it (`given`, the request's `index`), or else the field names
  /// (`{"fields": ["type", "n"]}`).
  static func designView(_ definition: IndexDefinition, given: JSON? = nil) -> JSON {
    let listed = definition.couchDBListing["def"] ?? [:]
    var fields = JSONObject()
    for field in listed["fields"]?.arrayValue ?? [] {
      for member in field.objectValue ?? [:] { fields[member.key] = member.value }
    }
    var map: JSONObject = ["fields": .object(fields)]
    map["partial_filter_selector"] = listed["partial_filter_selector"] ?? [:]
    var def: JSONObject = ["fields": .array(fields.map { .string($0.key) })]
    if let filter = listed["partial_filter_selector"] { def["partial_filter_selector"] = filter }
    let options: JSON = ["def": given?.objectValue.map(JSON.object) ?? .object(def)]
    return ["map": .object(map), "reduce": "_count", "options": options]
  }

  /// The text index a Mango design document's `indexes` member stands for, in Cloudant's
  /// shape (`{"index": {"fields": [{"name": "string"}, …]}, "analyzer": …}`) with Settee's
  /// tokenizer under `settings`. Cloudant's `"fields": "all_fields"` is not one.
  static func textIndexDefinition(designDocument: String, index name: String, _ index: JSON)
    -> IndexDefinition?
  {
    guard case .array(let listed)? = index["index"]?["fields"], !listed.isEmpty else {
      return nil
    }
    var fields: [JSON] = []
    for field in listed {
      switch field {
      case .string: fields.append(field)
      case .object(let named) where named.count == 1: fields.append(.string(named[0].key))
      default: return nil
      }
    }
    var definition: JSONObject = [
      "index": ["fields": .array(fields)], "ddoc": .string(designDocument),
      "name": .string(name), "type": "text",
    ]
    if let settings = index["settings"] { definition["settings"] = settings }
    return try? IndexDefinition(json: .object(definition))
  }

  /// A Mango design document's `indexes` entry for a text index, in Cloudant's shape.
  static func designTextIndex(_ definition: IndexDefinition) -> JSON {
    [
      "index": [
        "fields": .array(
          definition.fields.map { .object(JSONObject([($0.description, JSON.string("string"))])) }),
        "default_field": [:], "selector": [:],
      ],
      "analyzer": "standard",
      "settings": definition.couchDBListing["settings"] ?? [:],
    ]
  }

  /// Adds (`definition`) or removes (`removing`) an index in its design document (a view
  /// for a JSON index, an `indexes` entry for a text index), making or deleting the
  /// document as needed.
  func updateDesignDocument(
    _ db: DocumentCollection, _ id: String, adding definition: IndexDefinition? = nil,
    given: JSON? = nil,
    removing name: String? = nil
  ) async throws {
    // Another writer may change the document in between: try again on a conflict.
    for _ in 0..<5 {
      let current = try await db.get(id)
      var document = current?.json ?? ["_id": .string(id)]
      var views = document["views"]?.objectValue ?? [:]
      var indexes = document["indexes"]?.objectValue ?? [:]
      if let definition {
        if definition.kind == .text {
          indexes[definition.name] = Self.designTextIndex(definition)
        } else {
          views[definition.name] = Self.designView(definition, given: given)
        }
      }
      if let name {
        _ = views.removeValue(forKey: name)
        _ = indexes.removeValue(forKey: name)
      }
      do {
        if views.isEmpty && indexes.isEmpty, let current, let rev = current.rev {
          try await db.delete(id, rev: rev)
        } else if !views.isEmpty || !indexes.isEmpty {
          document["language"] = "query"
          document["views"] = views.isEmpty ? nil : .object(views)
          document["indexes"] = indexes.isEmpty ? nil : .object(indexes)
          // An index that exists already leaves its design document as it is (CouchDB
          // answers "exists" without a new revision).
          if let current, current.json == document { return }
          try await db.put(document)
        }
        return
      } catch let error as SetteeError where error.code == .conflict {
        continue
      }
    }
  }

  // MARK: - Design documents

  func designInfo(_ db: DocumentCollection, _ id: String, _ request: CouchRequest) async throws
    -> Response
  {
    try allow(request, "GET,HEAD")
    try await requireDatabase(db)
    guard let design = try await db.get(id) else {
      throw CouchError(.notFound, "not_found", "missing")
    }
    let name = String(id.dropFirst("_design/".count))
    let language = design.json["language"]?.stringValue ?? "javascript"
    // The signature names the definitions the views are built from, as CouchDB's does.
    var digest = MD5()
    let definition: JSON = [
      "language": .string(language), "options": design.json["options"] ?? .null,
      "views": design.json["views"] ?? .null,
    ]
    JSONWriter.bytes(definition).withUnsafeBytes { digest.update($0) }
    let signature = Hex.string(ofDigest: digest.finalize())
    // How far the views are built: the least of their sequences, and the changes after it.
    var indexed: Int64? = nil
    if language == "javascript", case .object(let views)? = design.json["views"] {
      for view in views where view.key != "lib" && view.value["map"]?.stringValue != nil {
        guard
          let built = try? await db.designView(
            name + "/" + view.key, timeLimit: configuration.javaScriptTimeLimit
          ).query(ViewQuery(limit: 0, stale: .ok))
        else { continue }
        indexed = min(indexed ?? built.updateSeq, built.updateSeq)
      }
    }
    let pending = try await db.changeCount(since: indexed ?? 0)
    // The collator the views' keys are made with (CouchDB lists ICU's version).
    var collator = (try? ViewCollation.unicode.version()) ?? ""
    if collator.hasPrefix("icu-") { collator.removeFirst(4) }
    while collator.hasSuffix(".0") { collator.removeLast(2) }
    return CouchResponse.json([
      "name": .string(name),
      "view_index": [
        "updates_pending": [
          "minimum": .int(Int64(pending)), "preferred": .int(Int64(pending)),
          "total": .int(Int64(pending)),
        ],
        "waiting_commit": false, "waiting_clients": 0, "updater_running": false,
        "update_seq": .int(indexed ?? 0),
        "sizes": ["active": 0, "external": 0, "file": 0], "signature": .string(signature),
        "purge_seq": 0, "language": .string(language), "compact_running": false,
        "collator_versions": collator.isEmpty ? [] : [.string(collator)],
      ],
    ])
  }
}
