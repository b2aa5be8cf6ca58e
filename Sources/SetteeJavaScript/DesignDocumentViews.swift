import Foundation
import Settee
import SetteeCore

extension DocumentCollection {
  /// The view `v` of the design document `_design/d` (`"d/v"`), as CouchDB runs it: a
  /// JavaScript map function (and reduce) on JavaScriptCore, with CouchDB's environment
  /// (`emit`, `log`, `sum`, `isArray`, `toJSON`, `require` of modules under `views.lib`).
  /// A design document with `"language": "settee"` gives its declarative view instead.
  ///
  /// The view's rows persist in the file like any view's and catch up when it is queried.
  /// A changed map or reduce (or `views.lib`) rebuilds them; an unchanged one keeps them.
  /// A map function that throws for a document skips that document (CouchDB's rule),
  /// recorded as the view's error for it; one that runs past `timeLimit` seconds
  /// (CouchDB's `os_process_timeout`) fails the query.
  ///
  /// ```swift
  /// let byName = try db.collection("people").designView("people/by_name")
  /// let rows = try byName.query(ViewQuery(limit: 10)).rows
  /// ```
  ///
  /// - Throws: ``SetteeError`` with code `notFound` when the design document or its view
  ///   is missing, `invalidArgument` when a function does not compile, the reduce is a
  ///   built-in Settee lacks, or JavaScriptCore is not installed (naming the package).
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func designView(_ path: String, timeLimit: Double = DesignFunctions.defaultTimeLimit)
    throws -> View
  {
    let (design, name) = try DesignFunctions.split(path)
    let document = try get("_design/" + design)
    switch try DesignFunctions.resolve(
      document, in: self, design: design, name: name, timeLimit: timeLimit,
      log: database.configuration.javaScriptLog)
    {
    case .declarative(let qualified): return view(named: qualified)
    case .javaScript(let qualified, let version, let collation, let mapTexts, let reduce):
      return try view(
        qualified, version: version, collation: collation, reduce: reduce, mapTexts: mapTexts)
    }
  }

  /// The view `v` of the design document `_design/d`, without blocking the caller's
  /// thread (see ``designView(_:timeLimit:)``).
  public func designView(_ path: String, timeLimit: Double = DesignFunctions.defaultTimeLimit)
    async throws -> View
  {
    let (design, name) = try DesignFunctions.split(path)
    let document = try await get("_design/" + design)
    switch try DesignFunctions.resolve(
      document, in: self, design: design, name: name, timeLimit: timeLimit,
      log: database.configuration.javaScriptLog)
    {
    case .declarative(let qualified): return view(named: qualified)
    case .javaScript(let qualified, let version, let collation, let mapTexts, let reduce):
      return try await view(
        qualified, version: version, collation: collation, reduce: reduce, mapTexts: mapTexts)
    }
  }
}

/// A design document's compiled functions, shared by every query of one database's view of
/// the same design document body.
public final class DesignFunctions: Sendable, SpendableFunctions {
  /// How long one call of a function may run by default, in seconds (CouchDB's
  /// `os_process_timeout`, 5 s).
  public static let defaultTimeLimit = 5.0
  /// Whether JavaScriptCore can be loaded in this process (on Linux: whether
  /// `libjavascriptcoregtk-4.1-0` or another version of it is installed).
  public static let isAvailable: Bool = JavaScriptEngine.isAvailable

  /// The most rows a map function may emit for one document.
  public static let maxEmits = 100_000
  /// The most bytes a map function's rows for one document may print to (16 MiB: twice
  /// the largest document, emitted whole as a value).
  public static let maxEmittedBytes = 16 << 20

  /// Identifies the functions and the modules they may load: a view's rows are rebuilt
  /// when it changes.
  let version: String
  private let engine: JavaScriptEngine

  /// Whether its engine was stopped at its memory limit (``JavaScriptEngine/isSpent``).
  var isSpent: Bool { engine.isSpent }

  private init(version: String, engine: JavaScriptEngine) {
    self.version = version
    self.engine = engine
  }

  /// The functions compiled, kept in `collection`'s database's ``CompiledFunctions`` (by
  /// the design document's body and the functions' version), or when it is `nil` compiled
  /// and not kept (to check that they compile).
  static func compiled(
    ddoc: JSONObject, map: String, reduce: String?, library: JSON, timeLimit: Double,
    in collection: DocumentCollection?
  ) throws -> DesignFunctions {
    var digest = MD5()
    let identity: JSON = [
      "map": .string(map), "reduce": reduce.map(JSON.string) ?? .null, "lib": library,
    ]
    JSONWriter.bytes(identity).withUnsafeBytes { digest.update($0) }
    let version = Hex.string(ofDigest: digest.finalize(), prefix: "js-")
    guard let collection else {
      return try compile(ddoc, map, reduce, version: version, timeLimit: timeLimit)
    }
    let key = CompiledFunctions.key(
      collection, ddoc: ddoc, function: "view " + version, timeLimit: timeLimit)
    return try CompiledFunctions.of(collection).value(key) {
      try compile(ddoc, map, reduce, version: version, timeLimit: timeLimit)
    }
  }

  private static func compile(
    _ ddoc: JSONObject, _ map: String, _ reduce: String?, version: String, timeLimit: Double
  ) throws -> DesignFunctions {
    let engine = try JavaScriptEngine(timeLimit: timeLimit)
    try engine.evaluate(CouchJavaScript.environment)
    var definition: JSONObject = [
      "ddoc": .object(ddoc), "map": .string(map), "maxEmits": .int(Int64(maxEmits)),
      "maxBytes": .int(Int64(maxEmittedBytes)),
    ]
    if let reduce, !reduce.trimmingCharacters(in: .whitespacesAndNewlines).hasPrefix("_") {
      definition["reduce"] = .string(reduce)
    }
    do {
      _ = try engine.call("__settee_define", .object(definition))
    } catch let error as SetteeError where error.code == .invalidArgument {
      throw SetteeError(.invalidArgument, "compilation_error: \(error.message)")
    }
    return DesignFunctions(version: version, engine: engine)
  }

  /// What a design document's view is: a declarative view's name, or its name, version,
  /// key order (CouchDB's `options.collation`: `"raw"` orders keys by code point, anything
  /// else by ICU), compiled map and reduce.
  enum Resolved {
    case declarative(String)
    case javaScript(String, version: String, ViewCollation, ViewTextMapper, ViewReduce?)
  }

  /// The view `name` of the design document `design` (read as `document`), its functions'
  /// `log` messages going to `log`.
  static func resolve(
    _ document: Document?, in collection: DocumentCollection, design: String, name: String,
    timeLimit: Double, log: LogSink?
  ) throws -> Resolved {
    guard let document else {
      throw SetteeError(.notFound, "no design document _design/\(design)")
    }
    let ddoc = document.json
    let qualified = design + "/" + name
    if ddoc["language"]?.stringValue == "settee" { return .declarative(qualified) }
    let language = ddoc["language"]?.stringValue ?? "javascript"
    guard language == "javascript" else {
      throw SetteeError(
        .invalidArgument,
        "_design/\(design) is in \(JSON.string(language)), not JavaScript: its views are not run as functions"
      )
    }
    guard case .object(let definition)? = ddoc["views"]?[name],
      case .string(let map)? = definition["map"]
    else {
      throw SetteeError(.notFound, "_design/\(design) has no view \(JSON.string(name))")
    }
    let reduceSource = definition["reduce"]?.stringValue
    let functions = try compiled(
      ddoc: ddoc, map: map, reduce: reduceSource, library: ddoc["views"]?["lib"] ?? .null,
      timeLimit: timeLimit, in: collection)
    let id = "_design/" + design
    let mapTexts = functions.mapTexts(design: id, log: log)
    let collation: ViewCollation =
      ddoc["options"]?["collation"]?.stringValue == "raw" ? .raw : .unicode
    guard let reduceSource else {
      return .javaScript(qualified, version: functions.version, collation, mapTexts, nil)
    }
    let trimmed = reduceSource.trimmingCharacters(in: .whitespacesAndNewlines)
    if trimmed.hasPrefix("_") {
      guard let builtin = ViewReduce(builtin: trimmed) else {
        throw SetteeError(
          .invalidArgument,
          "_design/\(design)/_view/\(name): the built-in reduce \(trimmed) is not one Settee runs (_sum, _count, _stats, _approx_count_distinct)"
        )
      }
      return .javaScript(qualified, version: functions.version, collation, mapTexts, builtin)
    }
    return .javaScript(
      qualified, version: functions.version, collation, mapTexts,
      .custom { keys, values, rereduce in
        try functions.reduce(keys: keys, values: values, rereduce: rereduce, design: id, log: log)
      })
  }

  /// The map function over documents given as JSON text, a batch per call into
  /// JavaScriptCore (one call per document cost twice the mapping); what it logs goes to
  /// `log` as the design document `design`'s.
  func mapTexts(design: String, log: LogSink?) -> ViewTextMapper {
    { documents in
      var argument: [UInt8] = [UInt8(ascii: "[")]
      argument.reserveCapacity(documents.reduce(2) { $0 + $1.count + 1 })
      for (index, document) in documents.enumerated() {
        if index > 0 { argument.append(UInt8(ascii: ",")) }
        argument += document
      }
      argument.append(UInt8(ascii: "]"))
      let results =
        try self.engine.call("__settee_map_batch", text: argument, textResult: true)?.arrayValue
        ?? []
      guard results.count == documents.count else {
        throw SetteeError(.invalidArgument, "the map function's batch came back incomplete")
      }
      return results.map { result in
        deliverLog(result, design: design, to: log)
        return Result { try Self.rows(result) }
      }
    }
  }

  /// `"d/v"` (or `"_design/d/v"`) as its design document's name and the view's.
  static func split(_ path: String) throws -> (design: String, name: String) {
    var rest = Substring(path)
    if rest.hasPrefix("_design/") { rest = rest.dropFirst("_design/".count) }
    guard let slash = rest.firstIndex(of: "/"), slash != rest.startIndex,
      rest.index(after: slash) != rest.endIndex
    else {
      throw SetteeError(
        .invalidArgument, "\(JSON.string(path)) names no design view: expected \"design/view\"")
    }
    return (String(rest[..<slash]), String(rest[rest.index(after: slash)...]))
  }

  /// The rows of one document's map result (`{"rows": …}` or `{"error": …}`).
  ///
  /// - Throws: ``SetteeError`` with code `invalidDocument` naming the function's exception
  ///   (the document is skipped).
  static func rows(_ result: JSON) throws -> [(key: JSON, value: JSON)] {
    if let error = result["error"]?.stringValue {
      throw SetteeError(.invalidDocument, "map function: \(error)")
    }
    return (result["rows"]?.arrayValue ?? []).map { row in
      let pair = row.arrayValue ?? []
      return (pair.first ?? .null, pair.count > 1 ? pair[1] : .null)
    }
  }

  /// The reduce function's result (CouchDB's arguments: `keys` as `[key, id]` pairs, `null`
  /// on rereduce).
  func reduce(keys: [JSON], values: [JSON], rereduce: Bool, design: String, log: LogSink?)
    throws -> JSON
  {
    let call: JSON = [rereduce ? .null : .array(keys), .array(values), .bool(rereduce)]
    guard let result = try engine.call("__settee_reduce", call) else { return .null }
    deliverLog(result, design: design, to: log)
    if let error = result["error"]?.stringValue {
      throw SetteeError(.invalidArgument, "reduce function: \(error)")
    }
    return result["value"] ?? .null
  }
}

/// Where the messages of JavaScript's `log` go: ``Database/Configuration/javaScriptLog``.
typealias LogSink = @Sendable (_ designDocument: String, _ message: String) -> Void

/// Hands the messages an answer of the environment carries (`"log"`) to `log`.
func deliverLog(_ answer: JSON?, design: String, to log: LogSink?) {
  guard let log, let messages = answer?["log"]?.arrayValue else { return }
  for message in messages { log(design, message.stringValue ?? "") }
}
