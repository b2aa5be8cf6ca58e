import Foundation
import SetteeCore
import SetteeReplication

/// Compares Settee's answer with the one CouchDB gave to the same request, by what a
/// client can rely on: status, media type, content coding, `Location` on writes, JSON
/// members (recursively, values left out except error names and booleans), multipart
/// structure, and the bytes of attachments (decoded: two servers' gzip may differ in its
/// header). Revision suffixes, sequences, uuids and dates are values, so never compared.
enum WireShape {
  static func differences(settee: WireMessage, couch: WireMessage) -> [String] {
    var found: [String] = []
    if settee.status != couch.status {
      found.append("status \(settee.status) (CouchDB: \(couch.status))")
      return found
    }
    if settee.mediaType != couch.mediaType {
      found.append(
        "Content-Type \(settee.mediaType ?? "none") (CouchDB: \(couch.mediaType ?? "none"))")
      return found
    }
    if settee.header("content-encoding")?.lowercased() != couch.header("content-encoding")?
      .lowercased()
    {
      found.append(
        "Content-Encoding \(settee.header("content-encoding") ?? "none") (CouchDB: \(couch.header("content-encoding") ?? "none"))"
      )
    }
    if couch.status == 201 && (settee.header("location") == nil) != (couch.header("location") == nil)
    {
      found.append("Location \(settee.header("location") == nil ? "missing" : "extra")")
    }
    switch couch.mediaType {
    case "application/json"?:
      guard let mine = settee.json, let theirs = couch.json else {
        if settee.json == nil { found.append("body is not JSON") }
        return found
      }
      shape(mine, theirs, "$", into: &found)
    case let type? where type.hasPrefix("multipart/"):
      multipart(settee, couch, "multipart", into: &found)
    default:
      if decoded(settee) != decoded(couch) {
        found.append("body: \(settee.body.count) bytes differ from CouchDB's \(couch.body.count)")
      }
    }
    return found
  }

  /// A body as what it stands for: gzip decoded.
  static func decoded(_ message: WireMessage) -> [UInt8] {
    guard message.header("content-encoding")?.lowercased() == "gzip" else { return message.body }
    return (try? Gzip.decode(message.body)) ?? message.body
  }

  private static func multipart(
    _ settee: WireMessage, _ couch: WireMessage, _ at: String, into found: inout [String]
  ) {
    guard let mine = parts(settee), let theirs = parts(couch) else {
      if parts(settee) == nil { found.append("\(at): not a multipart body") }
      return
    }
    if mine.count != theirs.count {
      found.append("\(at): \(mine.count) parts (CouchDB: \(theirs.count))")
    }
    for (index, (a, b)) in zip(mine, theirs).enumerated() {
      let path = "\(at).part[\(index)]"
      var first = WireMessage()
      first.status = 200
      first.headers = a.headers.map { ($0.key, $0.value) }
      first.body = a.body
      var second = WireMessage()
      second.status = 200
      second.headers = b.headers.map { ($0.key, $0.value) }
      second.body = b.body
      for difference in differences(settee: first, couch: second) {
        found.append("\(path): \(difference)")
      }
    }
  }

  private static func parts(_ message: WireMessage) -> [Multipart.Part]? {
    guard let type = message.header("content-type"),
      let boundary = Multipart.boundary(ofContentType: type)
    else { return nil }
    return try? Multipart.parts(message.body, boundary: boundary)
  }

  /// Members and types, recursively; arrays of objects with an `id` (or `_id`) are
  /// compared by it, whatever their order (two servers number and order their writes each
  /// their own way).
  static func shape(_ mine: JSON, _ theirs: JSON, _ path: String, into found: inout [String]) {
    switch (mine, theirs) {
    case (.object(let a), .object(let b)):
      let keysA = Set(a.map(\.key))
      let keysB = Set(b.map(\.key))
      for key in keysB.subtracting(keysA).sorted() { found.append("\(path): member '\(key)' missing") }
      for key in keysA.subtracting(keysB).sorted() { found.append("\(path): extra member '\(key)'") }
      for key in keysA.intersection(keysB).sorted() {
        let (x, y) = (a[key]!, b[key]!)
        if key == "error", x != y {
          found.append("\(path).error: \(JSONWriter.string(x)) (CouchDB: \(JSONWriter.string(y)))")
        }
        shape(x, y, "\(path).\(key)", into: &found)
      }
    case (.array(let a), .array(let b)):
      if a.count != b.count { found.append("\(path): \(a.count) items (CouchDB: \(b.count))") }
      let (x, y) = (sortedByID(a), sortedByID(b))
      for (index, (p, q)) in zip(x, y).enumerated() { shape(p, q, "\(path)[\(index)]", into: &found) }
    case (.bool(let a), .bool(let b)):
      if a != b { found.append("\(path): \(a) (CouchDB: \(b))") }
    case (.int, .int), (.int, .double), (.double, .int), (.double, .double), (.string, .string),
      (.null, .null):
      break
    default:
      found.append("\(path): \(mine.typeName) (CouchDB: \(theirs.typeName))")
    }
  }

  private static func sortedByID(_ items: [JSON]) -> [JSON] {
    func key(_ item: JSON) -> String? {
      let object = item["ok"] ?? item
      guard let id = object["id"]?.stringValue ?? object["_id"]?.stringValue else { return nil }
      return id + " " + (object["rev"]?.stringValue ?? object["_rev"]?.stringValue ?? "")
    }
    guard items.count > 1, items.allSatisfy({ key($0) != nil }) else { return items }
    return items.sorted { key($0)! < key($1)! }
  }
}
