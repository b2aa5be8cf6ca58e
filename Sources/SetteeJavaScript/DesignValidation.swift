import Foundation
import Settee
import SetteeCore

extension DocumentCollection {
  /// The `validate_doc_update` functions of every design document of the collection,
  /// compiled on JavaScriptCore, to run as CouchDB runs them on each write: in the order of
  /// their design documents' ids, each given `(newDoc, oldDoc, userCtx, secObj)`. Writes to
  /// design documents and local documents are not validated (CouchDB's rule).
  ///
  /// Opt-in: the collection's own writes do not run them; write through
  /// ``put(_:validatedBy:as:security:)`` or check with
  /// ``DesignValidation/check(_:in:newEdits:as:security:)``.
  ///
  /// ```swift
  /// let rules = try await notes.designValidation()
  /// try await notes.put(["_id": "n1", "text": "hi"], validatedBy: rules, as: UserContext(name: "ann"))
  /// ```
  ///
  /// - Throws: ``SetteeError`` with code `invalidArgument` when a function does not compile
  ///   (`compilation_error`) or JavaScriptCore is not installed (naming the package).
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func designValidation(timeLimit: Double = DesignFunctions.defaultTimeLimit) throws
    -> DesignValidation
  {
    try DesignValidation(
      designDocuments(), database: name, timeLimit: timeLimit,
      log: database.configuration.javaScriptLog)
  }

  /// The collection's `validate_doc_update` functions, without blocking the caller's
  /// thread (see ``designValidation(timeLimit:)``).
  public func designValidation(timeLimit: Double = DesignFunctions.defaultTimeLimit)
    async throws -> DesignValidation
  {
    try await designValidation(timeLimit: timeLimit, enforcedNatively: [:])
  }

  /// The collection's `validate_doc_update` functions but those whose rules the caller
  /// enforces in Swift: `enforcedNatively` maps a design document's id to the function
  /// text it is skipped for (the server's `_users/_design/_auth`), so that such a function
  /// runs neither twice nor without JavaScriptCore, and an edited one still runs.
  package func designValidation(timeLimit: Double, enforcedNatively: [String: String])
    async throws -> DesignValidation
  {
    let designs = try await designDocuments().filter { design in
      guard let text = enforcedNatively[design.id] else { return true }
      return design.json["validate_doc_update"]?.stringValue != text
    }
    return try DesignValidation(
      designs, database: name, timeLimit: timeLimit, log: database.configuration.javaScriptLog)
  }

  /// Writes `json` as `put(_:)` does once `rules` accept it: the revision it
  /// replaces is read, and every `validate_doc_update` runs with `user` and `security`.
  ///
  /// - Throws: ``ValidationRefusal`` when a function refuses or fails; what `put(_:)`
  ///   throws.
  @discardableResult
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func put(
    _ json: JSONObject, validatedBy rules: DesignValidation, as user: UserContext,
    security: JSONObject = [:]
  ) throws -> WriteResult {
    if let refusal = try rules.check([json], in: self, as: user, security: security)[0] {
      throw refusal
    }
    return try put(json)
  }

  /// Writes `json` once `rules` accept it, without blocking the caller's thread (see
  /// ``put(_:validatedBy:as:security:)``).
  @discardableResult
  public func put(
    _ json: JSONObject, validatedBy rules: DesignValidation, as user: UserContext,
    security: JSONObject = [:]
  ) async throws -> WriteResult {
    if let refusal = try await rules.check([json], in: self, as: user, security: security)[0] {
      throw refusal
    }
    return try await put(json)
  }
}

/// The compiled `validate_doc_update` functions of a collection's design documents (see
/// ``DocumentCollection/designValidation(timeLimit:)``). Each design document's function
/// has an engine of its own, so that one cannot see another's state.
public final class DesignValidation: Sendable {
  /// The design documents whose functions run, in the order they run.
  public let designDocuments: [String]
  /// Every design document's id and revision when these were compiled (`"id rev"`):
  /// compare with `DocumentCollection/designRevisions()` to know whether they still hold.
  public let designRevisions: [String]
  private let engines: [(id: String, engine: JavaScriptEngine)]
  /// The collection's name, given to the functions as `userCtx.db`.
  private let database: String

  /// How long one call of a function may run, in seconds.
  public let timeLimit: Double

  /// Whether no design document has a `validate_doc_update`: every write passes.
  public var isEmpty: Bool { engines.isEmpty }

  /// Whether a function was stopped at its memory limit: its engine is not used again,
  /// and ``DesignValidationCache`` compiles the functions afresh.
  public var isSpent: Bool { engines.contains { $0.engine.isSpent } }

  /// Where the functions' `log` messages go.
  private let log: LogSink?

  /// Whether writes to the document `id` are judged: all but design and local documents'
  /// (CouchDB validates neither, so a design document whose function does not compile can
  /// still be replaced).
  public static func judges(documentID id: String) -> Bool {
    !Document.isDesignID(id) && !id.hasPrefix(LocalDocument.idPrefix)
  }

  init(_ designs: [Document], database: String, timeLimit: Double, log: LogSink?) throws {
    self.database = database
    self.log = log
    self.timeLimit = timeLimit
    designRevisions = designs.map { "\($0.id) \($0.rev?.description ?? "")" }
    var engines: [(String, JavaScriptEngine)] = []
    for design in designs {
      let id = design.id
      let ddoc = design.json
      guard
        case .string(let source)? = ddoc["validate_doc_update"],
        (ddoc["language"]?.stringValue ?? "javascript") == "javascript"
      else { continue }
      let engine = try JavaScriptEngine(timeLimit: timeLimit)
      try engine.evaluate(CouchJavaScript.environment)
      do {
        _ = try engine.call(
          "__settee_define", ["ddoc": .object(ddoc), "validate": .string(source), "maxEmits": 0])
      } catch let error as SetteeError where error.code == .invalidArgument {
        throw SetteeError(
          .invalidArgument, "compilation_error: \(id)'s validate_doc_update: \(error.message)")
      }
      engines.append((id, engine))
    }
    self.engines = engines
    designDocuments = engines.map(\.0)
  }

  /// Runs every function on each write: `nil` for a write all accept, else the first
  /// refusal. Writes to design and local documents pass without running anything.
  ///
  /// - Throws: ``SetteeError`` with code `limitExceeded` when a function runs past its time
  ///   limit.
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func validate(_ writes: [ValidatedWrite], as user: UserContext, security: JSONObject)
    throws -> [ValidationRefusal?]
  {
    var refusals = [ValidationRefusal?](repeating: nil, count: writes.count)
    let (indexes, argument) = prepare(writes, user, security)
    guard let argument else { return refusals }
    for (id, engine) in engines {
      let answers = try engine.call("__settee_validate_batch", argument)
      record(answers, design: id, indexes, writes, into: &refusals)
    }
    return refusals
  }

  /// Runs every function on each write without holding the caller's thread (each engine
  /// runs on a thread of its own; see `validate(_:as:security:)`).
  public func validate(_ writes: [ValidatedWrite], as user: UserContext, security: JSONObject)
    async throws -> [ValidationRefusal?]
  {
    var refusals = [ValidationRefusal?](repeating: nil, count: writes.count)
    let (indexes, argument) = prepare(writes, user, security)
    guard let argument else { return refusals }
    for (id, engine) in engines {
      let answers = try await engine.call("__settee_validate_batch", argument)
      record(answers, design: id, indexes, writes, into: &refusals)
    }
    return refusals
  }

  /// The writes that are validated (by index) and the argument that carries them.
  private func prepare(_ writes: [ValidatedWrite], _ user: UserContext, _ security: JSONObject)
    -> ([Int], JSON?)
  {
    let indexes = writes.indices.filter { index in
      Self.judges(documentID: writes[index].newDocument["_id"]?.stringValue ?? "")
    }
    guard !engines.isEmpty, !indexes.isEmpty else { return (indexes, nil) }
    let db = user.json(database: database)
    let argument: JSON = [
      "writes": .array(
        indexes.map { index in
          [
            .object(Self.stubbed(writes[index].newDocument)),
            writes[index].oldDocument.map(JSON.object) ?? .null,
          ]
        }),
      "userCtx": .object(db), "secObj": .object(security),
    ]
    return (indexes, argument)
  }

  private func record(
    _ answers: JSON?, design: String, _ indexes: [Int], _ writes: [ValidatedWrite],
    into refusals: inout [ValidationRefusal?]
  ) {
    deliverLog(answers, design: design, to: log)
    let answers = answers?["results"]?.arrayValue ?? []
    for (position, index) in indexes.enumerated() where refusals[index] == nil {
      let answer = position < answers.count ? answers[position] : .null
      if answer == true { continue }
      let id = writes[index].newDocument["_id"]?.stringValue ?? ""
      func text(_ value: JSON?) -> String {
        guard let value else { return "" }
        return value.stringValue ?? String(decoding: JSONWriter.bytes(value), as: UTF8.self)
      }
      let refusal: ValidationRefusal
      if let reason = answer["forbidden"] {
        refusal = ValidationRefusal(
          kind: .forbidden, error: "forbidden", reason: text(reason), documentID: id,
          designDocument: design)
      } else if let reason = answer["unauthorized"] {
        refusal = ValidationRefusal(
          kind: .unauthorized, error: "unauthorized", reason: text(reason), documentID: id,
          designDocument: design)
      } else {
        refusal = ValidationRefusal(
          kind: .failed, error: answer["error"]?.stringValue ?? "unknown_error",
          reason: text(answer["reason"] ?? "the function gave no answer"), documentID: id,
          designDocument: design)
      }
      refusals[index] = refusal
    }
  }

  /// The document as a function sees it: attachments as stubs (their data is not given).
  static func stubbed(_ document: JSONObject) -> JSONObject {
    guard case .object(let attachments)? = document["_attachments"] else { return document }
    var document = document
    var stubs = JSONObject()
    for member in attachments {
      guard case .object(var stub) = member.value else {
        stubs[member.key] = member.value
        continue
      }
      if stub["length"] == nil, case .string(let data)? = stub["data"] {
        let length = Data(base64Encoded: data)?.count ?? 0
        stub["length"] = .int(Int64(length))
      }
      stub["data"] = nil
      stub["follows"] = nil
      stub["stub"] = true
      stubs[member.key] = .object(stub)
    }
    document["_attachments"] = .object(stubs)
    return document
  }

  /// Reads the revision each document replaces and validates the writes (see
  /// `validate(_:as:security:)`): for an interactive write (`newEdits`), the leaf
  /// its `_rev` names; for a replicated one, the newest revision of its `_revisions` that is
  /// a leaf of the collection. `nil` for a write all functions accept.
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func check(
    _ documents: [JSONObject], in collection: DocumentCollection, newEdits: Bool = true,
    as user: UserContext, security: JSONObject = [:]
  ) throws -> [ValidationRefusal?] {
    guard !isEmpty else { return documents.map { _ in nil } }
    let requests = Self.replaced(documents, newEdits: newEdits)
    let answers = try collection.openRevisions(requests.compactMap(\.request))
    return try validate(
      Self.writes(documents, requests, answers, newEdits: newEdits), as: user, security: security)
  }

  /// `check(_:in:newEdits:as:security:)` without blocking the caller's thread.
  public func check(
    _ documents: [JSONObject], in collection: DocumentCollection, newEdits: Bool = true,
    as user: UserContext, security: JSONObject = [:]
  ) async throws -> [ValidationRefusal?] {
    guard !isEmpty else { return documents.map { _ in nil } }
    let requests = Self.replaced(documents, newEdits: newEdits)
    let answers = try await collection.openRevisions(requests.compactMap(\.request))
    return try await validate(
      Self.writes(documents, requests, answers, newEdits: newEdits), as: user, security: security)
  }

  /// For each document, the read that finds the revision it replaces (none for a new
  /// document), and its ancestry as the document gives it.
  private static func replaced(_ documents: [JSONObject], newEdits: Bool)
    -> [(request: RevisionsRequest?, history: [RevisionID])]
  {
    documents.map { document in
      guard let id = document["_id"]?.stringValue, judges(documentID: id) else {
        return (nil, [])
      }
      let history = Self.history(document)
      let options = RevisionReadOptions(revs: true)
      if newEdits {
        guard let rev = history.first else { return (nil, []) }
        return (RevisionsRequest(id, [rev], options: options), history)
      }
      // Replicated: the ancestors given, one of which may be a leaf here.
      guard history.count > 1 else { return (nil, history) }
      return (RevisionsRequest(id, nil, options: options), history)
    }
  }

  /// The document's `_revisions` as revision ids, newest first, or its `_rev` alone.
  private static func history(_ document: JSONObject) -> [RevisionID] {
    if case .object(let revisions)? = document["_revisions"],
      let start = revisions["start"]?.intValue, let ids = revisions["ids"]?.arrayValue
    {
      return ids.enumerated().compactMap { offset, hash in
        hash.stringValue.flatMap { RevisionID("\(start - offset)-\($0)") }
      }
    }
    return document["_rev"]?.stringValue.flatMap(RevisionID.init).map { [$0] } ?? []
  }

  private static func writes(
    _ documents: [JSONObject], _ requests: [(request: RevisionsRequest?, history: [RevisionID])],
    _ answers: [[OpenRevision]], newEdits: Bool
  ) -> [ValidatedWrite] {
    var answers = answers.makeIterator()
    return zip(documents, requests).map { document, read in
      var document = document
      if newEdits, let rev = read.history.first, document["_revisions"] == nil {
        // CouchDB gives an edit's parent as its `_revisions`.
        document["_revisions"] = [
          "start": .int(Int64(rev.generation)), "ids": [.string(rev.digest)],
        ]
      }
      guard read.request != nil, let found = answers.next() else {
        return ValidatedWrite(document, replacing: nil)
      }
      var leaves: [String: JSONObject] = [:]
      for case .found(let leaf) in found {
        if let rev = leaf["_rev"]?.stringValue { leaves[rev] = leaf }
      }
      let ancestors = newEdits ? read.history.prefix(1) : read.history.dropFirst()
      let old = ancestors.lazy.compactMap { leaves[$0.description] }.first
      return ValidatedWrite(document, replacing: old)
    }
  }
}

/// Collections' compiled `validate_doc_update` functions, each kept while its design
/// documents stay as they were compiled from: what a server or a replicator asks before
/// each batch of writes (one read of the design documents' revisions, no compilation).
public final class DesignValidationCache: Sendable {
  private let compiled = Locked<[String: DesignValidation]>([:])

  /// An empty cache.
  public init() {}

  /// The functions of `collection`, compiled again when one of its design documents
  /// changed; `nil` when none has a `validate_doc_update`.
  ///
  /// - Throws: ``SetteeError`` with code `invalidArgument` when a function does not compile
  ///   (`compilation_error`) or JavaScriptCore is not installed.
  public func validation(
    for collection: DocumentCollection, timeLimit: Double = DesignFunctions.defaultTimeLimit
  ) async throws -> DesignValidation? {
    try await validation(for: collection, timeLimit: timeLimit, enforcedNatively: [:])
  }

  /// The functions of `collection` but those the caller enforces in Swift (see
  /// ``DocumentCollection/designValidation(timeLimit:enforcedNatively:)``); a collection
  /// is always asked with the same `enforcedNatively`.
  package func validation(
    for collection: DocumentCollection, timeLimit: Double, enforcedNatively: [String: String]
  ) async throws -> DesignValidation? {
    let key = "\(ObjectIdentifier(collection.database)) \(collection.name)"
    let revisions = try await collection.designRevisions()
    guard !revisions.isEmpty else {
      compiled.withLock { $0[key] = nil }
      return nil
    }
    if let cached = compiled.withLock({ $0[key] }), cached.designRevisions == revisions,
      cached.timeLimit == timeLimit, !cached.isSpent
    {
      return cached.isEmpty ? nil : cached
    }
    let fresh = try await collection.designValidation(
      timeLimit: timeLimit, enforcedNatively: enforcedNatively)
    compiled.withLock { $0[key] = fresh }
    return fresh.isEmpty ? nil : fresh
  }
}
