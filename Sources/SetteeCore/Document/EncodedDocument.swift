import Foundation

/// A document read straight from JSON text into the form it is stored in: its `_id`, `_rev`
/// and `_deleted`, and its body printed as ``JSONWriter`` prints it.
///
/// An import reads every record this way first: parsing each record into ``JSON`` values,
/// checking them, printing them again and freeing them was most of an import's own work.
/// The reading answers only for text it can answer exactly; for anything else (an escape
/// in a string, a name starting with `_` other than the three special ones, a number it
/// would have to reformat and cannot, deep nesting, a duplicate name, an error of any kind)
/// it gives `nil`, and the caller parses the text, whose rules then give the document or
/// the error. The body it makes is byte for byte what ``Document/init(validating:limits:)``
/// and ``Document/encodedBody(limits:)`` make of the same text.
package struct EncodedDocument: Sendable, Hashable {
  /// The `_id` member, if any.
  package var id: String?
  /// The `_rev` member, if any.
  package var rev: RevisionID?
  /// The `_deleted` member.
  package var isDeleted: Bool
  /// The other members, printed as a JSON object.
  package var body: [UInt8]
  /// The revision and its ancestors, newest first, when the text has `_revisions` (a
  /// peer's document for a `new_edits: false` write); `rev` is then their first.
  package var history: [RevisionID]?

  /// Reads `text` (one JSON object); `nil` when it must be parsed instead.
  package init?(text: UnsafeBufferPointer<UInt8>, limits: DocumentLimits = .default) {
    // Containers nested well within both the parser's and the validation's limits (a limit
    // too small for any document is the parser's to report).
    guard limits.maxNestingDepth >= 2 else { return nil }
    var reader = Reader(text: text, maxDepth: min(limits.maxNestingDepth - 2, 32))
    guard let document = reader.document(), document.body.count <= limits.maxDocumentBytes
    else { return nil }
    self = document
  }

  /// A document of these parts (`body` printed as ``JSONWriter`` prints it).
  package init(id: String?, rev: RevisionID?, isDeleted: Bool, body: [UInt8]) {
    self.id = id
    self.rev = rev
    self.isDeleted = isDeleted
    self.body = body
  }

  private struct Reader {
    let text: UnsafeBufferPointer<UInt8>
    let maxDepth: Int
    var position = 0
    var output: [UInt8] = []
    /// The member names of the objects being read (content ranges in `text`).
    var names: [Range<Int>] = []

    init(text: UnsafeBufferPointer<UInt8>, maxDepth: Int) {
      self.text = text
      self.maxDepth = maxDepth
      output.reserveCapacity(text.count)
      names.reserveCapacity(32)
    }

    mutating func document() -> EncodedDocument? {
      skipSpace()
      guard next(UInt8(ascii: "{")) else { return nil }
      var id: String?
      var rev: RevisionID?
      var deleted = false
      var revisions: JSON?
      output.append(UInt8(ascii: "{"))
      var first = true
      skipSpace()
      if !next(UInt8(ascii: "}")) {
        repeat {
          skipSpace()
          guard let name = string(), isNewName(name, frame: 0) else { return nil }
          skipSpace()
          guard next(UInt8(ascii: ":")) else { return nil }
          skipSpace()
          let nameBytes = UnsafeBufferPointer(rebasing: text[name])
          if nameBytes.first == UInt8(ascii: "_") {
            if nameBytes.hasSameBytes(as: "_id") {
              guard let value = string() else { return nil }
              let text = String(decoding: self.text[value], as: UTF8.self)
              guard (try? Document.validateID(text)) != nil else { return nil }
              id = text
            } else if nameBytes.hasSameBytes(as: "_rev") {
              guard let value = string(),
                let parsed = try? RevisionID(parsing: String(decoding: text[value], as: UTF8.self))
              else { return nil }
              rev = parsed
            } else if nameBytes.hasSameBytes(as: "_revisions") {
              // Read as any value (checked and printed), then taken back out of the body.
              let start = output.count
              guard value(depth: 2),
                let parsed = try? output[start...].withUnsafeBufferPointer({
                  try JSONParser.parse($0, maxDepth: 3)
                })
              else { return nil }
              output.removeSubrange(start...)
              revisions = parsed
            } else if nameBytes.hasSameBytes(as: "_deleted") {
              if skip("true") {
                deleted = true
              } else if skip("false") {
                deleted = false
              } else {
                return nil
              }
            } else {
              return nil
            }
          } else {
            if !first { output.append(UInt8(ascii: ",")) }
            first = false
            appendString(name)
            output.append(UInt8(ascii: ":"))
            guard value(depth: 2) else { return nil }
          }
          skipSpace()
        } while next(UInt8(ascii: ","))
        guard next(UInt8(ascii: "}")) else { return nil }
      }
      output.append(UInt8(ascii: "}"))
      skipSpace()
      guard position == text.count else { return nil }
      var document = EncodedDocument(id: id, rev: rev, isDeleted: deleted, body: output)
      if let revisions {
        // As Document.replicated reads them; any error is the slow path's to give.
        guard let id,
          let history = try? Document.parseRevisions(revisions, documentID: id),
          rev == nil || rev == history[0]
        else { return nil }
        document.rev = history[0]
        document.history = history
      }
      return document
    }

    /// Copies the value at `position`, as JSONWriter prints it.
    mutating func value(depth: Int) -> Bool {
      guard position < text.count else { return false }
      switch text[position] {
      case UInt8(ascii: "\""):
        guard let content = string() else { return false }
        appendString(content)
        return true
      case UInt8(ascii: "{"):
        return container(closing: UInt8(ascii: "}"), depth: depth)
      case UInt8(ascii: "["):
        return container(closing: UInt8(ascii: "]"), depth: depth)
      case UInt8(ascii: "t"):
        return literal("true")
      case UInt8(ascii: "f"):
        return literal("false")
      case UInt8(ascii: "n"):
        return literal("null")
      default:
        return number()
      }
    }

    /// Copies the object or array whose opening bracket is at `position`, up to `close`:
    /// members (names checked for duplicates) or elements.
    mutating func container(closing close: UInt8, depth: Int) -> Bool {
      guard depth < maxDepth else { return false }
      let isObject = close == UInt8(ascii: "}")
      output.append(text[position])
      position += 1
      let frame = names.count
      defer { names.removeSubrange(frame...) }
      skipSpace()
      if next(close) {
        output.append(close)
        return true
      }
      repeat {
        skipSpace()
        if isObject {
          guard let name = string(), isNewName(name, frame: frame) else { return false }
          appendString(name)
          skipSpace()
          guard next(UInt8(ascii: ":")) else { return false }
          output.append(UInt8(ascii: ":"))
          skipSpace()
        }
        guard value(depth: depth + 1) else { return false }
        skipSpace()
        if next(close) {
          output.append(close)
          return true
        }
        output.append(UInt8(ascii: ","))
      } while next(UInt8(ascii: ","))
      return false
    }

    /// Reads the string at `position` (which must have no escape, no control character and
    /// only valid UTF-8); returns its content's range.
    mutating func string() -> Range<Int>? {
      guard next(UInt8(ascii: "\"")) else { return nil }
      let start = position
      var ascii = true
      while position < text.count {
        let byte = text[position]
        if byte == UInt8(ascii: "\"") {
          let content = start..<position
          position += 1
          if !ascii && !UnsafeBufferPointer(rebasing: text[content]).isValidUTF8 {
            return nil
          }
          return content
        }
        if byte == UInt8(ascii: "\\") || byte < 0x20 { return nil }
        if byte >= 0x80 { ascii = false }
        position += 1
      }
      return nil
    }

    /// Whether `name` differs from the names read so far in the object whose names start
    /// at `frame`; records it.
    mutating func isNewName(_ name: Range<Int>, frame: Int) -> Bool {
      let base = text.baseAddress!
      for index in frame..<names.count {
        let other = names[index]
        if other.count == name.count
          && memcmp(base + other.lowerBound, base + name.lowerBound, name.count) == 0
        {
          return false
        }
      }
      names.append(name)
      return true
    }

    /// Copies a number: an integer of up to 18 digits as written (JSONWriter prints the
    /// same digits), any other through JSONParser and JSONWriter, as the slow path does.
    mutating func number() -> Bool {
      let start = position
      while position < text.count, Reader.isNumberByte(text[position]) { position += 1 }
      let token = UnsafeBufferPointer(rebasing: text[start..<position])
      let negative = token.first == UInt8(ascii: "-")
      let digits = UnsafeBufferPointer(rebasing: token[(negative ? 1 : 0)...])
      let plain =
        !digits.isEmpty && digits.count <= 18
        && digits.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
        && (digits[0] != UInt8(ascii: "0") || (digits.count == 1 && !negative))
      if plain {
        output.append(contentsOf: token)
        return true
      }
      guard !token.isEmpty, let value = try? JSONParser.parse(token) else { return false }
      switch value {
      case .int, .largeInteger: break
      case .double(let number) where number.isFinite: break
      default: return false
      }
      JSONWriter.write(value, into: &output)
      return true
    }

    static func isNumberByte(_ byte: UInt8) -> Bool {
      switch byte {
      case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "+"),
        UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"):
        return true
      default:
        return false
      }
    }

    /// Reads `word` at `position`, if it is there.
    mutating func skip(_ word: StaticString) -> Bool {
      let count = word.utf8CodeUnitCount
      guard position + count <= text.count,
        UnsafeBufferPointer(rebasing: text[position..<(position + count)]).elementsEqual(
          UnsafeBufferPointer(start: word.utf8Start, count: count))
      else { return false }
      position += count
      return true
    }

    /// Copies `word` (`true`, `false` or `null`), if it is at `position`.
    mutating func literal(_ word: StaticString) -> Bool {
      guard skip(word) else { return false }
      output.append(
        contentsOf: UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount))
      return true
    }

    /// Writes a string read by ``string()``: it needs no escape, so it is its own text.
    mutating func appendString(_ content: Range<Int>) {
      output.append(UInt8(ascii: "\""))
      output.append(contentsOf: UnsafeBufferPointer(rebasing: text[content]))
      output.append(UInt8(ascii: "\""))
    }

    mutating func next(_ byte: UInt8) -> Bool {
      guard position < text.count, text[position] == byte else { return false }
      position += 1
      return true
    }

    mutating func skipSpace() {
      while position < text.count, text[position].isJSONSpace { position += 1 }
    }
  }
}
