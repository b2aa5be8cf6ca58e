import GRDB
import SetteeCore

extension AttachmentStore {
  /// A revision's stored attachments as a read shows them: with their data where `data`
  /// says (decoded, unless `encodedData`), else as stubs, which show how an encoded one is
  /// stored only with `encodingInfo`. Every read of attachments goes through here: one
  /// document's (``DocumentCollection/document(_:_:)-2o8gj``) and every list's.
  static func read(
    _ db: SQLConnection, _ stored: [StoredAttachment], documentID: String,
    encodedData: Bool = false, encodingInfo: Bool, data: (StoredAttachment) -> Bool
  ) throws -> [Attachment] {
    try stored.map { attachment in
      var read = attachment.attachment
      if data(attachment) { read.data = try bytes(db, aid: attachment.aid) }
      if read.encoding != nil && !encodedData {
        if read.data != nil {
          let stored = read.encoding.map {
            Attachment.StoredEncoding(encoding: $0, encodedLength: read.encodedLength)
          }
          read = try read.decoded(documentID: documentID)
          if encodingInfo { read.storedEncoding = stored }
        } else if !encodingInfo {
          read.encoding = nil
          read.encodedLength = nil
        }
      }
      return read
    }
  }
}

/// Gives the documents of a list (all-documents and view rows with their documents, find
/// results, a changes feed's documents) their revision's attachments, in the read that
/// found them, as ``AttachmentListing`` asks: CouchDB's lists show a document's
/// `_attachments` as a read of that one document does.
///
/// A collection in which no document holds attachments (the partial index
/// `documents_attached` answers at once) costs nothing more per document; otherwise each
/// document is looked up by id, and only one whose flag is set reads its attachments.
struct ListedAttachments {
  private let cid: Int64
  private let listing: AttachmentListing
  private let any: Bool

  init(_ db: SQLConnection, cid: Int64, _ listing: AttachmentListing = .stubs) throws {
    self.cid = cid
    self.listing = listing
    // Through SQLite's C API (``RawStatement``): every list and find asks this once, and
    // GRDB's row decoding was most of its cost.
    any =
      try RawStatement(db, Self.anySQL + SQLFragment.value(cid) + Self.anyEnd).first {
        $0.int64(0) != 0
      } ?? false
  }

  private static let anySQL = SQLFragment(
    "SELECT EXISTS (SELECT 1 FROM documents WHERE attachments != 0 AND cid = ")
  private static let anyEnd = SQLFragment(")")

  /// Sets `document.attachments` to those of its revision (nothing when it has none).
  func fill(_ db: SQLConnection, _ document: inout Document) throws {
    guard any, let rev = document.rev else { return }
    let rows = try Row.fetchCursor(
      db.cachedStatement(
        sql: """
          SELECT a.name, a.aid, a.content_type, a.revpos, a.length, a.encoding, b.digest, b.length
          FROM documents d
          JOIN attachments a ON a.rid = d.rid AND a.rev = ?
          JOIN attachment_blobs b ON b.aid = a.aid
          WHERE d.cid = ? AND d.id = ? AND d.attachments != 0 ORDER BY a.name
          """), arguments: [rev.description, cid, document.id])
    var stored: [StoredAttachment] = []
    while let row = try rows.next() { stored.append(try StoredAttachment(row)) }
    guard !stored.isEmpty else { return }
    document.attachments = try AttachmentStore.read(
      db, stored, documentID: document.id, encodingInfo: listing.encodingInfo
    ) { _ in listing.data }
  }

  /// ``fill(_:_:)`` for every row's document.
  func fill(_ db: SQLConnection, _ result: inout ViewResult) throws {
    guard any else { return }
    for index in result.rows.indices where result.rows[index].document != nil {
      try fill(db, &result.rows[index].document!)
    }
  }
}
