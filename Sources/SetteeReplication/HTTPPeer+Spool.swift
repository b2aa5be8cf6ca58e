import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import Settee
import SetteeCore

/// Documents too large to hold, read and written as streams (``SpooledDocument``), as
/// CouchDB's replicator passes them: `open_revs` answered as `multipart/mixed` and read as
/// it arrives, the attachments' parts into a temporary file; a `multipart/related` PUT
/// whose parts are sent from that file as the connection takes them.
extension HTTPPeer {
  func spool(_ wanted: WantedRevisions) async throws -> [SpooledDocument] {
    var query = [
      ("revs", "true"), ("latest", "true"), ("attachments", "true"),
      ("open_revs", JSONWriter.string(.array(wanted.revs.map { .string($0.description) }))),
    ]
    if !wanted.attachmentsSince.isEmpty {
      query.append(
        ("atts_since", JSONWriter.string(.array(wanted.attachmentsSince.map { .string($0.description) }))))
    }
    let path = "/" + Self.escapeID(wanted.id)
    let request = self.request(.GET, path, query: query, headers: [("Accept", "multipart/mixed")])
    let seconds = transferSeconds
    return try await translatingFailures(.GET, path, seconds: seconds) {
      let response = try await Self.client.execute(request, timeout: .seconds(seconds))
      let type = response.headers.first(name: "Content-Type") ?? ""
      let status = Int(response.status.code)
      guard (200..<300).contains(status), type.lowercased().hasPrefix("multipart/mixed") else {
        // An error, or a peer that answers JSON: read whole, as any answer.
        let bytes = try await response.body.collect(upTo: Self.maxAnswerBytes)
        let answer = Answer(status: status, body: bytes, peer: label, contentType: type)
        try check(answer)
        return try await spooled(fromJSON: answer)
      }
      guard let boundary = Multipart.boundary(ofContentType: type) else {
        throw malformed("open_revs answered multipart/mixed without a boundary")
      }
      let reader = OpenRevisionsReader(boundary: boundary)
      do {
        for try await buffer in response.body { try reader.feed(buffer.readableBytesView) }
        return try reader.finish()
      } catch let error as MultipartError {
        reader.discard()
        throw malformed("open_revs answered a \(error)")
      } catch {
        reader.discard()
        throw error
      }
    }
  }

  func write(_ document: SpooledDocument) async throws -> WriteFailure? {
    let boundary = Multipart.boundary()
    var segments: [SpoolBody.Segment] = []
    var json = document.document
    if case .object(var attachments)? = json["_attachments"] {
      // Each following attachment says how long its part is: the bytes as they are sent.
      for (name, attachment, part) in document.following {
        var stated = attachment
        if stated["encoding"] != nil {
          stated["encoded_length"] = .int(Int64(part.length))
        } else {
          stated["length"] = .int(Int64(part.length))
        }
        attachments[name] = .object(stated)
      }
      json["_attachments"] = .object(attachments)
    }
    var head = Array("--\(boundary)\r\nContent-Type: application/json\r\n\r\n".utf8)
    JSONWriter.write(.object(json), into: &head)
    segments.append(.bytes(head))
    for (name, attachment, part) in document.following {
      let quoted = Multipart.headerValue(name).replacingOccurrences(of: "\"", with: "\\\"")
      let type = attachment["content_type"]?.stringValue ?? "application/octet-stream"
      var headers =
        "\r\n--\(boundary)\r\nContent-Disposition: attachment; filename=\"\(quoted)\"\r\nContent-Type: \(Multipart.headerValue(type))\r\nContent-Length: \(part.length)\r\n"
      if let encoding = attachment["encoding"]?.stringValue {
        headers += "Content-Encoding: \(Multipart.headerValue(encoding))\r\n"
      }
      segments.append(.bytes(Array((headers + "\r\n").utf8)))
      segments.append(.file(part))
    }
    segments.append(.bytes(Array("\r\n--\(boundary)--".utf8)))
    let body = SpoolBody(segments: segments, file: document.file)
    let answer = try await send(
      .PUT, "/" + Self.escapeID(document.id), query: [("new_edits", "false")],
      streamedBody: .stream(body, length: .known(Int64(body.length))),
      contentType: "multipart/related; boundary=\"\(boundary)\"",
      timeout: .seconds(transferSeconds))
    return try refusal(answer, of: document.id)
  }

  /// How long a transfer of a large document may take: an hour (its bytes come and go
  /// as a stream; a stalled connection is the client's read timeout to find).
  var transferSeconds: Int64 { max(requestTimeout.components.seconds, 3_600) }

  /// A JSON `open_revs` answer, its attachments' inline data moved into a file.
  private func spooled(fromJSON answer: Answer) async throws -> [SpooledDocument] {
    guard case .array(let entries) = try answer.json() else {
      throw malformed("open_revs answered without a JSON array")
    }
    var documents: [SpooledDocument] = []
    for entry in entries {
      guard case .object(var document)? = entry["ok"] else { continue }
      guard case .object(var attachments)? = document["_attachments"],
        attachments.contains(where: { $0.value["data"] != nil })
      else {
        documents.append(SpooledDocument(document: document, parts: [:], file: nil))
        continue
      }
      documents.append(
        try await SpoolWriter().spool { writer in
          var parts: [String: SpooledDocument.Part] = [:]
          for member in attachments {
            guard case .object(var attachment) = member.value,
              let data = attachment["data"]?.stringValue, let bytes = Data(base64Encoded: data)
            else { continue }
            parts[member.key] = SpooledDocument.Part(offset: writer.offset, length: bytes.count)
            try writer.append(bytes)
            attachment["data"] = nil
            attachment["follows"] = true
            attachments[member.key] = .object(attachment)
          }
          document["_attachments"] = .object(attachments)
          return (document, parts)
        })
    }
    return documents
  }
}

/// An `open_revs` answer (`multipart/mixed`) read as it arrives: a part per revision,
/// JSON or `multipart/related` (the document, then its attachments' bytes, which go to a
/// file).
final class OpenRevisionsReader {
  private var outer: MultipartReader
  /// The revision being read.
  private var current: Revision?
  private var done: [SpooledDocument] = []
  /// The largest document part kept (the JSON; attachments go to the file).
  private static let maxDocumentBytes = 256 << 20

  private final class Revision {
    var json: [UInt8] = []
    var isError = false
    var inner: MultipartReader?
    var writer: SpoolWriter?
    /// Inner parts after the document: their file names and where their bytes are.
    var names: [String?] = [nil]
    var parts: [SpooledDocument.Part] = []
    var index = -1
  }

  init(boundary: String) {
    outer = MultipartReader(boundary: boundary)
  }

  func feed(_ bytes: some Collection<UInt8>) throws {
    try outer.feed(bytes) { event in
      switch event {
      case .part(let headers):
        try finishRevision()
        let revision = Revision()
        let type = headers["content-type"] ?? "application/json"
        if type.lowercased().hasPrefix("multipart/related") {
          guard let inner = Multipart.boundary(ofContentType: type) else {
            throw MultipartError(reason: "a multipart/related part has no boundary")
          }
          revision.inner = MultipartReader(boundary: inner)
        } else {
          revision.isError = type.contains("error=\"true\"")
        }
        current = revision
      case .data(let bytes):
        guard let revision = current else { return }
        if revision.inner == nil {
          try Self.keep(bytes, in: &revision.json)
        } else {
          try revision.inner!.feed(bytes) { inner in try Self.read(inner, into: revision) }
        }
      }
    }
  }

  private static func keep(_ bytes: ArraySlice<UInt8>, in json: inout [UInt8]) throws {
    json.append(contentsOf: bytes)
    if json.count > maxDocumentBytes {
      throw MultipartError(reason: "a document part is larger than 256 MiB")
    }
  }

  private static func read(_ event: MultipartReader.Event, into revision: Revision) throws {
    switch event {
    case .part(let headers):
      revision.index += 1
      guard revision.index > 0 else { return }
      if revision.writer == nil { revision.writer = try SpoolWriter() }
      revision.names.append(Multipart.filename(headers["content-disposition"]))
      revision.parts.append(SpooledDocument.Part(offset: revision.writer!.offset, length: 0))
    case .data(let bytes):
      if revision.index == 0 {
        try keep(bytes, in: &revision.json)
      } else if revision.index > 0 {
        try revision.writer!.append(bytes)
        revision.parts[revision.parts.count - 1].length += bytes.count
      }
    }
  }

  /// The revision read so far, done.
  private func finishRevision() throws {
    guard let revision = current else { return }
    current = nil
    if let inner = revision.inner, !inner.isComplete {
      throw MultipartError(reason: "a multipart/related part ends before its closing boundary")
    }
    try revision.writer?.flush()
    guard case .object(var document)? = try? JSONParser.parse(revision.json) else {
      throw MultipartError(reason: "a part is not a JSON object")
    }
    if revision.isError || document["missing"] != nil {
      revision.writer?.file.close()
      return
    }
    var parts: [String: SpooledDocument.Part] = [:]
    if case .object(let attachments)? = document["_attachments"] {
      let chosen = try Multipart.attachmentParts(attachments, partNames: revision.names)
      for (name, position) in chosen {
        let part = revision.parts[position - 1]
        if case .object(let attachment)? = attachments[name] {
          try Multipart.checkLength(part.length, declaredBy: attachment, name: name)
        }
        parts[name] = part
      }
      document["_attachments"] = .object(attachments)
    }
    done.append(SpooledDocument(document: document, parts: parts, file: revision.writer?.file))
  }

  /// Every revision, once the body has ended.
  func finish() throws -> [SpooledDocument] {
    guard outer.isComplete else {
      throw MultipartError(reason: "the answer ends before its closing boundary")
    }
    try finishRevision()
    return done
  }

  /// Frees the files of what was read (a failed read).
  func discard() {
    for document in done { document.close() }
    current?.writer?.file.close()
  }
}

/// A `multipart/related` body sent from its head, part headers and a spool's file, a chunk
/// at a time as the connection takes it.
struct SpoolBody: AsyncSequence, Sendable {
  typealias Element = ByteBuffer

  enum Segment: Sendable {
    case bytes([UInt8])
    case file(SpooledDocument.Part)
  }

  let segments: [Segment]
  let file: TemporaryFile?

  /// The body's length.
  var length: Int {
    segments.reduce(0) {
      switch $1 {
      case .bytes(let bytes): $0 + bytes.count
      case .file(let part): $0 + part.length
      }
    }
  }

  struct AsyncIterator: AsyncIteratorProtocol {
    let segments: [Segment]
    let file: TemporaryFile?
    var index = 0
    var done = 0

    mutating func next() async throws -> ByteBuffer? {
      while index < segments.count {
        switch segments[index] {
        case .bytes(let bytes):
          index += 1
          if !bytes.isEmpty { return ByteBuffer(bytes: bytes) }
        case .file(let part):
          guard done < part.length else {
            (index, done) = (index + 1, 0)
            continue
          }
          guard
            let chunk = try file?.read(
              at: part.offset + UInt64(done), upTo: Swift.min(part.length - done, 256 << 10))
          else {
            throw SetteeError(.io, "the temporary file of a replicated attachment was cut short")
          }
          done += chunk.count
          return ByteBuffer(bytes: chunk)
        }
      }
      return nil
    }
  }

  func makeAsyncIterator() -> AsyncIterator { AsyncIterator(segments: segments, file: file) }
}
