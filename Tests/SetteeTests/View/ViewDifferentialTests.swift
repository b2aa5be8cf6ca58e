import Foundation
import Settee
import SetteeCore
import SetteeTestSupport
import Testing

/// A simple reference for views: every row emitted into an array, sorted, filtered and
/// grouped by comparing keys as JSON values (`ReferenceView`: docs/views.md's order, with
/// Foundation's ICU collation for strings, not the engine's binary keys), declarative
/// definitions mapped by `ReferenceView.rows`, and reduced in Swift, against the SQLite
/// path, over random documents, views and query options, with writes between queries.
/// The built-in reduces are restated too (`ReferenceView.reduce`, from CouchDB's
/// `couch_query_servers`, in one pass where the engine reduces in chunks and in SQL).
@Suite("Views: SQLite path equals the in-memory reference")
struct ViewDifferentialTests {
  struct Row {
    var key: JSON
    var id: String
    var value: JSON
  }

  /// A random view: a declarative definition, or a Swift map function that emits several
  /// rows per document and throws on some.
  struct Subject {
    var definition: JSON?
    var collation: ViewCollation
    var order: ReferenceView.Order { collation == .raw ? .raw : .unicode }
    var reduce: ViewReduce?
    var map: @Sendable (Document) throws -> [(key: JSON, value: JSON)]
  }

  struct MapFailure: Error {}

  static func subject(_ generator: inout RandomQueries) throws -> Subject {
    let collation: ViewCollation = generator.chance(70) ? .unicode : .raw
    if generator.chance(30) {
      let reduce: ViewReduce? = generator.pick([
        nil, .count, .stats,
        .custom { _, values, rereduce in
          rereduce
            ? .int(values.reduce(0) { $0 + ($1.int64Value ?? 0) }) : .int(Int64(values.count))
        },
      ])
      return Subject(definition: nil, collation: collation, reduce: reduce) { document in
        if document.id.hasSuffix("3") { throw MapFailure() }
        var rows: [(key: JSON, value: JSON)] = []
        for tag in document["tags"]?.arrayValue ?? [] {
          rows.append(([tag, document["a"] ?? nil], 1))
        }
        if let b = document["b"] { rows.append((b, .string(document.id))) }
        return rows
      }
    }
    var definition: JSONObject = ["name": "random"]
    definition["key"] = generator.pick(
      [
        "a", "b", ["a", "b"], ["pet.species", "pet.age"], "tags", ["tags", "a"],
      ] as [JSON])
    if definition["key"] == "tags" && generator.chance(70) { definition["each"] = true }
    if definition["key"] == ["tags", "a"] { definition["each"] = "tags" }
    let value: JSON = generator.pick([nil, "pet.age", "_doc", ["a", "b"]])
    if value != nil { definition["value"] = value }
    if generator.chance(30) { definition["filter"] = ["pet.age": ["$gt": 0]] }
    let reduce: JSON = generator.pick([nil, nil, "_count", "_sum", "_stats"])
    if reduce != nil { definition["reduce"] = reduce }
    if collation == .raw { definition["collation"] = "raw" }
    let parsed = try ViewDefinition(json: .object(definition))
    return Subject(
      definition: .object(definition), collation: collation, reduce: parsed.reduce, map: parsed.map)
  }

  static func query(_ generator: inout RandomQueries, keys: [JSON]) -> ViewQuery {
    var query = ViewQuery()
    func someKey() -> JSON {
      generator.chance(80) && !keys.isEmpty ? generator.pick(keys) : generator.value()
    }
    switch generator.random.next() % 5 {
    case 0: query.key = someKey()
    case 1: query.keys = (0..<Int(generator.random.next() % 4)).map { _ in someKey() }
    case 2:
      if generator.chance(70) { query.startKey = someKey() }
      if generator.chance(70) { query.endKey = someKey() }
      if generator.chance(20) { query.startKeyDocID = "d\(generator.random.next() % 60)" }
      if generator.chance(20) { query.endKeyDocID = "d\(generator.random.next() % 60)" }
      if generator.chance(30) { query.inclusiveEnd = false }
      if generator.chance(20) { query.prefixMatchLevel = Int(generator.random.next() % 3) }
    default: break
    }
    if generator.chance(40) { query.descending = true }
    if generator.chance(30) { query.skip = Int(generator.random.next() % 5) }
    if generator.chance(30) { query.limit = Int(generator.random.next() % 6) }
    if generator.chance(30) { query.reduce = false }
    if generator.chance(40) {
      if generator.chance(50) {
        query.group = true
      } else {
        query.groupLevel = Int(generator.random.next() % 3)
      }
    }
    if generator.chance(20) && query.reduce == false { query.includeDocs = true }
    if generator.chance(30) && query.keys == nil { query.includeOffset = true }
    return query
  }

  /// The reference: every row of the live documents, sorted by binary key, then id.
  static func rows(_ documents: [Document], _ subject: Subject) throws -> (
    rows: [Row], errors: Set<String>
  ) {
    var rows: [Row] = []
    var errors: Set<String> = []
    for document in documents where !document.id.hasPrefix("_design/") {
      let emitted: [(key: JSON, value: JSON)]
      if let definition = subject.definition?.objectValue {
        emitted = ReferenceView.rows(document.json, definition: definition)
      } else {
        guard let mapped = try? subject.map(document) else {
          errors.insert(document.id)
          continue
        }
        emitted = mapped
      }
      for pair in emitted {
        rows.append(Row(key: pair.key, id: document.id, value: pair.value))
      }
    }
    // Stable: rows of one document keep their emission order.
    let order = subject.order
    let sorted = rows.enumerated().sorted { left, right in
      let keys = ReferenceView.compare(left.element.key, right.element.key, order)
      if keys != 0 { return keys < 0 }
      if left.element.id != right.element.id {
        return left.element.id.utf8.lexicographicallyPrecedes(right.element.id.utf8)
      }
      return left.offset < right.offset
    }.map(\.element)
    return (sorted, errors)
  }

  static func compare(_ row: Row, _ key: JSON, _ id: String?, _ order: ReferenceView.Order)
    -> Int
  {
    let keys = ReferenceView.compare(row.key, key, order)
    if keys != 0 { return keys }
    guard let id, row.id != id else { return 0 }
    return row.id.utf8.lexicographicallyPrecedes(id.utf8) ? -1 : 1
  }

  /// The options docs/views.md lists as in conflict ("Options in conflict"), or nil.
  static func refusal(_ query: ViewQuery, hasReduce: Bool, _ order: ReferenceView.Order)
    -> String?
  {
    let reducing = query.reduce ?? hasReduce
    let grouping = query.group || query.groupLevel != nil
    let ranged = query.startKey != nil || query.endKey != nil
    let negative = [query.skip, query.limit ?? 0, query.groupLevel ?? 0, query.prefixMatchLevel]
    if negative.contains(where: { $0 < 0 }) { return "negative skip, limit or level" }
    if query.reduce == true && !hasReduce { return "reduce true without a reduce" }
    if reducing && query.includeDocs { return "include_docs with a reduce" }
    if !reducing && grouping { return "grouping without a reduce" }
    if query.keys != nil && (query.key != nil || ranged) { return "keys with key or a range" }
    if query.key != nil && ranged { return "key with a range" }
    if let keys = query.keys, keys.count > 1, reducing, !query.group { return "keys ungrouped" }
    if let start = query.startKey, let end = query.endKey {
      let side = ReferenceView.compare(start, end, order)
      if query.descending ? side < 0 : side > 0 { return "a range that matches nothing" }
    }
    return nil
  }

  static func reference(
    _ all: [Row], _ query: ViewQuery, _ subject: Subject, documents: [String: Document]
  ) throws -> [ViewRow] {
    let order = subject.order
    var segments: [[Row]] = []
    if let keys = query.keys {
      // CouchDB 3.x walks the list backwards for a descending query.
      for key in query.descending ? keys.reversed() : keys {
        let matching = all.filter { ReferenceView.compare($0.key, key, order) == 0 }
        segments.append(query.descending ? matching.reversed() : matching)
      }
    } else {
      var selected = all
      let start = query.key ?? query.startKey
      let end = query.key ?? query.endKey
      let inclusiveEnd = query.key != nil || query.inclusiveEnd
      if query.descending {
        if let start {
          let high = ReferenceView.prefixEnd(start, level: query.prefixMatchLevel, order)
          selected = selected.filter { compare($0, high, query.startKeyDocID, order) <= 0 }
        }
        if let end {
          selected = selected.filter {
            let side = compare($0, end, query.endKeyDocID, order)
            return inclusiveEnd ? side >= 0 : side > 0
          }
        }
        selected.reverse()
      } else {
        if let start {
          selected = selected.filter { compare($0, start, query.startKeyDocID, order) >= 0 }
        }
        if let end {
          let high = ReferenceView.prefixEnd(end, level: query.prefixMatchLevel, order)
          selected = selected.filter {
            let side = compare($0, high, query.endKeyDocID, order)
            return inclusiveEnd ? side <= 0 : side < 0
          }
        }
      }
      segments = [selected]
    }
    var output: [ViewRow] = []
    // limit 0 returns no rows without reducing anything (so without reduce errors).
    if query.limit == 0 { return [] }
    if query.reduce ?? (subject.reduce != nil), let reduce = subject.reduce {
      let level = query.effectiveGroupLevel
      var groups: [(key: JSON, rows: [Row])] = []
      for segment in segments {
        var lastKey: JSON? = nil
        for row in segment {
          var groupKey: JSON = .null
          if let level {
            if case .array(let elements) = row.key, elements.count > level {
              groupKey = .array(Array(elements.prefix(level)))
            } else {
              groupKey = row.key
            }
          }
          if lastKey.map({ ReferenceView.compare($0, groupKey, order) != 0 }) ?? true {
            groups.append((groupKey, []))
          }
          lastKey = groupKey
          groups[groups.count - 1].rows.append(row)
        }
      }
      // Only the groups returned are reduced (so the others' errors do not surface).
      return try groups.dropFirst(query.skip).prefix(query.limit ?? Int.max).map { group in
        let values = group.rows.map(\.value)
        let value: JSON
        switch reduce {
        case .custom(let function):
          value = try function(group.rows.map { [$0.key, .string($0.id)] }, values, false)
        default:
          do {
            value = try ReferenceView.reduce(reduce.builtinName ?? "", values)
          } catch is ReferenceView.RefusedReduce {
            throw SetteeError(.invalidQuery, "\(reduce.builtinName ?? "") refused \(values)")
          }
        }
        return ViewRow(key: group.key, value: value)
      }
    } else {
      for row in segments.joined() {
        var document = query.includeDocs ? documents[row.id] : nil
        // Linked documents: a value with an `_id` (and a `_rev` that must be current).
        if query.includeDocs, case .object(let value) = row.value,
          case .string(let linked)? = value["_id"]
        {
          let found = documents[linked]
          let current = value["_rev"].map { $0 == .string(found?.rev?.description ?? "") } ?? true
          document = found != nil && current ? found : Document(id: linked, isDeleted: true)
        }
        output.append(ViewRow(key: row.key, value: row.value, id: row.id, document: document))
      }
    }
    return Array(output.dropFirst(query.skip).prefix(query.limit ?? Int.max))
  }

  @Test(arguments: 1...40 as ClosedRange<UInt64>)
  func randomViewsAndQueriesAgree(seed: UInt64) throws {
    var generator = RandomQueries(seed: seed)
    let collection = try Database(inMemoryWith: .init()).collection("random")
    var documents: [String: JSONObject] = [:]
    for number in 0..<60 {
      var document = generator.document(number)
      // Odd seeds keep U+0000 out of the collection, so that declarative views map in SQL
      // (strings holding it send every view of the collection to the Swift path).
      if seed % 2 == 1 { document = Self.withoutNUL(document) }
      if generator.chance(40) {
        document["pet"] = ["age": generator.pick(RandomQueries.numbersForTests)]
      }
      documents["d\(number)"] = document
    }
    try collection.putAll(Array(documents.values))
    try collection.put(["_id": "_design/app", "a": "design documents emit nothing"])
    let subject = try Self.subject(&generator)
    let view =
      if let definition = subject.definition {
        try collection.defineView(json: definition)
      } else {
        try collection.view(
          "random", version: "1", collation: subject.collation, reduce: subject.reduce
        ) { document, emit in
          for pair in try subject.map(document) { emit(pair.key, pair.value) }
        }
      }
    for round in 0..<6 {
      let live = try collection.allDocuments(ViewQuery(includeDocs: true)).rows.compactMap(
        \.document)
      let byID = Dictionary(uniqueKeysWithValues: live.map { ($0.id, $0) })
      let (all, errors) = try Self.rows(live, subject)
      let keys = all.map(\.key)
      for _ in 0..<25 {
        let query = Self.query(&generator, keys: keys)
        let expected: Result<[ViewRow], SetteeError>
        do {
          if let refusal = Self.refusal(query, hasReduce: subject.reduce != nil, subject.order) {
            throw SetteeError(.invalidQuery, refusal)
          }
          expected = .success(try Self.reference(all, query, subject, documents: byID))
        } catch let error as SetteeError { expected = .failure(error) }
        let actual: Result<ViewResult, SetteeError>
        do { actual = .success(try view.query(query)) } catch let error as SetteeError {
          actual = .failure(error)
        }
        switch (expected, actual) {
        case (.success(let rows), .success(let result)):
          if result.isReduced {
            // A group's key is one of its rows' keys: equal ones (1 and 1.0) may differ in
            // spelling, so groups compare in the view's order.
            #expect(
              result.rows.count == rows.count
                && zip(result.rows, rows).allSatisfy {
                  ReferenceView.compare($0.key, $1.key, subject.order) == 0
                }, "seed \(seed): \(query)")
            #expect(result.rows.map(\.value) == rows.map(\.value), "seed \(seed): \(query)")
          } else {
            let first = zip(result.rows, rows).first { $0.0 != $0.1 }
            #expect(
              result.rows == rows,
              "seed \(seed) round \(round): \(query): \(result.rows.count) rows against \(rows.count), first differing \(String(describing: first))"
            )
          }
          #expect(result.totalRows == all.count)
          #expect(Set(result.errors.map(\.documentID)) == errors)
          if query.includeOffset, query.reduce == false || subject.reduce == nil {
            #expect(result.offset != nil)
          }
        case (.failure(let left), .failure(let right)):
          #expect(left.code == right.code, "seed \(seed): \(query): \(left) vs \(right)")
        default:
          Issue.record(
            "seed \(seed) round \(round): \(query): reference \(expected), SQLite \(actual)")
        }
      }
      // Writes between rounds: updates, deletes, re-creations, a design document.
      for _ in 0..<8 {
        let id = "d\(generator.random.next() % 70)"
        if let current = try collection.get(id), generator.chance(40) {
          try collection.delete(current)
        } else {
          var replacement = generator.document(Int(id.dropFirst())!)
          if seed % 2 == 1 { replacement = Self.withoutNUL(replacement) }
          if generator.chance(40) {
            replacement["pet"] = ["age": generator.pick(RandomQueries.numbersForTests)]
          }
          try collection.upsert(replacement)
        }
      }
    }
  }
}

extension ViewDifferentialTests {
  static func withoutNUL(_ object: JSONObject) -> JSONObject {
    func clean(_ value: JSON) -> JSON {
      switch value {
      case .string(let text): .string(text.replacingOccurrences(of: "\u{0}", with: "0"))
      case .array(let elements): .array(elements.map(clean))
      case .object(let members): .object(withoutNUL(members))
      default: value
      }
    }
    return JSONObject(object.map { ($0.key, clean($0.value)) })
  }
}

extension RandomQueries {
  static let numbersForTests: [JSON] = [0, 1, 2, -1, 7, .double(1.5), .double(-0.5)]
}
