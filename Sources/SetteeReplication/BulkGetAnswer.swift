import Settee
import SetteeCore

/// CouchDB's `_bulk_get` answer (`{"results": [{"id": …, "docs": [{"ok": DOC} |
/// {"error": {…}}]}]}`) read without building its documents: each `ok` document is kept as
/// the text the peer sent (to be written from it, or passed on as it is), each `error`
/// parsed. Only the answer's frame is walked here; each document's text is then read by
/// ``BulkDocument/init(text:limits:)``, which checks it whole.
package struct BulkGetAnswer {
  package var documents: [[UInt8]] = []
  package var errors: [JSONObject] = []

  /// Reads `bytes`; `nil` when they are not a `_bulk_get` answer.
  package init?(_ bytes: [UInt8]) {
    var reader = Reader(bytes: bytes)
    guard reader.answer(into: &self), reader.atEnd else { return nil }
  }

  private struct Reader {
    let bytes: [UInt8]
    var position = 0

    var atEnd: Bool {
      mutating get {
        skipSpace()
        return position == bytes.count
      }
    }

    mutating func answer(into answer: inout BulkGetAnswer) -> Bool {
      members { reader, name in
        guard name == "results" else { return reader.skipValue() }
        return reader.elements { reader in reader.result(into: &answer) }
      }
    }

    /// One element of `results`: an object whose `docs` are read.
    mutating func result(into answer: inout BulkGetAnswer) -> Bool {
      members { reader, name in
        guard name == "docs" else { return reader.skipValue() }
        return reader.elements { reader in
          reader.members { reader, name in
            switch name {
            case "ok":
              guard let text = reader.value(), text.first == UInt8(ascii: "{") else {
                return false
              }
              answer.documents.append(text)
              return true
            case "error":
              guard let text = reader.value(),
                case .object(let error)? = try? JSONParser.parse(text)
              else { return false }
              answer.errors.append(error)
              return true
            default:
              return reader.skipValue()
            }
          }
        }
      }
    }

    /// Reads an object's members, handing each name to `member`, which reads the value.
    mutating func members(_ member: (inout Reader, String) -> Bool) -> Bool {
      skipSpace()
      guard next(UInt8(ascii: "{")) else { return false }
      skipSpace()
      if next(UInt8(ascii: "}")) { return true }
      repeat {
        skipSpace()
        guard let name = name() else { return false }
        skipSpace()
        guard next(UInt8(ascii: ":")) else { return false }
        skipSpace()
        guard member(&self, name) else { return false }
        skipSpace()
      } while next(UInt8(ascii: ","))
      return next(UInt8(ascii: "}"))
    }

    /// Reads an array's elements with `element`.
    mutating func elements(_ element: (inout Reader) -> Bool) -> Bool {
      skipSpace()
      guard next(UInt8(ascii: "[")) else { return false }
      skipSpace()
      if next(UInt8(ascii: "]")) { return true }
      repeat {
        skipSpace()
        guard element(&self) else { return false }
        skipSpace()
      } while next(UInt8(ascii: ","))
      return next(UInt8(ascii: "]"))
    }

    /// A member name (read as JSON, escapes included).
    mutating func name() -> String? {
      guard let text = value(), case .string(let name)? = try? JSONParser.parse(text) else {
        return nil
      }
      return name
    }

    /// The text of the value at `position`, up to the delimiter after it (not checked: the
    /// reader of the value checks it).
    mutating func value() -> [UInt8]? {
      let start = position
      var end = JSONValueEnd(colonEnds: true)
      guard end.advance(bytes, &position) else { return nil }
      var last = position
      while last > start, bytes[last - 1].isJSONSpace { last -= 1 }
      return last > start ? Array(bytes[start..<last]) : nil
    }

    mutating func skipValue() -> Bool { value() != nil }

    mutating func next(_ byte: UInt8) -> Bool {
      guard position < bytes.count, bytes[position] == byte else { return false }
      position += 1
      return true
    }

    mutating func skipSpace() {
      while position < bytes.count, bytes[position].isJSONSpace { position += 1 }
    }
  }
}

/// A `_bulk_docs` answer, looked at before it is parsed.
package enum BulkDocsAnswer {
  /// Whether the answer is a JSON array that refuses nothing (the answer to most
  /// batches): `"error"` with its quotes can only be a member name or a whole string value
  /// there (a quote inside a string is escaped), so an array without it holds only
  /// successes. `false` means: parse it.
  package static func refusesNothing(_ bytes: UnsafeRawBufferPointer) -> Bool {
    bytes.first(where: { !$0.isJSONSpace }) == UInt8(ascii: "[")
      && bytes.last(where: { !$0.isJSONSpace }) == UInt8(ascii: "]")
      && bytes.firstIndex(of: Array(#""error""#.utf8)) == nil
  }
}
