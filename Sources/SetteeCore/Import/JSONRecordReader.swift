import Foundation

/// Splits a stream of bytes into JSON records without holding the whole stream in memory.
///
/// The format is chosen by the first byte that is not white space: `[` means one JSON array
/// whose elements are the records; anything else means NDJSON, one record a line (blank
/// lines are skipped). Each record comes with the line and column where it starts.
public struct JSONRecordReader {
  /// One record: its bytes and where it starts in the input.
  package struct Record: Sendable {
    /// The record's JSON text.
    package var bytes: [UInt8]
    /// 1-based line of the record's first byte.
    package var line: Int
    /// 1-based column (in bytes) of the record's first byte.
    package var column: Int
    /// 0-based position of the record in the input.
    package var index: Int
  }

  /// How the input holds its records.
  package enum Format: Sendable {
    /// One JSON value per line (blank lines skipped).
    case ndjson
    /// One JSON array whose elements are the records.
    case array
  }

  private let readChunk: () throws -> [UInt8]?
  private let maxRecordBytes: Int
  private var buffer: [UInt8] = []
  private var offset = 0
  private var endOfInput = false
  private var line = 1
  private var lineStart = 0  // offset of the current line's first byte in `buffer`
  private var recordIndex = 0
  private var arrayClosed = false
  /// The format, known once the first byte has been read.
  package private(set) var format: Format?
  /// How many bytes have been consumed so far (for progress).
  package private(set) var bytesConsumed = 0

  /// A reader over input that arrives in chunks (a file, standard input, a network body).
  ///
  /// - Parameters:
  ///   - maxRecordBytes: a longer record is an error, so that one bad line cannot fill memory.
  ///   - readChunk: returns the next bytes of the input, or `nil` (or empty) at its end.
  public init(maxRecordBytes: Int, readChunk: @escaping () throws -> [UInt8]?) {
    self.maxRecordBytes = maxRecordBytes
    self.readChunk = readChunk
  }

  /// The next record, or `nil` at the end of the input.
  ///
  /// - Throws: ``SetteeError`` (`invalidJSON` for a broken array, `documentTooLarge` for a
  ///   record over the limit) with its line, or what `readChunk` throws.
  package mutating func next() throws -> Record? {
    if format == nil {
      guard try skipWhitespace() else { return nil }
      if buffer[offset] == UInt8(ascii: "[") {
        format = .array
        advance(1)
      } else {
        format = .ndjson
      }
    }
    switch format! {
    case .ndjson: return try nextLine()
    case .array: return try nextElement()
    }
  }

  // MARK: - NDJSON

  private mutating func nextLine() throws -> Record? {
    guard try skipWhitespace() else { return nil }
    let startLine = line
    let column = offset - lineStart + 1
    var length = 0  // bytes of the line seen so far, from `offset`
    while true {
      // memchr: looking at each byte through the array was a fifteenth of an import.
      let newline = buffer.withUnsafeBufferPointer { bytes -> Int? in
        let from = offset + length
        guard from < bytes.count, let base = bytes.baseAddress,
          let found = memchr(base + from, Int32(UInt8(ascii: "\n")), bytes.count - from)
        else { return nil }
        return base.distance(to: found.assumingMemoryBound(to: UInt8.self))
      }
      if let newline {
        length = newline - offset
        break
      }
      length = buffer.count - offset
      if length > maxRecordBytes { throw tooLarge(startLine) }
      guard try fill() else { break }
    }
    if length > maxRecordBytes { throw tooLarge(startLine) }
    var end = offset + length
    while end > offset, isWhitespace(buffer[end - 1]) { end -= 1 }
    let record = Array(buffer[offset..<end])
    // No newline before `length`: the line count stays.
    offset += length
    bytesConsumed += length
    defer { recordIndex += 1 }
    return Record(bytes: record, line: startLine, column: column, index: recordIndex)
  }

  // MARK: - JSON array

  private mutating func nextElement() throws -> Record? {
    guard try skipWhitespace() else {
      if arrayClosed { return nil }
      throw error("unexpected end of input: the JSON array is not closed")
    }
    if arrayClosed {
      throw error("unexpected data after the end of the JSON array")
    }
    if buffer[offset] == UInt8(ascii: "]") {
      advance(1)
      arrayClosed = true
      return try nextElement()
    }
    if recordIndex > 0 {
      guard buffer[offset] == UInt8(ascii: ",") else {
        throw error("expected ',' or ']' between array elements")
      }
      advance(1)
      guard try skipWhitespace() else {
        throw error("unexpected end of input: the JSON array is not closed")
      }
    }
    let startLine = line
    let column = offset - lineStart + 1
    // Find the element's end: the delimiter after it (`,` or `]`), outside strings.
    var scan = offset
    var valueEnd = JSONValueEnd(colonEnds: false)
    while !valueEnd.advance(buffer, &scan) {
      if scan - offset > maxRecordBytes { throw tooLarge(startLine) }
      let consumed = scan - offset
      guard try fill() else {
        throw error("unexpected end of input: the JSON array is not closed")
      }
      scan = offset + consumed
    }
    if scan - offset > maxRecordBytes { throw tooLarge(startLine) }
    var end = scan
    while end > offset, isWhitespace(buffer[end - 1]) { end -= 1 }
    let record = Array(buffer[offset..<end])
    advance(scan - offset)
    defer { recordIndex += 1 }
    return Record(bytes: record, line: startLine, column: column, index: recordIndex)
  }

  // MARK: - Buffer

  /// Skips white space; returns `false` at the end of the input.
  private mutating func skipWhitespace() throws -> Bool {
    while true {
      while offset < buffer.count {
        guard isWhitespace(buffer[offset]) else { return true }
        advance(1)
      }
      guard try fill() else { return false }
    }
  }

  private func isWhitespace(_ byte: UInt8) -> Bool {
    byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r")
      || byte == UInt8(ascii: "\t")
  }

  /// Moves past `count` bytes, counting lines.
  private mutating func advance(_ count: Int) {
    for index in offset..<(offset + count) where buffer[index] == UInt8(ascii: "\n") {
      line += 1
      lineStart = index + 1
    }
    offset += count
    bytesConsumed += count
  }

  /// Reads more input, first dropping consumed bytes; returns `false` at the end.
  private mutating func fill() throws -> Bool {
    if endOfInput { return false }
    if offset > 0 && offset >= buffer.count / 2 {
      buffer.removeFirst(offset)
      lineStart -= offset
      offset = 0
    }
    guard let chunk = try readChunk(), !chunk.isEmpty else {
      endOfInput = true
      return false
    }
    buffer.append(contentsOf: chunk)
    return true
  }

  private func error(_ message: String) -> SetteeError {
    SetteeError(
      .invalidJSON, "invalid JSON: \(message)",
      location: SetteeError.Location(
        line: line, column: offset - lineStart + 1, record: recordIndex))
  }

  private func tooLarge(_ startLine: Int) -> SetteeError {
    SetteeError(
      .documentTooLarge, "record is longer than \(maxRecordBytes) bytes",
      location: SetteeError.Location(line: startLine, record: recordIndex))
  }
}
