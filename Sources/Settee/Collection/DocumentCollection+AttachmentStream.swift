import Foundation
import GRDB
import SetteeCore

/// An attachment's bytes as an async sequence of chunks (256 KiB each, the last shorter),
/// each read in a short read of its own: a consumer that takes its time, such as a slow
/// HTTP client, holds no transaction and no connection between chunks.
///
/// ```swift
/// if let stream = try await notes.attachmentStream("photo.jpg", of: "n1") {
///   print(stream.attachment.length)
///   for try await chunk in stream { output.write(chunk) }
/// }
/// ```
public struct AttachmentStream: AsyncSequence, Sendable {
  /// The attachment's metadata (a stub: no data).
  public let attachment: Attachment
  let database: Database
  let aid: Int64

  /// Yields the chunks in order.
  public struct AsyncIterator: AsyncIteratorProtocol {
    let stream: AttachmentStream
    var next = 0 as Int64
    var finished = false

    /// The next chunk, or `nil` after the last.
    ///
    /// - Throws: ``SetteeError`` with code `notFound` when the attachment was removed (and
    ///   no other revision holds its bytes) while it was being read.
    public mutating func next() async throws -> [UInt8]? {
      guard !finished else { return nil }
      let (stream, n) = (self.stream, self.next)
      let chunk: [UInt8]?? = try await stream.database.read { db -> [UInt8]?? in
        // The blob must still be the one the stream began with: blob ids are reused.
        guard
          try Bool.fetchOne(
            db.cachedStatement(
              sql: "SELECT EXISTS (SELECT 1 FROM attachment_blobs WHERE aid = ? AND digest = ?)"),
            arguments: [stream.aid, stream.attachment.digest]) == true
        else { return .none }
        let data = try Data.fetchOne(
          db.cachedStatement(sql: "SELECT data FROM attachment_chunks WHERE aid = ? AND n = ?"),
          arguments: [stream.aid, n])
        return .some(data.map { Array($0) })
      }
      guard let chunk else {
        finished = true
        throw SetteeError(
          .notFound,
          "attachment \(JSONWriter.string(.string(stream.attachment.name))) was removed while it was being read"
        )
      }
      guard let chunk else {
        finished = true
        return nil
      }
      self.next += 1
      return chunk
    }
  }

  /// An iterator from the first chunk.
  public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(stream: self) }
}

extension DocumentCollection {
  /// An attachment of the winning revision (or of the leaf `rev`) as a stream of chunks;
  /// `nil` when there is no such attachment. Unlike ``readAttachment(_:of:rev:_:)-5kqwq``, no
  /// read stays open while the caller uses the bytes.
  public func attachmentStream(_ name: String, of id: String, rev: RevisionID? = nil)
    async throws -> AttachmentStream?
  {
    let stored: StoredAttachment? = try await database.read(
      inCollection(nil) { db, cid in
        try DocumentCollection.stored(db, cid: cid, name, of: id, rev: rev)
      })
    guard let stored else { return nil }
    return AttachmentStream(attachment: stored.attachment, database: database, aid: stored.aid)
  }
}
