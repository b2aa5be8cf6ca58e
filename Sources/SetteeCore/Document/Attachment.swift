import Foundation

/// A named binary blob kept with a document revision (CouchDB's `_attachments`).
///
/// Written inline (``data``, base64 in JSON), as a stub that keeps an attachment the
/// revision being edited has (``isStub``), or streamed through
/// `DocumentCollection.putAttachment`. Read back as stubs (metadata only) unless the data
/// is asked for. Bodies are stored once per digest: two documents holding the same photo
/// hold one copy.
public struct Attachment: Sendable, Hashable {
  /// The name (unique within the revision).
  public var name: String
  /// The MIME type, `application/octet-stream` when none was given.
  public var contentType: String
  /// The length of the content in bytes (decoded, for an encoded attachment).
  public var length: Int64
  /// `md5-<base64>` of the bytes as stored; empty for an inline attachment not written yet
  /// (the write computes it).
  public var digest: String
  /// The generation of the revision that wrote this content.
  public var revpos: Int
  /// The content coding the bytes are stored in (`gzip` from a peer), kept and served as
  /// received; `nil` for the identity coding.
  public var encoding: String?
  /// The stored length when ``encoding`` is set.
  public var encodedLength: Int64?
  /// The bytes as stored, when written inline or read with data; `nil` for a stub.
  public var data: [UInt8]?
  /// Written as a stub: the revision keeps the attachment of this name (or digest) that
  /// the edited revision has.
  public var isStub: Bool
  /// The bytes as stored, read a chunk at a time when the revision is written, instead of
  /// held in ``data``: a `multipart/related` upload's attachments wait in a file.
  package var source: AttachmentSource?
  /// How decoded ``data`` is stored, shown beside it (`encoding`, `encoded_length`) when a
  /// reader asks for data and the encoding both: CouchDB's `attachments=true` with
  /// `att_encoding_info=true`.
  package var storedEncoding: StoredEncoding?

  /// A content coding and the stored length, shown beside decoded data.
  package struct StoredEncoding: Sendable, Hashable {
    package var encoding: String
    package var encodedLength: Int64?

    package init(encoding: String, encodedLength: Int64?) {
      self.encoding = encoding
      self.encodedLength = encodedLength
    }
  }

  /// An attachment written inline from its bytes.
  public init(name: String, contentType: String = "application/octet-stream", data: [UInt8]) {
    self.name = name
    self.contentType = contentType
    length = Int64(data.count)
    digest = Attachment.digest(of: data)
    revpos = 0
    self.data = data
    isStub = false
  }

  /// An attachment from all its parts (as stored, or a stub a peer sends).
  public init(
    name: String, contentType: String, length: Int64, digest: String, revpos: Int,
    encoding: String? = nil, encodedLength: Int64? = nil, data: [UInt8]? = nil,
    isStub: Bool = false
  ) {
    self.name = name
    self.contentType = contentType
    self.length = length
    self.digest = digest
    self.revpos = revpos
    self.encoding = encoding
    self.encodedLength = encodedLength
    self.data = data
    self.isStub = isStub
  }

  /// CouchDB's digest of stored bytes: `md5-` and the MD5 in base64.
  package static func digest(of bytes: [UInt8]) -> String {
    "md5-" + Data(MD5.hash(bytes)).base64EncodedString()
  }

  /// CouchDB's shape of the attachment, in its member order: `content_type`, `revpos`,
  /// `digest`, then `length` and `"stub": true` for a stub or the base64 `data` (with
  /// `length` too when the data is encoded, for a reader to know what it decodes to),
  /// then `encoding` and `encoded_length` when ``encoding`` is set (or, beside decoded data,
  /// when the reader asked to see how it is stored). Readers that were not asked for the
  /// encoding give decoded data and no ``encoding`` (CouchDB's `att_encoding_info`).
  public var json: JSONObject {
    var members: [(String, JSON)] = [
      ("content_type", .string(contentType)), ("revpos", .int(Int64(revpos))),
    ]
    if !digest.isEmpty { members.append(("digest", .string(digest))) }
    if let data {
      if encoding != nil { members.append(("length", .int(length))) }
      members.append(("data", .string(Data(data).base64EncodedString())))
    } else {
      members.append(("length", .int(length)))
      members.append(("stub", true))
    }
    if let encoding {
      members.append(("encoding", .string(encoding)))
      if let encodedLength { members.append(("encoded_length", .int(encodedLength))) }
    } else if data != nil, let storedEncoding {
      members.append(("encoding", .string(storedEncoding.encoding)))
      if let length = storedEncoding.encodedLength {
        members.append(("encoded_length", .int(length)))
      }
    }
    return JSONObject(members)
  }

  /// The content codings Settee decodes: CouchDB's one (`gzip`).
  package static let knownEncodings: Set<String> = ["gzip"]

  /// The most bytes an encoded attachment may decode to (4 GiB).
  package static let maxDecodedLength: Int64 = 4 << 30

  /// The attachment as a reader that did not ask for the encoding sees it: ``data``
  /// decoded (when it is set), no ``encoding`` or ``encodedLength``.
  ///
  /// - Throws: ``SetteeError`` with code `corruption` when stored data is not the gzip it is
  ///   marked as.
  package func decoded(documentID: String? = nil) throws -> Attachment {
    var plain = self
    plain.encoding = nil
    plain.encodedLength = nil
    if let data, encoding != nil {
      do {
        plain.data = try Gzip.decode(data, limit: Attachment.maxDecodedLength)
      } catch let error as GzipError {
        throw error.corruption(attachment: name, documentID: documentID)
      }
      plain.length = Int64(plain.data!.count)
    }
    return plain
  }

  /// Checks an attachment name: non-empty, not starting with `_` (CouchDB's rule), at most
  /// 1,024 bytes, and without control characters (U+0000 to U+001F, U+007F): a name travels
  /// in multipart part headers, where a CR or LF would let its author write headers of
  /// their own.
  ///
  /// - Throws: ``SetteeError`` with code `invalidDocument`.
  package static func validateName(_ name: String, documentID: String? = nil) throws {
    try Names.refuseControlCharacters(
      name, kind: "attachment name", code: .invalidDocument, documentID: documentID)
    guard !name.isEmpty, name.utf8.first != UInt8(ascii: "_"), name.utf8.count <= 1024 else {
      throw SetteeError(
        .invalidDocument,
        "attachment name \(JSONWriter.string(.string(name))) is not allowed: it must be 1 to 1024 bytes and not start with '_'",
        documentID: documentID)
    }
  }

  /// Checks a content type: it travels as a header (`Content-Type` of the attachment and of
  /// its multipart part), so it holds no control characters.
  ///
  /// - Throws: ``SetteeError`` with code `invalidDocument`.
  package static func validateContentType(_ type: String, documentID: String? = nil) throws {
    try Names.refuseControlCharacters(
      type, kind: "attachment content type", code: .invalidDocument, documentID: documentID)
  }

  /// Parses `_attachments` as a document carries it: `{name: {content_type, data}}` for
  /// inline content (base64), `{name: {stub: true, …}}` to keep one.
  ///
  /// - Throws: ``SetteeError`` with code `invalidDocument` naming the attachment.
  package static func parse(_ json: JSON, documentID: String?) throws -> [Attachment] {
    guard case .object(let object) = json else {
      throw SetteeError(
        .invalidDocument, "_attachments must be an object, not \(json.typeName)",
        documentID: documentID)
    }
    return try object.map { member in
      try parse(name: member.key, member.value, documentID: documentID)
    }
  }

  private static func parse(name: String, _ json: JSON, documentID: String?) throws -> Attachment {
    try validateName(name, documentID: documentID)
    func refuse(_ problem: String) -> SetteeError {
      SetteeError(
        .invalidDocument, "attachment \(JSONWriter.string(.string(name))) \(problem)",
        documentID: documentID)
    }
    guard case .object(let object) = json else { throw refuse("must be an object") }
    func string(_ key: String) throws -> String? {
      switch object[key] {
      case nil, .null?: return nil
      case .string(let text)?: return text
      case let other?: throw refuse("has \(key) \(other.typeName), not a string")
      }
    }
    func integer(_ key: String) throws -> Int64? {
      switch object[key] {
      case nil, .null?: return nil
      case .int(let number)? where number >= 0: return number
      case let other?: throw refuse("has \(key) \(JSONWriter.string(other)), not a count")
      }
    }
    let contentType = try string("content_type") ?? "application/octet-stream"
    try validateContentType(contentType, documentID: documentID)
    let encoding = try string("encoding")
    if object["stub"] == .bool(true) {
      return Attachment(
        name: name, contentType: contentType, length: try integer("length") ?? 0,
        digest: try string("digest") ?? "", revpos: Int(try integer("revpos") ?? 0),
        encoding: encoding, encodedLength: try integer("encoded_length"), isStub: true)
    }
    guard let base64 = try string("data") else {
      throw refuse("has neither data nor \"stub\": true")
    }
    guard let bytes = Data(base64Encoded: base64) else {
      throw refuse("has data that is not base64")
    }
    // A digest that differs from the data's is CouchDB's digest of its own stored form
    // (the gzip bytes of a compressible type, while `_bulk_get` sends them decoded): CouchDB
    // accepts such data and computes the digest again, and so does Settee.
    var attachment = Attachment(name: name, contentType: contentType, data: Array(bytes))
    if let encoding, encoding != "identity" {
      guard knownEncodings.contains(encoding) else {
        throw refuse(
          "has encoding \(JSONWriter.string(.string(encoding))), which Settee cannot decode (it knows gzip)"
        )
      }
      attachment.encoding = encoding
      attachment.encodedLength = attachment.length
      attachment.length = try integer("length") ?? attachment.length
    }
    attachment.revpos = Int(try integer("revpos") ?? 0)
    return attachment
  }
}

/// Attachment bytes given a chunk at a time, inside the write that stores them (see
/// ``Attachment/source``). Equal only to itself.
package final class AttachmentSource: @unchecked Sendable, Hashable {
  private let next: () throws -> [UInt8]?

  /// A source whose chunks `next` gives until it answers `nil`; it is read once.
  package init(_ next: @escaping () throws -> [UInt8]?) {
    self.next = next
  }

  /// The next chunk; `nil` at the end.
  package func read() throws -> [UInt8]? { try next() }

  package static func == (one: AttachmentSource, other: AttachmentSource) -> Bool {
    one === other
  }

  package func hash(into hasher: inout Hasher) {
    hasher.combine(ObjectIdentifier(self))
  }
}
