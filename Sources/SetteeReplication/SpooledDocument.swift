import Foundation
import Settee
import SetteeCore

/// A revision passed from peer to peer with its attachments' data in a temporary file
/// rather than in memory: a document whose attachment data alone is more than a write
/// request carries (``ReplicationWorker/writeBytes``). CouchDB's replicator passes such a
/// document on by itself, its attachments streamed; so does Settee's, so that a replica
/// with a gigabyte attachment replicates in the memory of a chunk.
struct SpooledDocument: Sendable {
  /// The document: each attachment whose bytes are in ``file`` marked `"follows": true`
  /// (with `length`, and `encoding` and `encoded_length` for bytes kept gzip-encoded), the
  /// others stubs.
  var document: JSONObject
  /// Where each following attachment's bytes are in ``file``, by name.
  var parts: [String: Part]
  /// Where the bytes are; `nil` when no attachment follows.
  let file: TemporaryFile?

  struct Part: Sendable {
    var offset: UInt64
    var length: Int
  }

  var id: String { document["_id"]?.stringValue ?? "" }

  /// The bytes of the attachment `name`, a chunk at a time.
  func source(_ name: String) -> AttachmentSource? {
    guard let part = parts[name], let file else { return nil }
    var (position, left) = (part.offset, part.length)
    return AttachmentSource {
      guard left > 0 else { return nil }
      guard let chunk = try file.read(at: position, upTo: min(left, 256 << 10)) else {
        throw SetteeError(.io, "the temporary file of a replicated attachment was cut short")
      }
      position += UInt64(chunk.count)
      left -= chunk.count
      return chunk
    }
  }

  /// The following attachments in the document's order, with their parts.
  var following: [(name: String, attachment: JSONObject, part: Part)] {
    guard case .object(let attachments)? = document["_attachments"] else { return [] }
    return attachments.compactMap { member in
      guard let part = parts[member.key], case .object(let attachment) = member.value else {
        return nil
      }
      return (member.key, attachment, part)
    }
  }

  /// Frees the file.
  func close() { file?.close() }
}

/// Writes attachments' bytes into a spool's file as they arrive, one after another.
final class SpoolWriter: @unchecked Sendable {
  let file: TemporaryFile
  private var pending: [UInt8] = []
  private var written: UInt64 = 0
  private let lock = NSLock()

  init() throws {
    file = try TemporaryFile(for: "a replicated attachment")
  }

  /// Where the next byte goes.
  var offset: UInt64 { lock.withLock { written + UInt64(pending.count) } }

  func append(_ bytes: some Collection<UInt8>) throws {
    try lock.withLock {
      pending.append(contentsOf: bytes)
      if pending.count >= 1 << 20 { try flushLocked() }
    }
  }

  /// The spooled document `fill` makes by appending its attachments' bytes (it returns
  /// the document, each attachment that follows marked so, and where their bytes are);
  /// the file is closed when `fill` fails.
  func spool(
    _ fill: (SpoolWriter) async throws -> (JSONObject, [String: SpooledDocument.Part])
  ) async throws -> SpooledDocument {
    do {
      let (document, parts) = try await fill(self)
      try flush()
      return SpooledDocument(document: document, parts: parts, file: file)
    } catch {
      file.close()
      throw error
    }
  }

  /// Writes what is held; the file then holds every byte appended.
  func flush() throws { try lock.withLock { try flushLocked() } }

  private func flushLocked() throws {
    guard !pending.isEmpty else { return }
    try file.write(pending)
    written += UInt64(pending.count)
    pending.removeAll(keepingCapacity: true)
  }
}
