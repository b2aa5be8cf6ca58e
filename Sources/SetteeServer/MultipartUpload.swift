import Foundation
import Settee
import SetteeCore
import SetteeReplication

/// A `multipart/related` document PUT (CouchDB's replicator writes documents with
/// attachments so), read as it arrives: the document (the first part) in memory within
/// the request limit, the attachments' parts into one temporary file, then written a chunk
/// at a time by the engine. An attachment of any size passes through bounded memory, as
/// `PUT /{db}/{doc}/{name}` does; nothing of it outlives the request.
struct MultipartUpload {
  /// The document, its attachments marked `"follows": true` still so.
  let document: JSONObject
  /// Each following attachment's bytes, by name, read from ``file``.
  let sources: [String: AttachmentSource]
  /// Where the attachments' parts wait; closed by ``close()``.
  private let file: TemporaryFile?

  /// Reads `request`'s body with `boundary`; the document part may hold up to
  /// `maxDocumentBytes`.
  ///
  /// - Throws: ``CouchError`` `400 bad_request` for a body that is not CouchDB's
  ///   multipart form (or whose part lengths differ from the declared ones), `413` for a
  ///   document part over its limit, `413 attachment_too_large` for an attachment part
  ///   over `maxAttachmentBytes`.
  static func read(
    _ request: CouchRequest, boundary: String, maxDocumentBytes: Int, maxAttachmentBytes: Int
  ) async throws -> MultipartUpload {
    var reader = MultipartReader(boundary: boundary)
    var documentBytes: [UInt8] = []
    /// Each part after the document: its file name, where its data starts, its length.
    var parts: [(name: String?, offset: UInt64, length: Int)] = []
    var file: TemporaryFile?
    var pending: [UInt8] = []
    var written: UInt64 = 0
    var index = -1
    func flush() throws {
      guard !pending.isEmpty else { return }
      if file == nil { file = try TemporaryFile(for: "a multipart upload") }
      try file!.write(pending)
      written += UInt64(pending.count)
      pending.removeAll(keepingCapacity: true)
    }
    do {
      try await request.forEachStreamedChunk { chunk in
        try reader.feed(chunk) { event in
          switch event {
          case .part(let headers):
            index += 1
            if index > 0 {
              parts.append(
                (
                  Multipart.filename(headers["content-disposition"]),
                  written + UInt64(pending.count), 0
                ))
            }
          case .data(let bytes) where index == 0:
            documentBytes.append(contentsOf: bytes)
            if documentBytes.count > maxDocumentBytes { throw CouchRequest.tooLarge }
          case .data(let bytes):
            guard index > 0 else { return }
            parts[parts.count - 1].length += bytes.count
            if parts[parts.count - 1].length > maxAttachmentBytes {
              throw CouchHandler.attachmentTooLarge(parts[parts.count - 1].name)
            }
            pending.append(contentsOf: bytes)
            if pending.count >= 1 << 20 { try flush() }
          }
        }
      }
      try flush()
      guard reader.isComplete else {
        throw MultipartError(reason: "the body ends before its closing boundary")
      }
      guard index >= 0, case .object(let document)? = try? JSONParser.parse(documentBytes) else {
        throw MultipartError(reason: "the first part must be the document as a JSON object")
      }
      guard case .object(let attachments)? = document["_attachments"] else {
        file?.close()
        return MultipartUpload(document: document, sources: [:], file: nil)
      }
      let chosen = try Multipart.attachmentParts(
        attachments, partNames: [nil] + parts.map(\.name))
      var sources: [String: AttachmentSource] = [:]
      for (name, position) in chosen {
        let part = parts[position - 1]
        if case .object(let attachment)? = attachments[name] {
          try Multipart.checkLength(part.length, declaredBy: attachment, name: name)
        }
        sources[name] = source(file, part.offset, part.length)
      }
      return MultipartUpload(document: document, sources: sources, file: file)
    } catch let error as MultipartError {
      file?.close()
      throw CouchError(.badRequest, "bad_request", error.description)
    } catch {
      file?.close()
      throw error
    }
  }

  /// The `length` bytes at `offset` of `file`, a chunk at a time.
  private static func source(_ file: TemporaryFile?, _ offset: UInt64, _ length: Int)
    -> AttachmentSource
  {
    var position = offset
    var left = length
    return AttachmentSource {
      guard left > 0, let file else { return nil }
      guard let chunk = try file.read(at: position, upTo: min(left, 256 << 10)) else {
        throw SetteeError(.io, "the temporary file of a multipart upload was cut short")
      }
      position += UInt64(chunk.count)
      left -= chunk.count
      return chunk
    }
  }

  /// Frees the temporary file.
  func close() {
    file?.close()
  }
}
