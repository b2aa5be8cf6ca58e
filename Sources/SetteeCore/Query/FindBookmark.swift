import Foundation

/// Where a page of `_find` results ended, as the opaque `bookmark` token CouchDB's
/// responses carry: the sort values and id of the last result (so the next page starts
/// after it, even when documents were written in between), or, for queries ordered by
/// full-text relevance, how many results came before.
package enum FindBookmark: Sendable, Hashable {
  /// After the result whose sort values (`nil`: the field is missing) and id these are.
  case after(keys: [JSON?], id: String)
  /// After this many results (relevance order has no stable key).
  case skipped(Int)

  /// CouchDB's bookmark for "no position": a query without one starts at the beginning.
  package static let none = "nil"

  /// The token for this position of a query sorted by `sort`.
  package func token(sort: [FindQuery.SortField]) -> String {
    var object: JSONObject = ["v": 1, "sort": .array(sort.map(Self.describe))]
    switch self {
    case .after(let keys, let id):
      object["keys"] = .array(keys.map { $0.map { .array([$0]) } ?? .array([]) })
      object["id"] = .string(id)
    case .skipped(let count):
      object["skip"] = .int(Int64(count))
    }
    return FindBookmark.base64URL(JSONWriter.bytes(.object(object)))
  }

  /// Base64 as URLs take it (RFC 4648, section 5): `-` and `_` for `+` and `/`, no
  /// padding. Byte by byte: Foundation's `replacingOccurrences` goes through NSString on
  /// Linux, which cost a `settee find` process 3% of its instructions.
  package static func base64URL(_ bytes: [UInt8]) -> String {
    // Written out: every page of a find ends with a bookmark, and Foundation's encoder
    // (through `Data`, then a pass to swap the alphabet) cost a one-document `_find` 8%
    // of its time.
    let count = (bytes.count * 4 + 2) / 3
    return String(unsafeUninitializedCapacity: count) { output in
      var written = 0
      func put(_ sextet: UInt8) {
        output[written] = base64URLAlphabet[Int(sextet)]
        written += 1
      }
      var index = 0
      while index + 3 <= bytes.count {
        let (a, b, c) = (bytes[index], bytes[index + 1], bytes[index + 2])
        put(a >> 2)
        put((a & 0x03) << 4 | b >> 4)
        put((b & 0x0F) << 2 | c >> 6)
        put(c & 0x3F)
        index += 3
      }
      switch bytes.count - index {
      case 1:
        put(bytes[index] >> 2)
        put((bytes[index] & 0x03) << 4)
      case 2:
        let (a, b) = (bytes[index], bytes[index + 1])
        put(a >> 2)
        put((a & 0x03) << 4 | b >> 4)
        put((b & 0x0F) << 2)
      default: break
      }
      return written
    }
  }

  private static let base64URLAlphabet: [UInt8] = Array(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

  /// The bytes of a ``base64URL(_:)`` token; `nil` when it is not base64.
  package static func bytes(base64URL token: String) -> [UInt8]? {
    var base64 = token.utf8.map { byte in
      switch byte {
      case UInt8(ascii: "-"): UInt8(ascii: "+")
      case UInt8(ascii: "_"): UInt8(ascii: "/")
      default: byte
      }
    }
    base64 += repeatElement(UInt8(ascii: "="), count: (4 - base64.count % 4) % 4)
    return Data(base64Encoded: Data(base64)).map(Array.init)
  }

  /// The position a token names, for a query sorted by `sort`; `nil` for CouchDB's `"nil"`.
  ///
  /// - Throws: ``SetteeError`` with code `invalidQuery` for a token Settee did not give, or
  ///   one given for a query with another sort.
  package static func decode(_ token: String, sort: [FindQuery.SortField]) throws -> FindBookmark? {
    if token == none || token.isEmpty { return nil }
    func invalid(_ why: String) -> SetteeError {
      SetteeError(.invalidQuery, "bookmark \(quoted(token)) \(why)")
    }
    guard let data = bytes(base64URL: token),
      case .object(let object)? = try? JSONParser.parse(data),
      object["v"] == 1
    else { throw invalid("is not one that a Settee _find response gave") }
    guard object["sort"] == .array(sort.map(describe)) else {
      throw invalid("belongs to a query with another sort; page with the same query")
    }
    if case .int(let count)? = object["skip"], count >= 0 {
      return .skipped(Int(count))
    }
    guard case .array(let keys)? = object["keys"], keys.count == sort.count,
      case .string(let id)? = object["id"]
    else { throw invalid("is not one that a Settee _find response gave") }
    return .after(
      keys: try keys.map { key in
        guard case .array(let boxed) = key, boxed.count <= 1 else {
          throw invalid("is not one that a Settee _find response gave")
        }
        return boxed.first
      }, id: id)
  }

  static func describe(_ field: FindQuery.SortField) -> JSON {
    .array([.array(field.path.components.map(JSON.string)), .bool(field.descending)])
  }

  /// Whether `document` comes after this position in the order of `sort` (for the
  /// in-memory path; the SQL path writes the same test, ``QueryPlanner``).
  package func precedes(_ document: Document, sort: [FindQuery.SortField]) -> Bool {
    guard case .after(let keys, let id) = self else { return true }
    let json = JSON.object(document.json)
    for (field, key) in zip(sort, keys) {
      let order = Matcher.compareKeys(Matcher.sortKey(json, field), key)
      if order != 0 { return field.descending ? order < 0 : order > 0 }
    }
    let order = JSONCollation.compareUTF8(document.id, id)
    return sort.last?.descending == true ? order < 0 : order > 0
  }
}
