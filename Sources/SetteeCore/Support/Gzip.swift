import CSetteeZlib

/// Data that is not gzip (RFC 1952), or that decodes to more than it was allowed to.
package struct GzipError: Error, Sendable, CustomStringConvertible {
  /// Why, for a message that names the input.
  package var reason: String
  package var description: String { reason }

  /// Settee's error for an attachment stored gzip-encoded that does not decode.
  package func corruption(attachment name: String, documentID: String?) -> SetteeError {
    SetteeError(
      .corruption,
      "attachment \(JSONWriter.string(.string(name))) is stored gzip-encoded, but \(reason)",
      documentID: documentID)
  }
}

/// gzip, through the system's zlib: CouchDB stores the attachments of its
/// `compressible_types` gzip-encoded and replicates them so; Settee keeps those bytes and
/// decodes them for every reader that did not ask for the encoding.
package enum Gzip {
  /// The bytes a gzip body stands for, whole.
  ///
  /// - Parameter limit: the most bytes the result may hold (a small body can stand for
  ///   gigabytes); `nil` for no limit.
  /// - Throws: ``GzipError`` for data that is not gzip, ends early, or exceeds `limit`.
  package static func decode(_ bytes: [UInt8], limit: Int64? = nil) throws -> [UInt8] {
    let decoder = try GzipDecoder(limit: limit)
    var out = try decoder.decode(bytes)
    out += try decoder.finish()
    return out
  }

  /// How many bytes a gzip body stands for, decoding it without keeping what it decodes.
  ///
  /// - Throws: as ``decode(_:limit:)``.
  package static func decodedLength(of bytes: [UInt8], limit: Int64? = nil) throws -> Int64 {
    let decoder = try GzipDecoder(limit: limit)
    _ = try decoder.decode(bytes)
    _ = try decoder.finish()
    return decoder.produced
  }

  /// `bytes` as one gzip member, at zlib's `level` (0-9).
  package static func encode(_ bytes: [UInt8], level: Int32 = 6) -> [UInt8] {
    GzipEncoder(level: level).encode(bytes, finish: true)
  }
}

/// A gzip body decoded a chunk at a time (several gzip members one after another decode
/// as their concatenation, as gunzip does).
package final class GzipDecoder {
  private var stream: OpaquePointer?
  private let limit: Int64?
  /// How many decoded bytes were given so far.
  package private(set) var produced: Int64 = 0
  private var ended = false
  private var room = [UInt8](repeating: 0, count: 64 * 1024)

  /// A decoder that refuses to produce more than `limit` bytes.
  package init(limit: Int64? = nil) throws {
    self.limit = limit
    stream = try Self.open()
  }

  deinit { settee_zstream_close(stream) }

  private static func open() throws -> OpaquePointer {
    guard let stream = settee_gunzip_open() else {
      throw GzipError(reason: "zlib could not allocate a decoder")
    }
    return stream
  }

  /// The bytes that `chunk` completes.
  ///
  /// - Throws: ``GzipError`` for bytes that are not gzip or pass the limit.
  package func decode(_ chunk: [UInt8]) throws -> [UInt8] {
    var out: [UInt8] = []
    var offset = 0
    while offset < chunk.count {
      if ended {
        // Another member follows the one that ended.
        settee_zstream_close(stream)
        stream = try Self.open()
        ended = false
      }
      var consumed = 0
      var produced = 0
      let status = chunk.withUnsafeBufferPointer { input in
        room.withUnsafeMutableBufferPointer { output in
          settee_zstream_step(
            stream!, input.baseAddress! + offset, input.count - offset, &consumed,
            output.baseAddress!, output.count, &produced, 0)
        }
      }
      offset += consumed
      try append(produced, to: &out)
      if status == 1 {
        ended = true
      } else if status < 0 {
        throw GzipError(reason: "the data is not gzip (zlib error \(status))")
      } else if consumed == 0 && produced < room.count {
        // Input left over that zlib did not take, and no full output buffer to explain it.
        throw GzipError(reason: "the data is not gzip (the decoder stopped)")
      }
    }
    // Output zlib still holds for input it has already consumed.
    while !ended {
      var consumed = 0
      var produced = 0
      let status = room.withUnsafeMutableBufferPointer { output in
        settee_zstream_step(
          stream!, nil, 0, &consumed, output.baseAddress!, output.count, &produced, 0)
      }
      try append(produced, to: &out)
      if status == 1 { ended = true }
      if produced == 0 || status != 0 { break }
    }
    return out
  }

  /// How many stored bytes ``decode(taking:)`` decodes at a time: well-compressed text
  /// stands for up to about a thousand times its size, so a slice never decodes into more
  /// than some megabytes.
  package static let sliceBytes = 16 * 1024

  /// Decodes the first ``sliceBytes`` of `pending` (removing them): what a reader that
  /// hands on decoded bytes a piece at a time calls until `pending` is empty.
  ///
  /// - Throws: as ``decode(_:)``.
  package func decode(taking pending: inout ArraySlice<UInt8>) throws -> [UInt8] {
    let slice = Array(pending.prefix(Self.sliceBytes))
    pending = pending.dropFirst(slice.count)
    return try decode(slice)
  }

  /// Checks that the body ended where a gzip member ends; the bytes still held.
  ///
  /// - Throws: ``GzipError`` for a body cut short.
  package func finish() throws -> [UInt8] {
    guard ended else {
      throw GzipError(reason: "the gzip data ends early")
    }
    return []
  }

  private func append(_ count: Int, to out: inout [UInt8]) throws {
    produced += Int64(count)
    if let limit, produced > limit {
      throw GzipError(reason: "the gzip data decodes to more than \(limit) bytes")
    }
    out += room[..<count]
  }
}

/// Bytes encoded as one gzip member a chunk at a time. zlib's output does not depend on
/// how its input is cut, so the result is ``Gzip/encode(_:level:)``'s of all the input.
package final class GzipEncoder {
  private let stream: OpaquePointer
  private var room = [UInt8](repeating: 0, count: 64 * 1024)
  /// How many bytes were given to encode so far.
  package private(set) var consumed: Int64 = 0

  /// An encoder at zlib's `level` (0-9).
  package init(level: Int32) {
    guard let stream = settee_gzip_open(level) else { fatalError("zlib could not allocate") }
    self.stream = stream
  }

  deinit { settee_zstream_close(stream) }

  /// The encoded bytes `chunk` gives; with `finish`, the member's end too.
  package func encode(_ chunk: [UInt8], finish: Bool = false) -> [UInt8] {
    consumed += Int64(chunk.count)
    var out: [UInt8] = []
    var offset = 0
    while true {
      var taken = 0
      var produced = 0
      let status = chunk.withUnsafeBufferPointer { input in
        room.withUnsafeMutableBufferPointer { output in
          settee_zstream_step(
            stream, input.baseAddress.map { $0 + offset }, input.count - offset, &taken,
            output.baseAddress!, output.count, &produced, finish ? 1 : 0)
        }
      }
      offset += taken
      out += room[..<produced]
      precondition(status >= 0 || status == -5, "zlib's deflate failed (\(status))")
      if status == 1 { return out }
      // Without finish: done once the input is taken and the output room was not filled.
      if !finish && offset == chunk.count && produced < room.count { return out }
      if status == -5 && offset == chunk.count { return out }
    }
  }
}

extension Gzip {
  /// CouchDB's `attachment_compression_level` (8): compressible attachments stored at it
  /// carry the digests CouchDB gives the same bytes.
  package static let attachmentLevel: Int32 = 8

  /// Whether an attachment of `contentType` is one of CouchDB's default
  /// `compressible_types` (`text/*`, `application/javascript`, `application/json`,
  /// `application/xml`), which it stores gzip-encoded.
  package static func isCompressible(contentType: String) -> Bool {
    let type = contentType.lowercased()
    return type.hasPrefix("text/") || type.hasPrefix("application/javascript")
      || type.hasPrefix("application/json") || type.hasPrefix("application/xml")
  }
}
