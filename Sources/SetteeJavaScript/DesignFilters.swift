import Foundation
import Settee
import SetteeCore

extension DocumentCollection {
  /// The filter function `f` of the design document `_design/d` (`"d/f"`), as CouchDB
  /// runs it for `_changes?filter=d/f` and filtered replications: `function (doc, req)`
  /// returning whether a change passes, on JavaScriptCore. `require` may load any module of
  /// the design document (CouchDB's rule for filters).
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
      try get("_design/" + design), design: design, name: name, timeLimit: timeLimit)
  }

  /// The filter function `f` of the design document `_design/d`, without blocking the
  /// caller's thread (see ``designFilter(_:timeLimit:)``).
  public func designFilter(
    _ path: String, timeLimit: Double = DesignFunctions.defaultTimeLimit
  ) async throws -> DesignFilter {
    let (design, name) = try DesignFunctions.split(path)
    return try DesignFilter(
      try await get("_design/" + design), design: design, name: name, timeLimit: timeLimit)
  }
}

/// A design document's compiled filter function (see
/// ``DocumentCollection/designFilter(_:timeLimit:)``).
public final class DesignFilter: Sendable {
  private let engine: JavaScriptEngine

  init(_ document: Document?, design: String, name: String, timeLimit: Double) throws {
    guard let document else {
      throw SetteeError(.notFound, "no design document _design/\(design)")
    }
    let ddoc = document.json
    guard case .string(let source)? = ddoc["filters"]?[name] else {
      throw SetteeError(.notFound, "_design/\(design) has no filter \(JSON.string(name))")
    }
    engine = try JavaScriptEngine(timeLimit: timeLimit)
    try engine.evaluate(CouchJavaScript.environment)
    do {
      _ = try engine.call(
        "__settee_define",
        ["ddoc": .object(ddoc), "filter": .string(source), "maxEmits": 0])
    } catch let error as SetteeError where error.code == .invalidArgument {
      throw SetteeError(.invalidArgument, "compilation_error: \(error.message)")
    }
  }

  /// Whether each document passes (the function's result, truthy or not), given CouchDB's
  /// `req` object (`query`, `userCtx`, `info`, …). A deleted document is passed as
  /// `{"_id", "_rev", "_deleted": true}`, as CouchDB passes it.
  ///
  /// - Throws: ``SetteeError`` with code `invalidArgument` naming the function's exception,
  ///   `limitExceeded` past the time limit.
  public func keeps(_ documents: [JSON], request: JSON) throws -> [Bool] {
    guard !documents.isEmpty else { return [] }
    let result = try engine.call(
      "__settee_filter_batch", ["docs": .array(documents), "req": request])
    if let error = result?["error"]?.stringValue {
      throw SetteeError(.invalidArgument, "filter function: \(error)")
    }
    guard let results = result?["results"]?.arrayValue, results.count == documents.count else {
      throw SetteeError(.invalidArgument, "the filter function's answers came back incomplete")
    }
    return results.map { $0 == true }
  }
}
