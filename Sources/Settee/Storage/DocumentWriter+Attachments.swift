import GRDB
import SetteeCore

extension DocumentWriter {
  /// The attachments a new revision of `document` gets, at generation `generation`, with
  /// the blobs of inline ones stored (`parent` is `nil` when it has none, or for a new
  /// document): those of the `parent` revision when the document
  /// states none (an edit, not a deletion or a peer's revision), else exactly the listed
  /// ones, a stub keeping the parent's of its name (or, from a peer, the blob of its
  /// digest).
  ///
  /// An inline attachment is written at `generation`, unless the revision is a peer's
  /// (`fromPeer`): it then keeps the `revpos` it came with (as CouchDB keeps it for
  /// `new_edits: false`), which `atts_since` reads to tell which attachments a replica
  /// already holds.
  ///
  /// - Throws: ``SetteeError`` with code `missingStub` for a stub that names nothing the
  ///   parent or the file holds.
  mutating func resolveAttachments(
    _ document: Document, parent: (rid: Int64, rev: RevisionID)?, keepsParents: Bool,
    generation: Int, fromPeer: Bool = false
  ) throws -> [StoredAttachment] {
    guard document.attachments != nil || (parent != nil && keepsParents) else { return [] }
    let inherited =
      try parent.map { try AttachmentStore.attachments(db, rid: $0.rid, rev: $0.rev) } ?? []
    guard let listed = document.attachments else {
      return keepsParents && !document.isDeleted ? inherited : []
    }
    var resolved: [StoredAttachment] = []
    for attachment in listed {
      if let data = attachment.data {
        let blob = try AttachmentStore.store(db, bytes: data)
        resolved.append(
          StoredAttachment(
            name: attachment.name, aid: blob.aid, contentType: attachment.contentType,
            revpos: fromPeer && (1...max(1, generation)).contains(attachment.revpos)
              ? attachment.revpos : generation,
            length: attachment.encoding == nil ? blob.length : attachment.length,
            encoding: attachment.encoding, digest: blob.digest, storedLength: blob.length))
        continue
      }
      if let kept = inherited.first(where: {
        $0.name == attachment.name && (attachment.digest.isEmpty || $0.digest == attachment.digest)
      }) {
        resolved.append(kept)
      } else if !attachment.digest.isEmpty,
        let blob = try AttachmentStore.blob(db, digest: attachment.digest)
      {
        resolved.append(
          StoredAttachment(
            name: attachment.name, aid: blob.aid, contentType: attachment.contentType,
            revpos: attachment.revpos > 0 ? attachment.revpos : generation,
            length: attachment.encoding == nil ? blob.length : attachment.length,
            encoding: attachment.encoding, digest: attachment.digest, storedLength: blob.length))
      } else {
        throw SetteeError(
          .missingStub,
          "attachment \(quoted(attachment.name)) is a stub, but \(parent.map { "revision \($0.rev)" } ?? "the document") has no such attachment\(attachment.digest.isEmpty ? "" : " and no attachment has digest \(attachment.digest)")",
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
