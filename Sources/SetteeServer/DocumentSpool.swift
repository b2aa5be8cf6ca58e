import Foundation
import SetteeCore

/// JSON texts kept in a temporary file (each with its length before it), written as they
/// arrive and read back in order: a `_bulk_docs` body's documents past what is kept in
/// memory. The file has no name (``TemporaryFile``): nothing of it outlives the process.
struct DocumentSpool {
  private let file: TemporaryFile
  private var pending: [UInt8] = []
  private var readBuffer: [UInt8] = []
  private var readOffset = 0
  private var endOfFile = false

  init() throws {
    file = try TemporaryFile(for: "a _bulk_docs request")
  }

  /// Adds one text.
  mutating func append(_ text: ArraySlice<UInt8>) throws {
    withUnsafeBytes(of: UInt32(text.count).littleEndian) { pending.append(contentsOf: $0) }
    pending.append(contentsOf: text)
    if pending.count >= 1 << 20 { try flush() }
  }

  /// Ends writing and goes back to the first text.
  mutating func rewind() throws {
    try flush()
    try file.rewind()
  }

  /// Up to `count` texts in the order they were added; `nil` after the last.
  mutating func next(_ count: Int) throws -> [[UInt8]]? {
    var texts: [[UInt8]] = []
    while texts.count < count, try fill(4) {
      let length = readBuffer[readOffset..<readOffset + 4].enumerated().reduce(0) {
        $0 | Int($1.element) << (8 * $1.offset)
      }
      guard try fill(4 + length) else {
        throw SetteeError(.io, "the temporary file of a _bulk_docs request was cut short")
      }
      texts.append(Array(readBuffer[readOffset + 4..<readOffset + 4 + length]))
      readOffset += 4 + length
    }
    return texts.isEmpty ? nil : texts
  }

  /// Closes the file, which frees its space.
  func remove() {
    file.close()
  }

  private mutating func flush() throws {
    guard !pending.isEmpty else { return }
    try file.write(pending)
    pending.removeAll(keepingCapacity: true)
  }

  /// Makes `count` unread bytes available; `false` at the end of the file.
  private mutating func fill(_ count: Int) throws -> Bool {
    while readBuffer.count - readOffset < count {
      if endOfFile { return false }
      readBuffer.removeFirst(readOffset)
      readOffset = 0
      guard let data = try file.read(upTo: max(1 << 20, count)) else {
        endOfFile = true
        continue
      }
      readBuffer.append(contentsOf: data)
    }
    return true
  }
}
