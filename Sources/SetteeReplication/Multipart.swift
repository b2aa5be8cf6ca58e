import Foundation
import SetteeCore

/// CouchDB's multipart bodies: `multipart/mixed` answers to `open_revs` (one part per
/// revision, itself `multipart/related` when it carries attachments), and
/// `multipart/related` documents (the JSON, then each attachment marked `"follows": true`
/// in order). Small and regular, so written and parsed here over whole buffers (both are
/// bounded: answers by what is read, requests by the server's request limit). The server
/// answers and reads them; the replicator sends documents with large attachments as
/// `multipart/related` and reads `open_revs` answers as `multipart/mixed`, as CouchDB's does.
package enum Multipart {
  /// A new random boundary.
  package static func boundary() -> String { Document.generateID() }

  /// A document as a `multipart/related` body when it carries attachment data: its JSON
  /// with `"follows": true` in place of each `"data"` (CouchDB's member order:
  /// `content_type`, `revpos`, `digest`, `length`, `follows`, then `encoding` and
  /// `encoded_length` for data kept gzip-encoded), then the bytes in the same order, each
  /// part with `Content-Length` and, for encoded data, `Content-Encoding`. `nil` when it
  /// has no attachment data (the JSON alone says everything).
  package static func related(_ document: JSONObject, boundary: String) -> [UInt8]? {
    guard case .object(let attachments)? = document["_attachments"],
      attachments.contains(where: { $0.value["data"] != nil })
    else { return nil }
    var json = document
    var stubs = JSONObject()
    var bodies: [(name: String, type: String, encoding: String?, bytes: [UInt8])] = []
    for member in attachments {
      guard case .object(let attachment) = member.value,
        let data = attachment["data"]?.stringValue, let bytes = Data(base64Encoded: data)
      else {
        stubs[member.key] = member.value
        continue
      }
      let encoding = attachment["encoding"]?.stringValue
      var following: [(String, JSON)] = []
      for key in ["content_type", "revpos", "digest"] {
        if let value = attachment[key] { following.append((key, value)) }
      }
      // CouchDB reads a part by the length its attachment gives: the decoded length, with
      // encoded_length for what the part holds when it is encoded.
      following.append(("length", attachment["length"] ?? .int(Int64(bytes.count))))
      following.append(("follows", true))
      if let encoding {
        following.append(("encoding", .string(encoding)))
        following.append(("encoded_length", .int(Int64(bytes.count))))
      }
      stubs[member.key] = .object(JSONObject(following))
      bodies.append(
        (
          member.key, attachment["content_type"]?.stringValue ?? "application/octet-stream",
          encoding, Array(bytes)
        ))
    }
    json["_attachments"] = .object(stubs)
    var out = Array("--\(boundary)\r\nContent-Type: application/json\r\n\r\n".utf8)
    JSONWriter.write(.object(json), into: &out)
    for body in bodies {
      let name = headerValue(body.name).replacingOccurrences(of: "\"", with: "\\\"")
      var headers =
        "\r\n--\(boundary)\r\nContent-Disposition: attachment; filename=\"\(name)\"\r\nContent-Type: \(headerValue(body.type))\r\nContent-Length: \(body.bytes.count)\r\n"
      if let encoding = body.encoding { headers += "Content-Encoding: \(headerValue(encoding))\r\n" }
      out += Array((headers + "\r\n").utf8)
      out += body.bytes
    }
    out += Array("\r\n--\(boundary)--".utf8)
    return out
  }

  /// Text as it may stand in a part header: a CR, LF or NUL (which would end the header
  /// and let a document's author write headers of their own) becomes a space.
  static func headerValue(_ text: String) -> String {
    guard text.utf8.contains(where: { $0 == 13 || $0 == 10 || $0 == 0 }) else { return text }
    return String(
      String.UnicodeScalarView(
        text.unicodeScalars.map { "\r\n\0".unicodeScalars.contains($0) ? " " : $0 }))
  }

  /// `open_revs` answers as `multipart/mixed`: a document part per found revision (JSON,
  /// or `multipart/related` with its attachments), `{"missing": rev}` parts marked
  /// `error="true"`, as CouchDB's replicator reads them.
  package static func mixed(_ answers: [JSONObject], boundary: String) -> [UInt8] {
    var out: [UInt8] = []
    for answer in answers {
      out += Array("--\(boundary)\r\n".utf8)
      if case .object(let document)? = answer["ok"] {
        let inner = Self.boundary()
        if let related = related(document, boundary: inner) {
          out += Array("Content-Type: multipart/related; boundary=\"\(inner)\"\r\n\r\n".utf8)
          out += related
        } else {
          out += Array("Content-Type: application/json\r\n\r\n".utf8)
          JSONWriter.write(.object(document), into: &out)
        }
      } else {
        out += Array("Content-Type: application/json; error=\"true\"\r\n\r\n".utf8)
        JSONWriter.write(.object(answer), into: &out)
      }
      out += Array("\r\n".utf8)
    }
    out += Array("--\(boundary)--".utf8)
    return out
  }

  /// The boundary of a `multipart/*` content type.
  package static func boundary(ofContentType type: String) -> String? {
    for parameter in type.split(separator: ";").dropFirst() {
      let pair = parameter.split(separator: "=", maxSplits: 1).map {
        $0.trimmingCharacters(in: .whitespaces)
      }
      guard pair.count == 2, pair[0].lowercased() == "boundary" else { continue }
      return pair[1].trimmingCharacters(in: CharacterSet(charactersIn: "\""))
    }
    return nil
  }

  /// One part: its headers (names lowercased) and body.
  package struct Part {
    package var headers: [String: String]
    package var body: [UInt8]
  }

  /// Splits a multipart body into its parts.
  package static func parts(_ body: [UInt8], boundary: String) throws -> [Part] {
    let delimiter = Array("--\(boundary)".utf8)
    var starts: [Int] = []
    var index = 0
    while let found = find(delimiter, in: body, from: index) {
      starts.append(found)
      index = found + delimiter.count
    }
    guard starts.count >= 2 else { throw malformed("no parts delimited by the boundary") }
    var parts: [Part] = []
    for (start, end) in zip(starts, starts.dropFirst()) {
      var from = start + delimiter.count
      // The rest of the delimiter line.
      guard let lineEnd = find(Array("\r\n".utf8), in: body, from: from, before: end) else {
        throw malformed("a boundary line does not end")
      }
      from = lineEnd + 2
      guard let headersEnd = find(Array("\r\n\r\n".utf8), in: body, from: from - 2, before: min(body.count, end + 4))
      else { throw malformed("a part has no blank line after its headers") }
      var headers: [String: String] = [:]
      let headerText = String(decoding: body[from..<max(from, headersEnd)], as: UTF8.self)
      for line in headerText.split(separator: "\r\n") {
        guard let colon = line.firstIndex(of: ":") else { continue }
        headers[line[..<colon].lowercased()] = line[line.index(after: colon)...]
          .trimmingCharacters(in: .whitespaces)
      }
      var bodyEnd = end
      // The CRLF before the next delimiter belongs to it.
      if bodyEnd >= 2 && body[bodyEnd - 2] == 13 && body[bodyEnd - 1] == 10 { bodyEnd -= 2 }
      parts.append(
        Part(headers: headers, body: Array(body[(headersEnd + 4)..<max(headersEnd + 4, bodyEnd)])))
    }
    return parts
  }

  /// An `open_revs` answer (`multipart/mixed`): each revision found as a document, its
  /// attachments' data inline (base64, as `_bulk_get` gives it); a revision not found
  /// (`{"missing": rev}`, marked `error="true"`) is left out.
  package static func documents(fromMixed body: [UInt8], boundary: String) throws
    -> [JSONObject]
  {
    var documents: [JSONObject] = []
    for part in try parts(body, boundary: boundary) {
      let type = part.headers["content-type"] ?? "application/json"
      if type.lowercased().hasPrefix("multipart/related") {
        guard let inner = Self.boundary(ofContentType: type) else {
          throw malformed("a multipart/related part has no boundary")
        }
        documents.append(try document(fromRelated: part.body, boundary: inner))
        continue
      }
      guard case .object(let object)? = try? JSONParser.parse(part.body) else {
        throw malformed("a part is not a JSON object")
      }
      if type.contains("error=\"true\"") || object["missing"] != nil { continue }
      documents.append(object)
    }
    return documents
  }

  /// A `multipart/related` document as JSON: each attachment marked `"follows": true`
  /// gets the data of the part naming it in `Content-Disposition`, or else of the next
  /// part not yet taken. A part whose length is not the one its attachment declares
  /// (`encoded_length` when it has an `encoding`, else `length`) is refused as CouchDB
  /// refuses it, "longer" or "shorter than expected": it is how a cut upload shows.
  ///
  /// - Complexity: O(n) in the body and the parts (``attachmentParts(_:partNames:)``).
  package static func document(fromRelated body: [UInt8], boundary: String) throws -> JSONObject {
    let parts = try parts(body, boundary: boundary)
    guard let first = parts.first, case .object(var document) = try JSONParser.parse(first.body)
    else { throw malformed("the first part must be the document as a JSON object") }
    guard case .object(let attachments)? = document["_attachments"] else { return document }
    let chosen = try attachmentParts(
      attachments, partNames: parts.map { filename($0.headers["content-disposition"]) })
    var filled: [(String, JSON)] = []
    filled.reserveCapacity(attachments.count)
    for member in attachments {
      guard let position = chosen[member.key], case .object(var attachment) = member.value else {
        filled.append((member.key, member.value))
        continue
      }
      let data = parts[position].body
      try checkLength(data.count, declaredBy: attachment, name: member.key)
      _ = attachment.removeValue(forKey: "follows")
      attachment["data"] = .string(Data(data).base64EncodedString())
      filled.append((member.key, .object(attachment)))
    }
    document["_attachments"] = .object(JSONObject(filled))
    return document
  }

  /// Which part holds each attachment marked `"follows": true`: the part naming it in
  /// `Content-Disposition` (`partNames`, by position; the document is part 0), or else the
  /// next part not yet taken, as CouchDB matches them.
  ///
  /// - Throws: ``MultipartError`` for an attachment no part holds.
  /// - Complexity: O(n) in the parts and attachments (finding each attachment's part by
  ///   searching the rest made 10,000 parts take 15 s).
  package static func attachmentParts(_ attachments: JSONObject, partNames: [String?]) throws
    -> [String: Int]
  {
    // The parts after the document, by the file name they give, in order.
    var named: [String: [Int]] = [:]
    for index in partNames.indices.dropFirst() {
      if let name = partNames[index] { named[name, default: []].append(index) }
    }
    var seen: [String: Int] = [:]
    var taken = [Bool](repeating: false, count: partNames.count)
    var next = 1
    var chosen: [String: Int] = [:]
    for member in attachments {
      guard case .object(let attachment) = member.value, attachment["follows"] == true else {
        continue
      }
      var position: Int?
      if let candidates = named[member.key] {
        var cursor = seen[member.key, default: 0]
        while position == nil && cursor < candidates.count {
          if !taken[candidates[cursor]] { position = candidates[cursor] }
          cursor += 1
        }
        seen[member.key] = cursor
      }
      if position == nil {
        while next < partNames.count && taken[next] { next += 1 }
        if next < partNames.count { position = next }
      }
      guard let position else {
        throw malformed(
          "attachment \(JSONWriter.string(.string(member.key))) follows but no part holds it")
      }
      taken[position] = true
      chosen[member.key] = position
    }
    return chosen
  }

  /// Refuses a part whose length differs from the one its attachment declares, with
  /// CouchDB's words ("attachment longer/shorter than expected"); no declared length, no
  /// check.
  package static func checkLength(
    _ count: Int, declaredBy attachment: JSONObject, name: String
  ) throws {
    let field = attachment["encoding"] == nil ? "length" : "encoded_length"
    guard let declared = attachment[field] ?? attachment["length"], declared != .null else { return }
    let quoted = JSONWriter.string(.string(name))
    guard let length = declared.doubleValue, length == length.rounded() else {
      throw malformed("attachment \(quoted) declares a \(field) that is not an integer")
    }
    if Double(count) > length {
      throw malformed(
        "attachment \(quoted) longer than expected: \(count) bytes, \(field) \(JSONWriter.string(declared))")
    }
    if Double(count) < length {
      throw malformed(
        "attachment \(quoted) shorter than expected: \(count) bytes, \(field) \(JSONWriter.string(declared))")
    }
  }

  /// The `filename` a `Content-Disposition` gives (`attachment; filename="a.txt"`).
  package static func filename(_ disposition: String?) -> String? {
    guard let disposition, let start = disposition.range(of: "filename=\"") else { return nil }
    let rest = disposition[start.upperBound...]
    guard let end = rest.lastIndex(of: "\"") else { return nil }
    return String(rest[..<end])
  }

  private static func malformed(_ reason: String) -> MultipartError {
    MultipartError(reason: reason)
  }

  /// Where `needle` first starts in `haystack[start..<end]` (`end`: its end by default).
  private static func find(
    _ needle: [UInt8], in haystack: [UInt8], from start: Int, before end: Int? = nil
  ) -> Int? {
    haystack.withUnsafeBytes {
      UnsafeRawBufferPointer(rebasing: $0[..<(end ?? $0.count)]).firstIndex(of: needle, from: start)
    }
  }
}

/// A multipart body that is not what CouchDB sends: why.
package struct MultipartError: Error, CustomStringConvertible {
  package var reason: String
  package init(reason: String) { self.reason = reason }
  package var description: String { "malformed multipart body: \(reason)" }
}
