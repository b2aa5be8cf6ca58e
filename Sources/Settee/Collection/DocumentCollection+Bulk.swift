import GRDB
import SetteeCore

extension DocumentCollection {
  /// Writes each document on its own, as CouchDB's `_bulk_docs` does: in one transaction,
  /// but a document that is refused (a conflict, a bad `_id`, a missing attachment stub) is
  /// reported in its place and the others are written. With `newEdits: false` each carries
  /// its revision and ancestry, as a peer sends them (``putAll(_:newEdits:)-6e4pp``).
  ///
  /// ```swift
  /// for outcome in try people.putEach([["_id": "a"], ["_id": "b", "_rev": "1-x"]]) {
  ///   switch outcome {
  ///   case .success(let written): print(written.id, written.rev)
  ///   case .failure(let error): print(error.code.name, error.message)
  ///   }
  /// }
  /// ```
  ///
  /// - Returns: one outcome per document, in order.
  /// - Throws: ``SetteeError`` only for what stops the whole batch (codes `storage`, `io`,
  ///   `busy`, `corruption`, `readOnly`); nothing is written then.
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func putEach(_ documents: [JSONObject], newEdits: Bool = true) throws
    -> [Result<WriteResult, SetteeError>]
  {
    try database.write(putEachOperation(documents.map(BulkDocument.object), newEdits: newEdits))
  }

  /// Writes each document on its own (``putEach(_:newEdits:)-6h9fk``), without blocking
  /// the caller's thread.
  public func putEach(_ documents: [JSONObject], newEdits: Bool = true) async throws
    -> [Result<WriteResult, SetteeError>]
  {
    try await database.write(
      putEachOperation(documents.map(BulkDocument.object), newEdits: newEdits))
  }

  /// ``putEach(_:newEdits:)-6h9fk`` of documents prepared from their JSON text (see
  /// ``BulkDocument/init(text:limits:)``), as the server receives them.
  ///
  /// - Parameter refusingWhole: codes that refuse the whole batch rather than the
  ///   document: the first such refusal (in the documents' order) is thrown and nothing
  ///   is written (CouchDB refuses a batch with a malformed document, or a missing stub,
  ///   and writes none of it).
  package func putEach(
    prepared documents: [BulkDocument], newEdits: Bool = true,
    refusingWhole: Set<SetteeError.Code> = []
  ) async throws -> [Result<WriteResult, SetteeError>] {
    try await database.write(
      putEachOperation(documents, newEdits: newEdits, refusingWhole: refusingWhole))
  }
  private func putEachOperation(
    _ documents: [BulkDocument], newEdits: Bool, refusingWhole: Set<SetteeError.Code> = []
  ) -> @Sendable (SQLConnection) throws -> [Result<WriteResult, SetteeError>] {
    let (name, database) = (self.name, self.database)
    let limits = database.configuration.limits
    return { db in
      var writer = try DocumentWriter(db: db, collection: name, in: database)
      func write(_ document: BulkDocument) throws -> WriteResult {
        let json: JSONObject
        switch document {
        case .object(let object): json = object
        case .text(let text):
          return try write(try BulkDocument(text: text, limits: limits))
        case .encoded(let encoded, let text):
          // Written from its text when no index needs its values; parsed otherwise.
          if !writer.needsBodies {
            if !newEdits {
              if let result = try writer.graft(encoded) { return result }
            } else if encoded.history == nil {
              return try writer.write(encoded, mode: .edit)
            }
          }
          json = try BulkDocument.object(text, maxDepth: limits.maxNestingDepth)
        }
        if newEdits {
          let document = try Document(validating: .object(json), limits: limits)
          return try writer.write(document, mode: .edit, validated: true)
        }
        let (document, history) = try Document.replicated(
          validating: .object(json), limits: limits)
        return try writer.graft(document, history: history, validated: true)
      }
      func refusable(_ error: SetteeError) -> Bool {
        ![.storage, .io, .busy, .corruption, .readOnly].contains(error.code)
      }
      // Most batches are written whole: one savepoint for all of them. Only a batch with a
      // refused document is written again with a savepoint per document (a savepoint and
      // a copy of the writer each were a fifth of a replication's writes).
      let before = writer
      var written: [WriteResult] = []
      written.reserveCapacity(documents.count)
      do {
        try db.inSavepoint {
          for json in documents { written.append(try write(json)) }
          return .commit
        }
        try writer.finish()
        return written.map { .success($0) }
      } catch let error as SetteeError where refusable(error) {
        if refusingWhole.contains(error.code) { throw error }
        writer = before
      }
      var outcomes: [Result<WriteResult, SetteeError>] = []
      outcomes.reserveCapacity(documents.count)
      for json in documents {
        do {
          // The writer is a value: a copy taken before the document and the savepoint
          // together undo whatever a refused document changed.
          let saved = writer
          var result: WriteResult?
          do {
            try db.inSavepoint {
              result = try write(json)
              return .commit
            }
          } catch {
            writer = saved
            throw error
          }
          outcomes.append(.success(result!))
        } catch let error as SetteeError where refusable(error) {
          // Past a refused document (a conflict), a whole-batch refusal still undoes all.
          if refusingWhole.contains(error.code) { throw error }
          outcomes.append(.failure(error))
        }
      }
      try writer.finish()
      return outcomes
    }
  }
}

/// One document of a bulk write, prepared from its JSON text: read straight into its
/// stored form when the text allows (`EncodedDocument`, kept with the text for a
/// collection whose indexes need the values), parsed otherwise.
package enum BulkDocument: Sendable {
  case object(JSONObject)
  case encoded(EncodedDocument, text: [UInt8])
  /// Text the engine printed (an answer of `openRevisionTexts`), read only when written.
  case text([UInt8])

  /// Reads one document's text; a text that is not a JSON object is refused here, so a
  /// request can be checked whole before anything is written.
  ///
  /// - Throws: ``SetteeError`` with code `invalidJSON`, `nestingTooDeep` or
  ///   `invalidDocument`.
  package init(text: [UInt8], limits: DocumentLimits) throws {
    if let encoded = text.withUnsafeBufferPointer({ EncodedDocument(text: $0, limits: limits) }) {
      self = .encoded(encoded, text: text)
    } else {
      // Parsed as deep as the parser goes, or as `limits` allow if that is deeper (up to
      // 1,000): a document deeper than `limits` allow but within the parser's depth is
      // the write's to refuse, for that document alone.
      self = .object(
        try Self.object(
          text, maxDepth: Swift.max(JSONParser.defaultMaxDepth, limits.maxNestingDepth)))
    }
  }

  /// The text parsed, which must be one JSON object.
  static func object(_ text: [UInt8], maxDepth: Int = JSONParser.defaultMaxDepth) throws
    -> JSONObject
  {
    guard case .object(let object) = try JSONParser.parse(text, maxDepth: maxDepth) else {
      throw SetteeError(.invalidDocument, "Document must be a JSON object")
    }
    return object
  }

  /// The document as a JSON object (its text parsed); `nil` for text that is not one.
  package var object: JSONObject? {
    switch self {
    case .object(let object): object
    case .encoded(_, let text), .text(let text): try? Self.object(text)
    }
  }

  /// Whether the document names the revision it is (`_rev` or `_revisions`): what a
  /// `new_edits: false` write stores.
  package var namesItsRevision: Bool {
    switch self {
    case .object(let object): return object["_rev"] != nil || object["_revisions"] != nil
    case .encoded(let encoded, _): return encoded.rev != nil || encoded.history != nil
    case .text(let text):
      guard let object = try? Self.object(text) else { return false }
      return object["_rev"] != nil || object["_revisions"] != nil
    }
  }

  /// The document's `_id` and `_rev` as written (for answers about it).
  package var idAndRev: (id: JSON?, rev: JSON?) {
    switch self {
    case .object(let object): return (object["_id"], object["_rev"])
    case .encoded(let encoded, _):
      return (encoded.id.map(JSON.string), encoded.rev.map { .string($0.description) })
    case .text(let text):
      guard let object = try? Self.object(text) else { return (nil, nil) }
      return (object["_id"], object["_rev"])
    }
  }
}
