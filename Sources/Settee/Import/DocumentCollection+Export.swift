import Foundation
import GRDB
import SetteeCore

extension DocumentCollection {
  /// Writes every live document as NDJSON (one document a line, `_id` and `_rev` first,
  /// ordered by id) from one consistent snapshot, handing the text over in chunks.
  ///
  /// The stored bodies are copied as they are, without parsing, so export runs at the
  /// speed of reading the file. Importing the output into an empty collection recreates
  /// the same documents with the same revisions.
  ///
  /// - Parameter output: receives chunks of about 64 KiB.
  /// - Returns: the number of documents written.
  @discardableResult
  public func exportDocuments(_ output: ([UInt8]) throws -> Void) throws -> Int {
    let name = self.name
    return try database.read { db in
      guard let cid = try DocumentReader.collectionID(db, name) else { return 0 }
      let rows = try Row.fetchCursor(
        db.cachedStatement(
          sql: "SELECT id, rev, body FROM documents WHERE cid = ? AND deleted = 0 ORDER BY id"),
        arguments: [cid])
      var chunk: [UInt8] = []
      chunk.reserveCapacity(80_000)
      var count = 0
      while let row = try rows.next() {
        chunk.append(contentsOf: #"{"_id":"#.utf8)
        JSONWriter.writeString(row[0], into: &chunk)
        chunk.append(contentsOf: #","_rev":""#.utf8)
        chunk.append(contentsOf: (row[1] as String).utf8)
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
