import SetteeCore

/// A multipart body read as it arrives (RFC 2046): each part's headers, then its data in
/// pieces, never a part whole, so that a `multipart/related` upload of any size passes
/// through bounded memory. What it holds at a time is one chunk and a delimiter's length.
package struct MultipartReader {
  /// What the body brings next.
  package enum Event {
    /// A part begins, with its headers (names lowercased).
    case part([String: String])
    /// More of the current part's data.
    case data(ArraySlice<UInt8>)
  }

  private enum State { case preamble, delimiterLine, headers, data, end }

  /// `--boundary`.
  private let delimiter: [UInt8]
  /// `CRLF--boundary`: how a part's data ends.
  private let separator: [UInt8]
  private var state = State.preamble
  private var buffer: [UInt8] = []
  /// The longest header block taken (CouchDB's parts carry two or three short headers).
  private static let maxHeaderBytes = 64 << 10

  package init(boundary: String) {
    delimiter = Array("--\(boundary)".utf8)
    separator = Array("\r\n--\(boundary)".utf8)
  }

  /// Whether the closing delimiter was read.
  package var isComplete: Bool { state == .end }

  /// Reads `bytes`, telling `handle` what they complete.
  ///
  /// - Throws: ``MultipartError`` for a body that is not multipart; what `handle` throws.
  package mutating func feed(_ bytes: some Collection<UInt8>, _ handle: (Event) throws -> Void)
    throws
  {
    buffer.append(contentsOf: bytes)
    var start = 0
    defer { buffer.removeFirst(start) }
    while true {
      switch state {
      case .preamble:
        // The first delimiter opens the body or a line of its own.
        if buffer.count - start >= delimiter.count, buffer[start...].starts(with: delimiter) {
          start += delimiter.count
          state = .delimiterLine
        } else if let found = find(separator, from: start) {
          start = found + separator.count
          state = .delimiterLine
        } else {
          // Keep what could be the start of the delimiter.
          start = max(start, buffer.count - separator.count)
          return
        }
      case .delimiterLine:
        guard buffer.count - start >= 2 else { return }
        if buffer[start] == UInt8(ascii: "-") && buffer[start + 1] == UInt8(ascii: "-") {
          state = .end
          start = buffer.count  // the epilogue is ignored
          return
        }
        // The rest of the line (transport padding) up to its CRLF, which the header
        // block's search starts with.
        guard let lineEnd = find([13, 10], from: start) else {
          if buffer.count - start > Self.maxHeaderBytes { throw malformed("a boundary line does not end") }
          return
        }
        start = lineEnd
        state = .headers
      case .headers:
        guard let end = find([13, 10, 13, 10], from: start) else {
          if buffer.count - start > Self.maxHeaderBytes {
            throw malformed("a part's headers do not end within 64 KiB")
          }
          return
        }
        var headers: [String: String] = [:]
        let text = String(decoding: buffer[(start + 2)..<max(start + 2, end)], as: UTF8.self)
        for line in text.split(separator: "\r\n") {
          guard let colon = line.firstIndex(of: ":") else { continue }
          headers[line[..<colon].lowercased()] = line[line.index(after: colon)...]
            .trimmingCharacters(in: .whitespaces)
        }
        start = end + 4
        state = .data
        try handle(.part(headers))
      case .data:
        if let end = find(separator, from: start) {
          if end > start { try handle(.data(buffer[start..<end])) }
          start = end + separator.count
          state = .delimiterLine
          continue
        }
        // All but what could be the start of the separator.
        let safe = max(start, buffer.count - separator.count + 1)
        if safe > start { try handle(.data(buffer[start..<safe])) }
        start = safe
        return
      case .end:
        start = buffer.count
        return
      }
    }
  }

  private func find(_ needle: [UInt8], from start: Int) -> Int? {
    buffer.withUnsafeBytes { $0.firstIndex(of: needle, from: start) }
  }

  private func malformed(_ reason: String) -> MultipartError {
    MultipartError(reason: reason)
  }
}
