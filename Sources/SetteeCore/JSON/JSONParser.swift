import Foundation

/// A strict, fast JSON parser (RFC 8259) over UTF-8 bytes.
///
/// It rejects what would lose data instead of guessing: invalid UTF-8, lone surrogate
/// escapes, duplicate member names and nesting deeper than `maxDepth` are errors that
/// give the line and column.
public struct JSONParser: ~Copyable {
  /// The nesting limit used when none is given; it keeps recursion far from the stack's end.
  public static let defaultMaxDepth = 512

  private let bytes: UnsafeBufferPointer<UInt8>
  private var position = 0
  private let maxDepth: Int
  /// Whether a repeated member name replaces the earlier member instead of being refused.
  private let lastDuplicateWins: Bool

  private init(bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int, lastDuplicateWins: Bool = false) {
    self.bytes = bytes
    self.maxDepth = maxDepth
    self.lastDuplicateWins = lastDuplicateWins
  }

  /// Parses one JSON value that fills the whole input (surrounding white space allowed).
  ///
  /// - Throws: ``SetteeError`` with code `invalidJSON` or `nestingTooDeep`.
  /// - Complexity: O(n) in the input's size.
  package static func parse(
    _ bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int = defaultMaxDepth
  ) throws -> JSON {
    try parseTyped(bytes, maxDepth: maxDepth)
  }

  /// Typed throws inside the parser avoids boxing errors; the public API throws plain
  /// `Error`s because Swift 6.3's compiler crashes on a `do`/`catch` with a `where`
  /// clause around a typed-throwing call.
  static func parseTyped(
    _ bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int, lastDuplicateWins: Bool = false
  ) throws(SetteeError) -> JSON {
    var parser = JSONParser(bytes: bytes, maxDepth: maxDepth, lastDuplicateWins: lastDuplicateWins)
    parser.skipWhitespace()
    let value = try parser.parseValue(depth: 0)
    parser.skipWhitespace()
    if parser.position != bytes.count {
      throw parser.error("unexpected \(parser.describeCurrent()) after the JSON value")
    }
    return value
  }

  /// Parses a request rather than data: a member named twice keeps its last value, as
  /// CouchDB reads a query (`{"a": 1, "a": 2}` is `{"a": 2}`). Documents are parsed with
  /// `parse(_:maxDepth:)`, which refuses the repetition.
  package static func parseKeepingLastDuplicate(_ bytes: [UInt8], maxDepth: Int) throws -> JSON {
    try bytes.withUnsafeBufferPointer { buffer throws(SetteeError) -> JSON in
      try parseTyped(buffer, maxDepth: maxDepth, lastDuplicateWins: true)
    }
  }

  /// Parses JSON from a byte array.
  public static func parse(_ bytes: [UInt8], maxDepth: Int = defaultMaxDepth) throws -> JSON {
    try bytes.withUnsafeBufferPointer { try parse($0, maxDepth: maxDepth) }
  }

  /// Parses JSON text.
  public static func parse(_ text: String, maxDepth: Int = defaultMaxDepth) throws -> JSON {
    var text = text
    return try text.withUTF8 { try parse($0, maxDepth: maxDepth) }
  }

  // MARK: - Values

  private mutating func parseValue(depth: Int) throws(SetteeError) -> JSON {
    guard position < bytes.count else { throw error("unexpected end of input") }
    switch bytes[position] {
    case UInt8(ascii: "{"): return .object(try parseObject(depth: depth + 1))
    case UInt8(ascii: "["): return .array(try parseArray(depth: depth + 1))
    case UInt8(ascii: "\""): return .string(try parseString())
    case UInt8(ascii: "t"):
      try expectLiteral("true")
      return .bool(true)
    case UInt8(ascii: "f"):
      try expectLiteral("false")
      return .bool(false)
    case UInt8(ascii: "n"):
      try expectLiteral("null")
      return .null
    case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
      return try parseNumber()
    default:
      throw error("unexpected \(describeCurrent())")
    }
  }

  private mutating func parseObject(depth: Int) throws(SetteeError) -> JSONObject {
    try checkDepth(depth)
    position += 1  // {
    var members: [JSONObject.Member] = []
    skipWhitespace()
    if position < bytes.count, bytes[position] == UInt8(ascii: "}") {
      position += 1
      return JSONObject(uniqueMembers: members)
    }
    var seen: Set<ByteName>? = nil
    // Room for a typical document's members at the top level (growing 1, 2, 4, 8 moved,
    // and retained, every member three times); nested objects are usually small.
    if depth == 1 { members.reserveCapacity(8) }
    while true {
      skipWhitespace()
      guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else {
        throw error("expected a member name in quotes, found \(describeCurrent())")
      }
      let keyStart = position
      let key = try parseString()
      // Names compare byte for byte: canonically equivalent spellings are distinct names.
      if members.count < 16 {
        if members.contains(where: { $0.key.hasSameBytes(as: key) }) {
          try repeated(key, at: keyStart, in: &members)
        }
      } else {
        if seen == nil {
          var names = Set<ByteName>(minimumCapacity: 256)
          for member in members { names.insert(ByteName(member.key)) }
          seen = names
        }
        if seen!.insert(ByteName(key)).inserted == false {
          try repeated(key, at: keyStart, in: &members)
        }
      }
      skipWhitespace()
      guard position < bytes.count, bytes[position] == UInt8(ascii: ":") else {
        throw error("expected ':' after member name, found \(describeCurrent())")
      }
      position += 1
      skipWhitespace()
      let value = try parseValue(depth: depth)
      members.append(JSONObject.Member(key: key, value: value))
      skipWhitespace()
      guard position < bytes.count else { throw error("unexpected end of input in an object") }
      switch bytes[position] {
      case UInt8(ascii: ","): position += 1
      case UInt8(ascii: "}"):
        position += 1
        return JSONObject(uniqueMembers: members)
      default: throw error("expected ',' or '}' in an object, found \(describeCurrent())")
      }
    }
  }

  private mutating func parseArray(depth: Int) throws(SetteeError) -> [JSON] {
    try checkDepth(depth)
    position += 1  // [
    var elements: [JSON] = []
    skipWhitespace()
    if position < bytes.count, bytes[position] == UInt8(ascii: "]") {
      position += 1
      return elements
    }
    while true {
      skipWhitespace()
      elements.append(try parseValue(depth: depth))
      skipWhitespace()
      guard position < bytes.count else { throw error("unexpected end of input in an array") }
      switch bytes[position] {
      case UInt8(ascii: ","): position += 1
      case UInt8(ascii: "]"):
        position += 1
        return elements
      default: throw error("expected ',' or ']' in an array, found \(describeCurrent())")
      }
    }
  }

  // MARK: - Strings

  private mutating func parseString() throws(SetteeError) -> String {
    position += 1  // opening quote
    let start = position
    var isASCII = true
    while position < bytes.count {
      let byte = bytes[position]
      if byte == UInt8(ascii: "\"") {
        let slice = UnsafeBufferPointer(rebasing: bytes[start..<position])
        position += 1
        if isASCII { return String(decoding: slice, as: UTF8.self) }
        guard let string = String(validatingUTF8: slice) else {
          position = start
          throw error("invalid UTF-8 in a string")
        }
        return string
      }
      if byte == UInt8(ascii: "\\") { return try parseEscapedString(from: start) }
      if byte < 0x20 { throw error("unescaped control character in a string") }
      if byte >= 0x80 { isASCII = false }
      position += 1
    }
    throw error("unterminated string")
  }

  /// The slow path for strings that contain escapes.
  private mutating func parseEscapedString(from start: Int) throws(SetteeError) -> String {
    var buffer = [UInt8](UnsafeBufferPointer(rebasing: bytes[start..<position]))
    while position < bytes.count {
      let byte = bytes[position]
      switch byte {
      case UInt8(ascii: "\""):
        position += 1
        guard let string = String(validatingUTF8: buffer) else {
          position = start
          throw error("invalid UTF-8 in a string")
        }
        return string
      case UInt8(ascii: "\\"):
        position += 1
        guard position < bytes.count else { break }
        let escape = bytes[position]
        position += 1
        switch escape {
        case UInt8(ascii: "\""): buffer.append(UInt8(ascii: "\""))
        case UInt8(ascii: "\\"): buffer.append(UInt8(ascii: "\\"))
        case UInt8(ascii: "/"): buffer.append(UInt8(ascii: "/"))
        case UInt8(ascii: "b"): buffer.append(0x08)
        case UInt8(ascii: "f"): buffer.append(0x0C)
        case UInt8(ascii: "n"): buffer.append(0x0A)
        case UInt8(ascii: "r"): buffer.append(0x0D)
        case UInt8(ascii: "t"): buffer.append(0x09)
        case UInt8(ascii: "u"):
          let scalar = try parseUnicodeEscape()
          buffer.append(contentsOf: String(Character(scalar)).utf8)
        default:
          position -= 2
          throw error("invalid escape '\\\(String(UnicodeScalar(escape)))' in a string")
        }
      default:
        if byte < 0x20 { throw error("unescaped control character in a string") }
        buffer.append(byte)
        position += 1
      }
    }
    throw error("unterminated string")
  }

  private mutating func parseUnicodeEscape() throws(SetteeError) -> Unicode.Scalar {
    let escapeStart = position - 2
    let high = try parseHex4()
    if (0xD800...0xDBFF).contains(high) {
      guard position + 6 <= bytes.count, bytes[position] == UInt8(ascii: "\\"),
        bytes[position + 1] == UInt8(ascii: "u")
      else {
        position = escapeStart
        throw error("lone surrogate escape in a string")
      }
      position += 2
      let low = try parseHex4()
      guard (0xDC00...0xDFFF).contains(low) else {
        position = escapeStart
        throw error("lone surrogate escape in a string")
      }
      let value = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)
      return Unicode.Scalar(value)!
    }
    guard let scalar = Unicode.Scalar(high) else {
      position = escapeStart
      throw error("lone surrogate escape in a string")
    }
    return scalar
  }

  private mutating func parseHex4() throws(SetteeError) -> UInt32 {
    guard position + 4 <= bytes.count else { throw error("truncated \\u escape") }
    var value: UInt32 = 0
    for _ in 0..<4 {
      let byte = bytes[position]
      let digit: UInt8
      switch byte {
      case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
      case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
      case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
      default: throw error("invalid hex digit in a \\u escape")
      }
      value = value << 4 | UInt32(digit)
      position += 1
    }
    return value
  }

  // MARK: - Numbers

  private mutating func parseNumber() throws(SetteeError) -> JSON {
    let start = position
    var negative = false
    if bytes[position] == UInt8(ascii: "-") {
      negative = true
      position += 1
    }
    guard position < bytes.count, isDigit(bytes[position]) else {
      throw error("expected a digit in a number")
    }
    // Integer part, accumulated as a negative value so that Int64.min fits.
    var accumulator: Int64 = 0
    var overflow = false
    if bytes[position] == UInt8(ascii: "0") {
      position += 1
      if position < bytes.count, isDigit(bytes[position]) {
        throw error("leading zeros are not allowed in a number")
      }
    } else {
      while position < bytes.count, isDigit(bytes[position]) {
        let digit = Int64(bytes[position] &- UInt8(ascii: "0"))
        if !overflow {
          let (times10, o1) = accumulator.multipliedReportingOverflow(by: 10)
          let (next, o2) = times10.subtractingReportingOverflow(digit)
          if o1 || o2 { overflow = true } else { accumulator = next }
        }
        position += 1
      }
    }
    var isInteger = true
    if position < bytes.count, bytes[position] == UInt8(ascii: ".") {
      isInteger = false
      position += 1
      guard position < bytes.count, isDigit(bytes[position]) else {
        throw error("expected a digit after the decimal point")
      }
      while position < bytes.count, isDigit(bytes[position]) { position += 1 }
    }
    if position < bytes.count, bytes[position] | 0x20 == UInt8(ascii: "e") {
      isInteger = false
      position += 1
      if position < bytes.count,
        bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-")
      {
        position += 1
      }
      guard position < bytes.count, isDigit(bytes[position]) else {
        throw error("expected a digit in the exponent")
      }
      while position < bytes.count, isDigit(bytes[position]) { position += 1 }
    }
    if isInteger && !overflow {
      if negative {
        // "-0" keeps its sign as the double -0.0.
        return accumulator == 0 ? .double(-0.0) : .int(accumulator)
      }
      if accumulator != Int64.min { return .int(-accumulator) }
    }
    let text = String(
      decoding: UnsafeBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
    // Out of range one way only: a number too large for a double (it would become
    // infinity) and one too small (a non-zero number that would become 0) are both
    // refused, never silently changed.
    guard let value = Double(text), value.isFinite,
      value != 0 || !hasNonZeroDigit(bytes[start..<position])
    else {
      position = start
      throw error(
        "number \(text) is out of range (a double holds magnitudes from about 5e-324 to 1.8e308)")
    }
    // An integer past 64 bits keeps its digits: a document comes back as it was written.
    return isInteger ? .largeInteger(text) : .double(value)
  }

  // MARK: - Helpers

  /// Whether a number's mantissa (before any exponent) holds a digit other than 0.
  private func hasNonZeroDigit(_ number: Slice<UnsafeBufferPointer<UInt8>>) -> Bool {
    for byte in number {
      if byte | 0x20 == UInt8(ascii: "e") { return false }
      if byte > UInt8(ascii: "0") && byte <= UInt8(ascii: "9") { return true }
    }
    return false
  }

  @inline(__always)
  private func isDigit(_ byte: UInt8) -> Bool { byte &- UInt8(ascii: "0") < 10 }

  @inline(__always)
  private mutating func skipWhitespace() {
    while position < bytes.count {
      switch bytes[position] {
      case UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t"):
        position += 1
      default: return
      }
    }
  }

  private mutating func expectLiteral(_ literal: StaticString) throws(SetteeError) {
    let count = literal.utf8CodeUnitCount
    guard position + count <= bytes.count else { throw error("unexpected \(describeCurrent())") }
    let matches = literal.withUTF8Buffer { expected in
      (0..<count).allSatisfy { bytes[position + $0] == expected[$0] }
    }
    guard matches else { throw error("unexpected \(describeCurrent())") }
    position += count
  }

  private func checkDepth(_ depth: Int) throws(SetteeError) {
    if depth > maxDepth {
      throw SetteeError(
        .nestingTooDeep, "JSON nests deeper than \(maxDepth) levels", location: location())
    }
  }

  private func describeCurrent() -> String {
    guard position < bytes.count else { return "end of input" }
    let byte = bytes[position]
    if byte >= 0x20 && byte < 0x7F { return "'\(Character(UnicodeScalar(byte)))'" }
    return "byte 0x\(String(byte, radix: 16))"
  }

  private func location() -> SetteeError.Location {
    var line = 1
    var lineStart = 0
    for index in 0..<min(position, bytes.count) where bytes[index] == UInt8(ascii: "\n") {
      line += 1
      lineStart = index + 1
    }
    return SetteeError.Location(line: line, column: position - lineStart + 1)
  }

  private func error(_ message: String) -> SetteeError {
    SetteeError(.invalidJSON, "invalid JSON: \(message)", location: location())
  }

  /// A member name seen before in this object: refused, or the earlier member dropped.
  private mutating func repeated(
    _ key: String, at keyStart: Int, in members: inout [JSONObject.Member]
  ) throws(SetteeError) {
    guard lastDuplicateWins else { throw duplicateKey(key, at: keyStart) }
    members.removeAll { $0.key.hasSameBytes(as: key) }
  }

  private mutating func duplicateKey(_ key: String, at keyStart: Int) -> SetteeError {
    position = keyStart
    return error("duplicate member name \(JSONWriter.string(.string(key))) in an object")
  }
}
