import SetteeCore

/// Reads a `_bulk_docs` body (`{"docs": [ … ], "new_edits": …}`) as it arrives, a chunk at a
/// time: each document of `docs` comes out as its own JSON text, every other member of the
/// object as a parsed value, so that the body is never held whole and never parsed into one
/// tree. Members may come in any order (PouchDB sends `new_edits` after `docs`).
///
/// The scanner finds where each value ends (the first `,`, `:`, `]` or `}` outside strings
/// at its own depth) and leaves the value's grammar to ``JSONParser``; what lies between
/// values (`{`, keys, `:`, `,`, `]`, `}`) it checks itself.
package struct BulkDocsScanner {
  package enum Event {
    /// The `docs` array begins.
    case docsBegin
    /// One element of `docs`: its JSON text.
    case document(ArraySlice<UInt8>)
    /// Any other member of the body's object.
    case member(String, JSON)
  }

  private enum State {
    case start
    case beforeKey(first: Bool)
    case key
    case beforeValue(String)
    case value(String)
    case beforeDocument(first: Bool)
    case document
    case afterValue
    case end
  }

  private var state = State.start
  private var buffer: [UInt8] = []
  /// The first byte not yet consumed.
  private var offset = 0
  // Where the scan of the current value is, kept across chunks.
  private var scan = 0
  private var valueEnd = JSONValueEnd(colonEnds: true)
  private var sawDocs = false

  package init() {}

  /// Consumes `chunk`, reporting what it completes.
  package mutating func feed(_ chunk: some Collection<UInt8>, _ emit: (Event) throws -> Void) throws
  {
    buffer.append(contentsOf: chunk)
    while try step(emit) {}
    // Drop what was consumed once it is most of the buffer.
    if offset > 65_536 && offset * 2 > buffer.count {
      buffer.removeFirst(offset)
      scan -= offset
      offset = 0
    }
  }

  /// Checks that the body ended where its object ends.
  package func finish() throws {
    guard case .end = state else { throw Self.invalid("the body ends before its JSON object does") }
  }

  // MARK: - Steps

  /// Takes one step; `false` when more input is needed.
  private mutating func step(_ emit: (Event) throws -> Void) throws -> Bool {
    switch state {
    case .start:
      guard let byte = nextNonSpace() else { return false }
      guard byte == UInt8(ascii: "{") else {
        throw CouchError(.badRequest, "bad_request", "Request body must be a JSON object")
      }
      offset += 1
      state = .beforeKey(first: true)
    case .beforeKey(let first):
      guard let byte = nextNonSpace() else { return false }
      if first && byte == UInt8(ascii: "}") {
        offset += 1
        state = .end
      } else {
        guard byte == UInt8(ascii: "\"") else { throw Self.invalid("expected a member name") }
        beginValue()
        state = .key
      }
    case .key:
      guard let text = scanValue() else { return false }
      guard buffer[offset] == UInt8(ascii: ":"), case .string(let key)? = try? Self.parse(text)
      else { throw Self.invalid("expected a member name and ':'") }
      offset += 1
      state = .beforeValue(key)
    case .beforeValue(let key):
      guard let byte = nextNonSpace() else { return false }
      if key == "docs" {
        guard byte == UInt8(ascii: "["), !sawDocs else {
          throw CouchError(.badRequest, "bad_request", "`docs` parameter must be an array.")
        }
        sawDocs = true
        offset += 1
        try emit(.docsBegin)
        state = .beforeDocument(first: true)
      } else {
        beginValue()
        state = .value(key)
      }
    case .value(let key):
      guard let text = scanValue() else { return false }
      let value: JSON
      do { value = try Self.parse(text) } catch let error as SetteeError {
        throw Self.invalid("\(key): \(error.message)")
      }
      try emit(.member(key, value))
      try afterValue()
    case .beforeDocument(let first):
      guard let byte = nextNonSpace() else { return false }
      if byte == UInt8(ascii: "]") {
        guard first else { throw Self.invalid("a ',' before ']' in docs") }
        offset += 1
        state = .afterValue
      } else {
        beginValue()
        state = .document
      }
    case .document:
      guard let text = scanValue() else { return false }
      try emit(.document(text))
      switch buffer[offset] {
      case UInt8(ascii: ","): state = .beforeDocument(first: false)
      case UInt8(ascii: "]"): state = .afterValue
      default: throw Self.invalid("expected ',' or ']' between documents")
      }
      offset += 1
    case .afterValue:
      guard nextNonSpace() != nil else { return false }
      try afterValue()
    case .end:
      guard nextNonSpace() != nil else { return false }
      throw Self.invalid("data after the end of the JSON object")
    }
    return true
  }

  /// At the delimiter after a member's value: `,` and the next member, or `}` and the end.
  private mutating func afterValue() throws {
    switch buffer[offset] {
    case UInt8(ascii: ","): state = .beforeKey(first: false)
    case UInt8(ascii: "}"): state = .end
    default: throw Self.invalid("expected ',' or '}' after a member")
    }
    offset += 1
  }

  /// Skips white space; the next byte, or `nil` when the buffer is used up.
  private mutating func nextNonSpace() -> UInt8? {
    while offset < buffer.count {
      switch buffer[offset] {
      case UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t"):
        offset += 1
      default: return buffer[offset]
      }
    }
    return nil
  }

  private mutating func beginValue() {
    scan = offset
    valueEnd = JSONValueEnd(colonEnds: true)
  }

  /// The value that starts at `offset`, once its delimiter has arrived (`offset` then points
  /// at the delimiter); `nil` until then.
  private mutating func scanValue() -> ArraySlice<UInt8>? {
    valueEnd.advance(buffer, &scan) ? takeValue() : nil
  }

  private mutating func takeValue() -> ArraySlice<UInt8> {
    var end = scan
    while end > offset,
      [UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t")].contains(
        buffer[end - 1])
    {
      end -= 1
    }
    let value = buffer[offset..<end]
    offset = scan
    return value
  }

  /// Parses one value's text.
  package static func parse(_ text: ArraySlice<UInt8>) throws -> JSON {
    try text.withUnsafeBufferPointer { try JSONParser.parse($0) }
  }

  static func invalid(_ message: String) -> CouchError {
    CouchError(.badRequest, "bad_request", "invalid UTF-8 JSON: \(message)")
  }
}
