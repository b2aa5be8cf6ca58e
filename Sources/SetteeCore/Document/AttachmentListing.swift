/// What the documents of a list (all-documents and view rows with their documents, find
/// results, a changes feed's documents) carry of their attachments.
///
/// Whatever it says, a document that has attachments lists them, as every read of one
/// document does (CouchDB's lists show them too): by default as stubs (name, type,
/// length, digest, `revpos`).
public struct AttachmentListing: Sendable, Hashable {
  /// Give each attachment's data (base64, decoded) instead of a stub: CouchDB's
  /// `attachments=true`.
  public var data: Bool
  /// Show on stubs how an attachment kept encoded is stored (`encoding`,
  /// `encoded_length`): CouchDB's `att_encoding_info=true`.
  public var encodingInfo: Bool

  /// A listing; stubs without encoding information by default.
  public init(data: Bool = false, encodingInfo: Bool = false) {
    self.data = data
    self.encodingInfo = encodingInfo
  }

  /// Stubs, as CouchDB lists attachments unless asked for their data.
  public static let stubs = AttachmentListing()
}
