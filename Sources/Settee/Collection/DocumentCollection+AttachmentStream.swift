import Foundation
import GRDB
import SetteeCore

/// An attachment's bytes as an async sequence of chunks (256 KiB each, the last shorter),
/// each read in a short read of its own: a consumer that takes its time, such as a slow
/// HTTP client, holds no transaction and no connection between chunks. An attachment kept
/// gzip-encoded (as CouchDB replicates its compressible types) is decoded on the way,
/// unless the stream was asked for the stored bytes.
///
/// ```swift
/// if let stream = try await notes.attachmentStream("photo.jpg", of: "n1") {
///   print(stream.attachment.length)
///   for try await chunk in stream { output.write(chunk) }
/// }
/// ```
public struct AttachmentStream: AsyncSequence, Sendable {
  /// The attachment's metadata (a stub: no data); its ``Attachment/encoding`` is that of
  /// the bytes the stream yields (`nil` when they are decoded).
  public let attachment: Attachment
  let database: Database
  let aid: Int64
  /// The digest the blob was stored under (blob ids are reused).
  let digest: String
  /// Whether the stored bytes are gzip that the stream decodes.
  let decodes: Bool
  /// The bytes the stream yields, when only some (``bytes(_:)``).
  var window: Range<Int64>? = nil

  /// Whether the stream yields the bytes as stored (not decoding them on the way): only
  /// such a stream can seek (``bytes(_:)``).
  public var yieldsStoredBytes: Bool { !decodes }

  /// The bytes `range` of those the stream yields (offsets from 0, clamped to its
  /// length), read from the stored chunk that holds the first of them: a seek, not a read
  /// of all that comes before (HTTP `Range` requests, a media player's seeks).
  ///
  /// - Throws: ``SetteeError`` with code `invalidArgument` for a stream that decodes
  ///   (``yieldsStoredBytes`` is false): decoded bytes cannot be sought.
  public func bytes(_ range: Range<Int64>) throws -> AttachmentStream {
    guard !decodes else {
      throw SetteeError(
        .invalidArgument,
        "attachment \(JSONWriter.string(.string(attachment.name))) is decoded as it is read: a range of it cannot be sought"
      )
    }
    var ranged = self
    let length = attachment.encodedLength ?? attachment.length
    let lower = Swift.min(Swift.max(0, range.lowerBound), length)
    ranged.window = lower..<Swift.max(lower, Swift.min(length, range.upperBound))
    return ranged
  }

  /// Yields the chunks in order.
  public struct AsyncIterator: AsyncIteratorProtocol {
    let stream: AttachmentStream
    var next = 0 as Int64
    var finished = false
    var decoder: GzipDecoder?
    /// Stored bytes not decoded yet: fed to the decoder a slice at a time
    /// (``GzipDecoder/decode(taking:)``), so that a chunk of well-compressed text never
    /// decodes into one huge buffer.
    var pending: ArraySlice<UInt8> = []

    /// Where the next stored chunk starts among the stored bytes.
    var position = 0 as Int64

    init(stream: AttachmentStream) {
      self.stream = stream
      if let window = stream.window {
        let chunk = Int64(AttachmentStore.chunkSize)
        next = window.lowerBound / chunk
        position = next * chunk
      }
    }

    /// The next chunk, or `nil` after the last.
    ///
    /// - Throws: ``SetteeError`` with code `notFound` when the attachment was removed (and
    ///   no other revision holds its bytes) while it was being read; `corruption` when
    ///   stored gzip does not decode.
    public mutating func next() async throws -> [UInt8]? {
      if let window = stream.window {
        // A window of stored bytes: the chunks that hold it, trimmed to it.
        guard position < window.upperBound, let chunk = try await nextStored() else {
          finished = true
          return nil
        }
        let start = position
        position += Int64(chunk.count)
        let from = Int(Swift.max(0, window.lowerBound - start))
        let to = Int(Swift.min(Int64(chunk.count), window.upperBound - start))
        return from < to ? Array(chunk[from..<to]) : []
      }
      guard stream.decodes else { return try await nextStored() }
      if decoder == nil {
        decoder = try gzip { try GzipDecoder(limit: Attachment.maxDecodedLength) }
      }
      while true {
        if pending.isEmpty {
          guard let chunk = try await nextStored() else {
            let decoder = decoder!
            _ = try gzip { try decoder.finish() }
            return nil
          }
          pending = chunk[...]
        }
        let decoder = decoder!
        let decoded = try gzip { try decoder.decode(taking: &pending) }
        if !decoded.isEmpty { return decoded }
      }
    }

    private func gzip<T>(_ body: () throws -> T) throws -> T {
      do { return try body() } catch let error as GzipError {
        throw error.corruption(attachment: stream.attachment.name, documentID: nil)
      }
    }

    /// The next stored chunk, or `nil` after the last.
    private mutating func nextStored() async throws -> [UInt8]? {
      guard !finished else { return nil }
      let (stream, n) = (self.stream, self.next)
      let chunk: [UInt8]?? = try await stream.database.read { db -> [UInt8]?? in
        // The blob must still be the one the stream began with: blob ids are reused.
        guard
          try Bool.fetchOne(
            db.cachedStatement(
              sql: "SELECT EXISTS (SELECT 1 FROM attachment_blobs WHERE aid = ? AND digest = ?)"),
            arguments: [stream.aid, stream.digest]) == true
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
  /// An attachment of the winning revision (or of revision `rev`, a leaf or a replaced
  /// revision until compaction) as a stream of chunks; `nil` when there is no such
  /// attachment. Unlike ``readAttachment(_:of:rev:_:)-5kqwq``, no
  /// read stays open while the caller uses the bytes.
  ///
  /// - Parameters:
  ///   - name: the attachment's name.
  ///   - id: the document's id.
  ///   - rev: a leaf revision; the winner when `nil`.
  ///   - decoding: decode an attachment kept gzip-encoded (the default); `false` gives the
  ///     stored bytes, for a client that accepts the encoding (the stream's
  ///     ``AttachmentStream/attachment`` then names it).
  public func attachmentStream(
    _ name: String, of id: String, rev: RevisionID? = nil, decoding: Bool = true
  ) async throws -> AttachmentStream? {
    let stored: StoredAttachment? = try await database.read(
      inCollection(nil) { db, cid in
        try DocumentCollection.stored(db, cid: cid, name, of: id, rev: rev)
      })
    guard let stored else { return nil }
    var attachment = stored.attachment
    let decodes = decoding && attachment.encoding != nil
    if decodes {
      attachment.encoding = nil
      attachment.encodedLength = nil
    }
    return AttachmentStream(
      attachment: attachment, database: database, aid: stored.aid, digest: stored.digest,
      decodes: decodes)
  }
}
