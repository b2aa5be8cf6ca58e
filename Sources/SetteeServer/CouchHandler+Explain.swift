import Hummingbird
import Settee
import SetteeCore

extension CouchHandler {
  // MARK: - _explain

  /// CouchDB 3.5's `_explain`: the index CouchDB's planner chooses, the normalized
  /// selector, the options, every other index with why it was not chosen
  /// (`index_candidates`), which fields an index could serve (`selector_hints`), how the
  /// index is read (`mrargs`, `covering`); and Settee's own plan of the read that finds the
  /// candidates (its SQL, index and reasons) under `settee`.
  func explainCouchDB(_ db: DocumentCollection, _ query: FindQuery, _ body: JSONObject)
    async throws -> Response
  {
    let (plan, read) = try await db.couchDBExplanation(query)
    let selector = try query.mangoSelector()
    let definitions = try await db.indexes()
    func listing(_ index: MangoIndex) -> JSON {
      guard !index.isAllDocs,
        let definition = definitions.first(where: {
          $0.designDocumentID == index.designDocument && $0.name == index.name
        })
      else { return IndexDefinition.allDocsListing }
      return Self.listedWithPartitioned(definition)
    }
    let fields = query.fields?.map(\.components)
    let fieldNames = body["fields"] ?? []
    var sort = JSONObject()
    for field in query.sort {
      sort[Self.fieldName(field.path.components)] = field.descending ? "desc" : "asc"
    }
    let options: JSONObject = [
      "use_index": .array(query.useIndexParts.map { .string($0) }),
      "bookmark": .string(query.bookmark ?? "nil"),
      "limit": .int(Int64(query.returnsNothing ? 0 : query.limit)),
      "skip": .int(Int64(query.skip)), "sort": .object(sort), "fields": fieldNames,
      "partition": "", "r": body["r"] ?? 1, "conflicts": .bool(query.conflicts),
      "stale": false, "update": body["update"] ?? true, "stable": body["stable"] ?? false,
      "execution_stats": .bool(query.executionStats),
      "allow_fallback": .bool(query.allowFallback),
    ]
    let candidates = plan.candidates.map { candidate -> JSON in
      [
        "index": listing(candidate.index),
        "analysis": [
          "usable": .bool(candidate.usable),
          "reasons": [["name": .string(candidate.reason)]],
          "ranking": .int(Int64(candidate.ranking)),
          "covering": candidate.index.isAllDocs
            ? .null : .bool(MangoPlan.covers(candidate.index, fields)),
        ],
      ]
    }
    let named = Self.unique(selector.fieldNames.map(Self.fieldName))
    let indexable = Self.unique(MangoPlan.indexableFields(selector).map(Self.fieldName))
    var answer: JSONObject = [
      "dbname": .string(db.name), "index": plan.hasIndex ? listing(plan.index) : .null,
      "partitioned": false, "selector": selector.json, "opts": .object(options),
      "limit": options["limit"]!, "skip": .int(Int64(query.skip)), "fields": fieldNames,
      "index_candidates": .array(candidates),
      "selector_hints": [
        [
          "type": "json", "indexable_fields": .array(indexable.map { .string($0) }),
          "unindexable_fields": .array(
            named.filter { !indexable.contains($0) }.map { .string($0) }),
        ]
      ],
    ]
    if plan.hasIndex {
      let covering = MangoPlan.covers(plan.index, fields.map { $0 + selector.fieldNames })
      var (start, end) = Self.keys(plan)
      if plan.descending { (start, end) = (end, start) }
      answer["mrargs"] = [
        "include_docs": .bool(!covering), "view_type": "map", "reduce": false,
        "partition": nil, "start_key": start, "end_key": end,
        "direction": plan.descending ? "rev" : "fwd", "stable": body["stable"] ?? false,
        "update": body["update"] ?? true,
        "conflicts": query.conflicts ? true : "undefined",
      ]
      answer["covering"] = .bool(covering)
    }
    answer["settee"] = read.json
    return CouchResponse.json(.object(answer))
  }

  /// An index as `GET _index` lists it, `partitioned` after its type.
  static func listedWithPartitioned(_ definition: IndexDefinition) -> JSON {
    var listing = JSONObject()
    for member in definition.couchDBListing.objectValue ?? [:] {
      listing[member.key] = member.value
      if member.key == "type" { listing["partitioned"] = false }
    }
    return .object(listing)
  }

  /// A path as CouchDB writes a field name.
  static func fieldName(_ components: [String]) -> String {
    components.map { $0.replacingOccurrences(of: ".", with: "\\.") }.joined(separator: ".")
  }

  /// Names once each, sorted byte by byte (Erlang's `sets:to_list` of them).
  static func unique(_ names: [String]) -> [String] {
    Array(Set(names)).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
  }

  /// The keys the index is read from and to (`mrargs`' `start_key`/`end_key`):
  /// `_all_docs`' ids, or a JSON index's leading columns' bounds, `"<MAX>"` past the end.
  static func keys(_ plan: MangoPlan) -> (JSON, JSON) {
    func value(_ bound: MangoRange.Bound) -> JSON? {
      guard case .value(let value) = bound else { return nil }
      // `$beginsWith`'s end: CouchDB ends the prefix with bytes that are not UTF-8, which
      // its JSON encoder shows as one U+FFFD; Settee's is the last code point.
      if case .string(let text) = value, text.unicodeScalars.last == "\u{10FFFF}" {
        return .string(String(text.unicodeScalars.dropLast()) + "\u{FFFD}")
      }
      return value
    }
    if plan.index.isAllDocs {
      let range = plan.ranges.first ?? .unbounded
      return (value(range.low) ?? .null, value(range.high) ?? "<MAX>")
    }
    var start: [JSON] = []
    for range in plan.ranges {
      guard let low = value(range.low) else { break }
      start.append(low)
    }
    var end: [JSON] = []
    for range in plan.ranges {
      guard let high = value(range.high) else { break }
      end.append(high)
    }
    return (.array(start), .array(end + ["<MAX>"]))
  }
}
