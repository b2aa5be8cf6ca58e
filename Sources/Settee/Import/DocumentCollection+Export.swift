import Foundation
import GRDB
import SetteeCore

extension DocumentCollection {
  /// Writes every live document as NDJSON (one document a line, `_id` and `_rev` first,
  /// ordered by id) from one consistent snapshot, handing the text over in chunks.
  ///
  /// The stored bodies are copied as they are, after a check that each still parses (a
  /// backup that does not import back is worse than none). Importing the output into an
  /// empty collection recreates the same documents with the same revisions.
  ///
  /// - Parameter output: receives chunks of about 64 KiB.
  /// - Returns: the number of documents written.
  /// - Throws: ``SetteeError`` with code `corruption`, naming the document, when a stored
  ///   body or revision is damaged; the output then stops before that document. What
  ///   `output` throws is thrown as it was.
  @discardableResult
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func exportDocuments(_ output: ([UInt8]) throws -> Void) throws -> Int {
    let name = self.name
    return try CallerError.unmarking {
      try export(name) { chunk in try CallerError.marking { try output(chunk) } }
    }
  }

  private func export(_ name: String, _ output: ([UInt8]) throws -> Void) throws -> Int {
    try database.read { db in
      guard let cid = try DocumentReader.collectionID(db, name) else { return 0 }
      // A statement of its own: `output` may call the collection on this connection.
      let rows = try Row.fetchCursor(
        db.makeStatement(
          sql: "SELECT id, rev, body FROM documents WHERE cid = ? AND deleted = 0 ORDER BY id"),
        arguments: [cid])
      var chunk: [UInt8] = []
      chunk.reserveCapacity(80_000)
      var count = 0
      while let row = try rows.next() {
        let id: String = try row.value(0)
        let rev = try DocumentReader.storedRevision(try row.value(1), documentID: id)
        _ = try DocumentReader.parseBody(row, at: 2, documentID: id)
        chunk.append(contentsOf: #"{"_id":"#.utf8)
        JSONWriter.writeString(id, into: &chunk)
        chunk.append(contentsOf: #","_rev":""#.utf8)
        chunk.append(contentsOf: rev.description.utf8)
        chunk.append(UInt8(ascii: "\""))
        try row.withUnsafeData(atIndex: 2) { data in
          guard let data, data.count > 2 else { return chunk.append(UInt8(ascii: "}")) }
          chunk.append(UInt8(ascii: ","))
          chunk.append(contentsOf: data.dropFirst())  // the body without its "{"
        }
        chunk.append(UInt8(ascii: "\n"))
        count += 1
        if chunk.count >= 64 * 1024 {
          try output(chunk)
          chunk.removeAll(keepingCapacity: true)
        }
      }
      if !chunk.isEmpty { try output(chunk) }
      return count
    }
  }
}

// The async twins: the same calls without blocking the caller's thread.
extension DocumentCollection {
  /// Every live document as NDJSON chunks, without blocking the caller's thread.
  @discardableResult
  public func exportDocuments(_ output: @escaping @Sendable ([UInt8]) throws -> Void)
    async throws -> Int
  {
    try await database.withConnection(.reading) { try self.exportDocuments(output) }
  }
}
