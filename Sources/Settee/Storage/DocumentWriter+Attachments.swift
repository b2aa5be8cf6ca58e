import GRDB
import SetteeCore

extension DocumentWriter {
  /// The attachments a new revision of `document` gets, at generation `generation`, with
  /// the blobs of inline ones stored (`parent` is `nil` when it has none, or for a new
  /// document): those of the `parent` revision when the document
  /// states none (an edit, not a deletion or a peer's revision), else exactly the listed
  /// ones, a stub keeping the parent's of its name (or, failing that, the attachment of
  /// its digest that another revision of the same document holds: the ancestor a peer's
  /// stubs count on may be stemmed or no longer a leaf).
  ///
  /// An inline attachment is written at `generation`, unless the revision is a peer's
  /// (`fromPeer`): it then keeps the `revpos` it came with, 0 when it came with none (as
  /// CouchDB keeps it for `new_edits: false`), which `atts_since` reads to tell which
  /// attachments a replica already holds (0 counts as unknown there: its data is sent). Inline data marked `"encoding": "gzip"` is kept as it came (CouchDB
  /// replicates its compressible types so), once it is checked to decode; its `length` is
  /// what it decodes to.
  ///
  /// - Throws: ``SetteeError`` with code `missingStub` for a stub that names nothing the
  ///   parent or the document holds (a stub never reaches another document's attachment:
  ///   knowing a digest must not give its bytes), `invalidDocument` for encoded data that
  ///   does not decode.
  mutating func resolveAttachments(
    _ document: Document, parent: (rid: Int64, rev: RevisionID)?, keepsParents: Bool,
    generation: Int, fromPeer: Bool = false, documentRID: Int64? = nil
  ) throws -> [StoredAttachment] {
    guard document.attachments != nil || (parent != nil && keepsParents) else { return [] }
    let inherited =
      try parent.map { try AttachmentStore.attachments(db, rid: $0.rid, rev: $0.rev) } ?? []
    guard let listed = document.attachments else {
      return keepsParents && !document.isDeleted ? inherited : []
    }
    var resolved: [StoredAttachment] = []
    for attachment in listed {
      if attachment.data != nil || attachment.source != nil {
        // Inline bytes are one chunk; a source's come a chunk at a time, never whole.
        var inline = attachment.data
        let source = attachment.source
        func next() throws -> [UInt8]? {
          if let source { return try source.read() }
          defer { inline = nil }
          return inline
        }
        let revpos = fromPeer ? max(0, attachment.revpos) : generation
        guard attachment.encoding != nil else {
          // Plain bytes: a compressible type is stored gzip-encoded, as CouchDB stores it.
          let blob = try AttachmentStore.storePlain(
            db, contentType: attachment.contentType, next)
          resolved.append(
            StoredAttachment(
              name: attachment.name, aid: blob.aid, contentType: attachment.contentType,
              revpos: revpos, length: blob.length, encoding: blob.encoding,
              digest: blob.digest, storedLength: blob.storedLength))
          continue
        }
        let decoder = try GzipDecoder(limit: Attachment.maxDecodedLength)
        let blob: (aid: Int64, digest: String, length: Int64)
        do {
          blob = try AttachmentStore.store(db) {
            let chunk = try next()
            if let chunk { _ = try decoder.decode(chunk) }
            return chunk
          }
          _ = try decoder.finish()
        } catch let error as GzipError {
          throw SetteeError(
            .invalidDocument,
            "attachment \(quoted(attachment.name)) is marked \"encoding\": \"gzip\", but \(error.reason)",
            documentID: document.id)
        }
        resolved.append(
          StoredAttachment(
            name: attachment.name, aid: blob.aid, contentType: attachment.contentType,
            revpos: revpos, length: decoder.produced, encoding: attachment.encoding,
            digest: blob.digest, storedLength: blob.length))
        continue
      }
      if let kept = inherited.first(where: {
        $0.name == attachment.name && (attachment.digest.isEmpty || $0.digest == attachment.digest)
      }) {
        resolved.append(kept)
      } else if let kept = try inherited.first(where: {
        try $0.name == attachment.name && $0.encoding != nil
          && AttachmentStore.decodedDigest(db, $0, documentID: document.id) == attachment.digest
      }) {
        // A peer that stored this attachment plain (an older Settee) names it by the
        // digest of its plain bytes.
        resolved.append(kept)
      } else if !attachment.digest.isEmpty, let rid = documentRID ?? parent?.rid,
        var held = try AttachmentStore.attachment(db, rid: rid, digest: attachment.digest)
      {
        held.name = attachment.name
        held.contentType = attachment.contentType
        if attachment.revpos > 0 { held.revpos = attachment.revpos }
        resolved.append(held)
      } else if storedBlobs.contains(attachment.digest),
        let blob = try AttachmentStore.blob(db, digest: attachment.digest)
      {
        // A blob this write stored (an attachment upload): its stub tells its plain length
        // and encoding.
        resolved.append(
          StoredAttachment(
            name: attachment.name, aid: blob.aid, contentType: attachment.contentType,
            revpos: generation, length: attachment.encoding == nil ? blob.length : attachment.length,
            encoding: attachment.encoding, digest: attachment.digest, storedLength: blob.length))
      } else {
        throw SetteeError(
          .missingStub,
          "Invalid attachment stub in \(document.id) for \(attachment.name): \(parent.map { "revision \($0.rev)" } ?? "the document") has no such attachment\(attachment.digest.isEmpty ? "" : " and no revision of it one with digest \(attachment.digest)")",
          documentID: document.id)
      }
    }
    return resolved.sorted { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
  }

  /// The bytes a new revision id is computed from: the body, and each attachment's name and
  /// digest when there are any (so that edits of attachments alone make new revisions;
  /// documents without attachments keep the ids they always had).
  static func revisionBytes(_ body: [UInt8], _ attachments: [StoredAttachment]) -> [UInt8] {
    guard !attachments.isEmpty else { return body }
    var bytes = body
    for attachment in attachments {
      bytes.append(0)
      bytes += Array(attachment.name.utf8)
      bytes.append(0)
      bytes += Array(attachment.digest.utf8)
    }
    return bytes
  }
}
