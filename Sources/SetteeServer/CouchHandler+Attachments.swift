import Foundation
import HTTPTypes
import Hummingbird
import Settee
import SetteeCore
import SetteeJavaScript
import SetteeReplication

extension CouchHandler {
  // MARK: - Attachments

  func attachment(
    _ db: DocumentCollection, _ id: String, _ name: String, _ request: CouchRequest
  ) async throws -> Response {
    try allow(request, "GET,HEAD,PUT,DELETE")
    try await requireDatabase(db)
    switch request.method {
    case .put:
      let file = try await spool(request, attachment: name)
      defer { file.close() }
      let type = request.headers[.contentType] ?? "application/octet-stream"
      try await requireValidAttachment(
        db, id, rev: try request.revision(), name,
        ["content_type": .string(type), "length": .int(Int64(try file.size())), "stub": true],
        request)
      let rev = try request.revision()
      let result: WriteResult
      do {
        result = try await db.putAttachment(
          name, to: id, rev: rev, contentType: type, chunks: { try file.read(upTo: 256 << 10) })
      } catch let error as SetteeError where error.code == .conflict {
        // A revision the document never had: CouchDB's 409 names it `missing_rev`.
        if let rev, try await db.revsDiff([id: [rev]])[id] != nil {
          throw CouchError(.conflict, "not_found", "missing_rev")
        }
        throw error
      }
      return CouchResponse.written(
        result,
        location: "/\(Self.escape(db.name))/\(Self.escape(id))/\(Self.escape(name))",
        etag: false)
    case .delete:
      guard let rev = try request.revision() else {
        throw CouchError(.conflict, "conflict", "Document update conflict.")
      }
      try await requireValidAttachment(db, id, rev: rev, name, nil, request)
      return CouchResponse.written(
        try await db.deleteAttachment(name, from: id, rev: rev), status: .ok, etag: false)
    default:
      try await requireReadable(db, id, request)
      let rev = try request.revision(ifMatch: false)
      // Streamed a chunk at a time, each read on its own: a slow client holds no read
      // transaction, and a large attachment never sits whole in memory. An attachment kept
      // gzip-encoded goes as stored only to a client that accepts gzip (CouchDB's rule);
      // the others get the bytes it stands for.
      guard
        let stream = try await db.attachmentStream(
          name, of: id, rev: rev, decoding: !acceptsGzip(request))
      else {
        try await requireDatabase(db)
        throw CouchError(.notFound, "not_found", "Document is missing attachment")
      }
      let stored = stream.attachment
      // Byte ranges of an attachment stored as its bytes (not gzip), as CouchDB serves
      // them: one range is a 206, one past the end a 416; several are answered whole.
      let seekable = stream.yieldsStoredBytes && stored.encoding == nil
      let total = stored.encodedLength ?? stored.length
      var status = HTTPResponse.Status.ok
      var body = stream
      var range: Range<Int64>? = nil
      if seekable, request.method == .get, let header = request.headers[.range] {
        switch Self.byteRange(header, length: total) {
        case .whole: break
        case .unsatisfiable:
          throw CouchError(
            .rangeNotSatisfiable, "requested_range_not_satisfiable",
            "Requested range not satisfiable")
        case .bytes(let bytes):
          range = bytes
          body = try stream.bytes(bytes)
          status = .partialContent
        }
      }
      // CouchDB's headers: the digest's base64 as the ETag, and a sandbox, so that an
      // HTML attachment cannot run script as the server's origin.
      var headers: HTTPFields = [
        .contentType: stored.contentType,
        .eTag:
          "\"\(stored.digest.hasPrefix("md5-") ? String(stored.digest.dropFirst(4)) : stored.digest)\"",
        .cacheControl: "must-revalidate", .acceptRanges: seekable ? "bytes" : "none",
        .contentSecurityPolicy: "sandbox",
      ]
      if let encoding = stored.encoding { headers[.contentEncoding] = encoding }
      if let range {
        headers[.contentRange] = "bytes \(range.lowerBound)-\(range.upperBound - 1)/\(total)"
      }
      let length = Int(range.map { $0.upperBound - $0.lowerBound } ?? total)
      // Set here too, so that a HEAD answer tells the length it leaves out.
      headers[.contentLength] = String(length)
      let chunks = body
      return Response(
        status: status, headers: headers,
        body: ResponseBody(contentLength: length) { writer in
          for try await chunk in chunks { try await writer.write(ByteBuffer(bytes: chunk)) }
          try await writer.finish(nil)
        })
    }
  }

  /// What a `Range` header asks of `length` bytes.
  enum ByteRange: Equatable {
    /// Not one byte range Settee serves (malformed, or several): the whole.
    case whole
    /// A range that starts past the end (or asks for the last 0 bytes).
    case unsatisfiable
    case bytes(Range<Int64>)
  }

  /// Reads `bytes=a-b`, `bytes=a-` and `bytes=-n` (RFC 9110, section 14.1.2) against
  /// `length` bytes.
  static func byteRange(_ header: String, length: Int64) -> ByteRange {
    let text = header.trimmingCharacters(in: .whitespaces)
    guard text.lowercased().hasPrefix("bytes="), !text.contains(",") else { return .whole }
    let spec = text.dropFirst("bytes=".count).trimmingCharacters(in: .whitespaces)
    guard let dash = spec.firstIndex(of: "-") else { return .whole }
    let first = spec[..<dash].trimmingCharacters(in: .whitespaces)
    let last = spec[spec.index(after: dash)...].trimmingCharacters(in: .whitespaces)
    func number(_ text: String) -> Int64? {
      text.isEmpty || !text.allSatisfy(\.isASCII) ? nil : Int64(text).flatMap { $0 >= 0 ? $0 : nil }
    }
    if first.isEmpty {
      // The last n bytes.
      guard let count = number(last) else { return .whole }
      guard count > 0, length > 0 else { return .unsatisfiable }
      return .bytes(max(0, length - count)..<length)
    }
    guard let start = number(first) else { return .whole }
    let end: Int64
    if last.isEmpty {
      end = length - 1
    } else {
      guard let given = number(last), given >= start else { return .whole }
      end = min(given, length - 1)
    }
    guard start < length else { return .unsatisfiable }
    return .bytes(start..<(end + 1))
  }

  /// Validates the document an attachment write makes: the revision `rev` (or a new
  /// document) with the attachment `name` set to `stub`, or removed when `stub` is `nil`.
  private func requireValidAttachment(
    _ db: DocumentCollection, _ id: String, rev: RevisionID?, _ name: String, _ stub: JSON?,
    _ request: CouchRequest
  ) async throws {
    let rules = DesignValidation.judges(documentID: id) ? try await validation(db) : nil
    // A server administrator's attachment write is judged only by the functions, and
    // outside `_users`.
    guard rules != nil || !request.user.isServerAdmin || db.name == UsersDatabase.name else {
      return
    }
    var document: JSONObject = ["_id": .string(id)]
    if let rev, let current = try await db.document(id, RevisionReadOptions(rev: rev)) {
      document = current
    }
    var attachments = document["_attachments"]?.objectValue ?? [:]
    attachments[name] = stub
    document["_attachments"] = attachments.isEmpty ? nil : .object(attachments)
    try await requireValid(db, document, request, by: rules)
  }

  /// Writes a request body to a temporary file as it arrives, so that an attachment of any
  /// size never sits whole in memory and a slow client holds no transaction. The file has
  /// no name (``TemporaryFile``) and is read from its first byte.
  ///
  /// A gzip upload (Cloudant's SDKs compress bodies) comes inflated as it arrives
  /// (``RequestDecompression``): the attachment is stored as the bytes it stands for, and a
  /// 100 MB one never sits whole in memory.
  ///
  /// - Throws: ``CouchError`` `413 attachment_too_large` naming `attachment` once more
  ///   than ``ServerConfiguration/maxAttachmentBytes`` have come (decoded), before the rest
  ///   is read.
  func spool(_ request: CouchRequest, attachment: String) async throws -> TemporaryFile {
    let file = try TemporaryFile(for: "an upload")
    let limit = configuration.maxAttachmentBytes
    var size = 0
    do {
      try await request.forEachStreamedChunk {
        size += $0.count
        if size > limit { throw Self.attachmentTooLarge(attachment) }
        try file.write($0)
      }
      try file.rewind()
    } catch {
      file.close()
      throw error
    }
    return file
  }

  /// CouchDB's answer to an attachment over `max_attachment_size`.
  static func attachmentTooLarge(_ name: String?) -> CouchError {
    CouchError(
      .init(code: 413, reasonPhrase: "Request Entity Too Large"), "attachment_too_large",
      name ?? "")
  }
}
