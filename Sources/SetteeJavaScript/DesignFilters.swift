import Foundation
import Settee
import SetteeCore

extension DocumentCollection {
  /// The filter function `f` of the design document `_design/d` (`"d/f"`), as CouchDB
  /// runs it for `_changes?filter=d/f` and filtered replications: `function (doc, req)`
  /// returning whether a change passes, on JavaScriptCore. `require` may load any module of
  /// the design document (CouchDB's rule for filters). A design document compiles once per
  /// database and body: asking again gives the same compiled filter.
  ///
  /// - Throws: ``SetteeError`` with code `notFound` when the design document or its filter
  ///   is missing, `invalidArgument` when it does not compile or JavaScriptCore is not
  ///   installed (naming the package).
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func designFilter(
    _ path: String, timeLimit: Double = DesignFunctions.defaultTimeLimit
  ) throws -> DesignFilter {
    let (design, name) = try DesignFunctions.split(path)
    return try DesignFilter(
      try get("_design/" + design), in: self, design: design, name: name, timeLimit: timeLimit,
      log: database.configuration.javaScriptLog)
  }

  /// The filter function `f` of the design document `_design/d`, without blocking the
  /// caller's thread (see ``designFilter(_:timeLimit:)``).
  public func designFilter(
    _ path: String, timeLimit: Double = DesignFunctions.defaultTimeLimit
  ) async throws -> DesignFilter {
    let (design, name) = try DesignFunctions.split(path)
    return try DesignFilter(
      try await get("_design/" + design), in: self, design: design, name: name,
      timeLimit: timeLimit,
      log: database.configuration.javaScriptLog)
  }

  /// The view `v` of the design document `_design/d` (`"d/v"`) as a filter, CouchDB's
  /// `_changes?filter=_view&view=d/v`: a document passes when the view's map function
  /// emits a row for it (a deleted one is given as ``Change/filtered(_:)`` gives it).
  ///
  /// - Throws: as ``designFilter(_:timeLimit:)``, for the view's map function.
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func designFilter(
    view path: String, timeLimit: Double = DesignFunctions.defaultTimeLimit
  ) throws -> DesignFilter {
    let (design, name) = try DesignFunctions.split(path)
    return try DesignFilter(
      try get("_design/" + design), in: self, design: design, view: name, timeLimit: timeLimit,
      log: database.configuration.javaScriptLog)
  }

  /// The filter CouchDB's `filter` parameter names, for `_changes` and replications alike:
  /// `"_view"` with `view` (`"d/v"`, the view's map function as the filter), or `"d/f"`.
  ///
  /// - Throws: ``SetteeError`` with code `invalidArgument` for `"_view"` without `view`
  ///   (CouchDB's words); otherwise as ``designFilter(_:timeLimit:)``.
  package func designFilter(named name: String, view: String?, timeLimit: Double) async throws
    -> DesignFilter
  {
    guard name == "_view" else { return try await designFilter(name, timeLimit: timeLimit) }
    guard let view else {
      throw SetteeError(.invalidArgument, "`view` filter parameter is not provided.")
    }
    return try await designFilter(view: view, timeLimit: timeLimit)
  }

  /// The view `v` of the design document `_design/d` as a filter, without blocking the
  /// caller's thread (see ``designFilter(view:timeLimit:)``).
  public func designFilter(
    view path: String, timeLimit: Double = DesignFunctions.defaultTimeLimit
  ) async throws -> DesignFilter {
    let (design, name) = try DesignFunctions.split(path)
    return try DesignFilter(
      try await get("_design/" + design), in: self, design: design, view: name,
      timeLimit: timeLimit,
      log: database.configuration.javaScriptLog)
  }
}

/// CouchDB's `req` object as a filter function sees it (CouchDB's request object): the
/// query parameters, who asks, the database's security object, and the request's method,
/// path, headers and body when a server was asked.
public struct FilterRequest: Sendable {
  /// The database (collection) name, `req.info.db_name` and `req.userCtx.db`.
  public var database: String
  /// The query parameters (`req.query`), as JSON values: strings from a URL, anything a
  /// replication's `query_params` holds.
  public var query: JSONObject
  /// Who asks (`req.userCtx`).
  public var user: UserContext
  /// The database's `_security` object (`req.secObj`).
  public var security: JSONObject
  /// The HTTP method (`req.method`).
  public var method: String
  /// The path's segments (`req.path`).
  public var path: [String]
  /// The request's headers (`req.headers`).
  public var headers: JSONObject
  /// The request's body, if any (`req.body`, as JSON text; the string `"undefined"` when
  /// empty, as CouchDB gives it).
  public var body: JSONObject

  /// A request on `database` with `query`; the rest as a plain `GET` by an anonymous user.
  public init(
    database: String, query: JSONObject = [:], user: UserContext = UserContext(),
    security: JSONObject = [:], method: String = "GET", path: [String] = [],
    headers: JSONObject = [:], body: JSONObject = [:]
  ) {
    self.database = database
    self.query = query
    self.user = user
    self.security = security
    self.method = method
    self.path = path
    self.headers = headers
    self.body = body
  }

  /// The object a filter function is given.
  public var json: JSON {
    [
      "info": ["db_name": .string(database)],
      "id": .null,
      "method": .string(method),
      "path": .array(path.map(JSON.string)),
      "query": .object(query),
      "headers": .object(headers),
      "body": body.isEmpty ? "undefined" : .string(JSONWriter.string(.object(body))),
      "form": [:], "cookie": [:],
      "userCtx": .object(user.json(database: database)),
      "secObj": .object(security),
    ]
  }
}

extension Change {
  /// The document a filter function is given for this change: `document` (the revision's
  /// body; for a deletion its tombstone, with the body it was deleted with), or for a
  /// deletion given without it `{"_id", "_rev", "_deleted": true}`, as CouchDB gives it.
  public func filtered(_ document: JSON?) -> JSON {
    guard let document, !isDeleted || document["_deleted"] == true else {
      return ["_id": .string(id), "_rev": .string(rev.description), "_deleted": true]
    }
    return document
  }
}

/// A design document's compiled filter function (see
/// ``DocumentCollection/designFilter(_:timeLimit:)``).
public final class DesignFilter: Sendable {
  private let engine: JavaScriptEngine
  /// The design document's id, for what the function logs.
  private let design: String
  private let log: LogSink?

  /// The filter `name` of the design document, read from `collection`.
  convenience init(
    _ document: Document?, in collection: DocumentCollection, design: String, name: String,
    timeLimit: Double, log: LogSink?
  ) throws {
    guard let document else {
      throw SetteeError(.notFound, "no design document _design/\(design)")
    }
    guard case .string(let source)? = document["filters"]?[name] else {
      throw SetteeError(.notFound, "_design/\(design) has no filter \(JSON.string(name))")
    }
    try self.init(
      document, in: collection, source: source, as: "filter", name: name, timeLimit: timeLimit,
      log: log)
  }

  /// The view `name` of the design document, read from `collection`, as a filter.
  convenience init(
    _ document: Document?, in collection: DocumentCollection, design: String, view name: String,
    timeLimit: Double, log: LogSink?
  ) throws {
    guard let document else {
      throw SetteeError(.notFound, "no design document _design/\(design)")
    }
    guard case .string(let source)? = document["views"]?[name]?["map"] else {
      throw SetteeError(.notFound, "_design/\(design) has no view \(JSON.string(name))")
    }
    try self.init(
      document, in: collection, source: source, as: "viewFilter", name: "view " + name,
      timeLimit: timeLimit, log: log)
  }

  /// The function `source`, given to the environment as its `member` (`filter` or
  /// `viewFilter`): compiled once per database, design document body and function
  /// (``CompiledFunctions``).
  private init(
    _ document: Document, in collection: DocumentCollection, source: String, as member: String,
    name: String, timeLimit: Double, log: LogSink?
  ) throws {
    let ddoc = document.json
    self.design = document.id
    self.log = log
    let key = CompiledFunctions.key(
      collection, ddoc: ddoc, function: member + " " + name, timeLimit: timeLimit)
    engine = try CompiledFunctions.of(collection).value(key) {
      let engine = try JavaScriptEngine(timeLimit: timeLimit)
      try engine.evaluate(CouchJavaScript.environment)
      do {
        _ = try engine.call(
          "__settee_define",
          [
            "ddoc": .object(ddoc), member: .string(source),
            "maxEmits": .int(Int64(DesignFunctions.maxEmits)),
          ])
      } catch let error as SetteeError where error.code == .invalidArgument {
        throw SetteeError(.invalidArgument, "compilation_error: \(error.message)")
      }
      return engine
    }
  }

  /// Whether each document passes (the function's result, truthy or not), given CouchDB's
  /// `req` object. Give a deleted document as ``Change/filtered(_:)`` gives it.
  ///
  /// - Throws: ``SetteeError`` with code `invalidArgument` naming the function's exception,
  ///   `limitExceeded` past the time limit.
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func keeps(_ documents: [JSON], request: FilterRequest) throws -> [Bool] {
    guard !documents.isEmpty else { return [] }
    return try answers(
      engine.call("__settee_filter_batch", ["docs": .array(documents), "req": request.json]),
      count: documents.count)
  }

  /// Whether each document passes, without holding the caller's thread: the function runs
  /// on a thread of its own (see `keeps(_:request:)`).
  public func keeps(_ documents: [JSON], request: FilterRequest) async throws -> [Bool] {
    guard !documents.isEmpty else { return [] }
    return try answers(
      await engine.call(
        "__settee_filter_batch", ["docs": .array(documents), "req": request.json]),
      count: documents.count)
  }

  private func answers(_ result: JSON?, count: Int) throws -> [Bool] {
    deliverLog(result, design: design, to: log)
    if let error = result?["error"]?.stringValue {
      throw SetteeError(.invalidArgument, "filter function: \(error)")
    }
    guard let results = result?["results"]?.arrayValue, results.count == count else {
      throw SetteeError(.invalidArgument, "the filter function's answers came back incomplete")
    }
    return results.map { $0 == true }
  }
}
