extension Document {
  /// The special top-level members a written document may carry.
  package static let specialMembers: Set<String> = ["_id", "_rev", "_deleted", "_attachments"]

  /// Makes a document from JSON that a user wrote, checking every rule of SPEC section 1.
  ///
  /// A missing `_id` gets a new random id (32 lowercase hex digits, as CouchDB makes).
  ///
  /// - Throws: ``SetteeError`` with code `invalidDocument` (not an object, bad `_deleted`,
  ///   a number that is not finite), `invalidID`, `invalidRevision`, `reservedField` or
  ///   `nestingTooDeep`.
  package init(validating json: JSON, limits: DocumentLimits = .default) throws {
    guard case .object(let object) = json else {
      throw SetteeError(
        .invalidDocument,
        "a document must be a JSON object, not \(json.typeName == "array" ? "an" : "a") \(json.typeName)"
      )
    }
    var id: String?
    var rev: RevisionID?
    var deleted = false
    var attachments: [Attachment]?
    var body: [JSONObject.Member] = []
    body.reserveCapacity(object.count)
    for member in object {
      switch member.key {
      case "_id":
        guard case .string(let text) = member.value else {
          throw SetteeError(
            .invalidID, "document id must be a string, not \(member.value.typeName)")
        }
        try Document.validateID(text)
        id = text
      case "_rev":
        guard case .string(let text) = member.value else {
          throw SetteeError(.invalidRevision, "_rev must be a string, not \(member.value.typeName)")
        }
        rev = try RevisionID(parsing: text)
      case "_deleted":
        guard case .bool(let flag) = member.value else {
          throw SetteeError(
            .invalidDocument, "_deleted must be true or false, not \(member.value.typeName)")
        }
        deleted = flag
      case "_attachments":
        attachments = try Attachment.parse(member.value, documentID: id)
      case _ where Document.readOnlyMembers.contains(member.key):
        continue
      default:
        try Names.refuseNUL(
          member.key, kind: "field name", code: .invalidDocument, documentID: id)
        if member.key.utf8.first == UInt8(ascii: "_") {
          throw SetteeError(
            .reservedField,
            "field name \(JSONWriter.string(.string(member.key))) is reserved: top-level names starting with '_' belong to the engine",
            documentID: id)
        }
        try Document.validateValue(member.value, path: member.key, depth: 2, limits: limits)
        body.append(member)
      }
    }
    self.init(
      id: id ?? Document.generateID(), rev: rev, isDeleted: deleted,
      body: JSONObject(uniqueMembers: body))
    self.attachments = attachments
  }

  /// Checks a document id: a non-empty string that starts with `_` only as `_design/`.
  ///
  /// - Throws: ``SetteeError`` with code `invalidID`.
  package static func validateID(_ id: String) throws {
    if id.isEmpty { throw SetteeError(.invalidID, "document id must not be empty") }
    try Names.refuseNUL(id, kind: "document id", code: .invalidID)
    if id.utf8.starts(with: "_local/".utf8) {
      throw SetteeError(
        .invalidID,
        "document id \(JSONWriter.string(.string(id))) names a local document: write it with putLocal (settee local put)",
        documentID: id)
    }
    if id == "_design/" {
      throw SetteeError(
        .invalidID,
        "document id \"_design/\" names no design document: give it a name after the slash",
        documentID: id)
    }
    if id.utf8.first == UInt8(ascii: "_") && !isDesignID(id) {
      throw SetteeError(
        .invalidID,
        "document id \(JSONWriter.string(.string(id))) is reserved: only ids starting with _design/ may start with '_'",
        documentID: id)
    }
  }

  /// Whether `id` is a design document's: it starts with the bytes `_design/` (compared as
  /// UTF-8, as SQLite compares ids, so a combining mark after the slash changes nothing).
  /// Design documents are never results of `_find`, views or value indexes (CouchDB's
  /// rule); all-docs and the changes feed list them. SQL says the same with
  /// `SQLFragment.notDesignID(_:)`.
  package static func isDesignID(_ id: String) -> Bool {
    id.utf8.starts(with: "_design/".utf8)
  }

  /// A new document id: 32 lowercase hexadecimal digits, unique and mostly increasing
  /// (CouchDB's `sequential` ids).
  package static func generateID() -> String {
    DocumentIDGenerator.shared.withLock { $0.next() }
  }

  /// Checks the body once more before it is stored (for documents built in Swift).
  ///
  /// - Throws: ``SetteeError`` with code `reservedField`, `invalidID`, `invalidDocument`
  ///   or `nestingTooDeep`.
  package func validate(limits: DocumentLimits = .default) throws {
    try Document.validateID(id)
    var names: Set<String> = []
    for attachment in attachments ?? [] {
      try Attachment.validateName(attachment.name, documentID: id)
      guard names.insert(attachment.name).inserted else {
        throw SetteeError(
          .invalidDocument,
          "attachment \(JSONWriter.string(.string(attachment.name))) is listed twice",
          documentID: id)
      }
    }
    for member in body {
      try Names.refuseNUL(member.key, kind: "field name", code: .invalidDocument, documentID: id)
      if member.key.utf8.first == UInt8(ascii: "_") {
        throw SetteeError(
          .reservedField,
          "field name \(JSONWriter.string(.string(member.key))) is reserved: top-level names starting with '_' belong to the engine",
          documentID: id)
      }
      try Document.validateValue(member.value, path: member.key, depth: 2, limits: limits)
    }
  }

  /// Encodes the body for storage.
  ///
  /// - Throws: ``SetteeError`` with code `documentTooLarge`.
  package func encodedBody(limits: DocumentLimits = .default) throws -> [UInt8] {
    let bytes = JSONWriter.bytes(.object(body))
    if bytes.count > limits.maxDocumentBytes {
      throw SetteeError(
        .documentTooLarge,
        "document \(JSONWriter.string(.string(id))) is \(bytes.count) bytes, more than the limit of \(limits.maxDocumentBytes)",
        documentID: id)
    }
    return bytes
  }

  /// What is wrong with a value, found without building any path until there is a problem.
  private enum ValueProblem: Error {
    case notFinite(Double, reversedPath: [String])
    case tooDeep(reversedPath: [String])
    case nulInName(String, reversedPath: [String])

    func adding(_ component: String) -> ValueProblem {
      switch self {
      case .notFinite(let number, let path): .notFinite(number, reversedPath: path + [component])
      case .tooDeep(let path): .tooDeep(reversedPath: path + [component])
      case .nulInName(let name, let path): .nulInName(name, reversedPath: path + [component])
      }
    }
  }

  private static func validateValue(_ value: JSON, path: String, depth: Int, limits: DocumentLimits)
    throws
  {
    guard let problem = findProblem(value, depth: depth, maxDepth: limits.maxNestingDepth) else {
      return
    }
    switch problem {
    case .notFinite(let number, let reversedPath):
      let location = ([path] + reversedPath.reversed()).joined(separator: ".")
      throw SetteeError(
        .invalidDocument, "field \(location) holds \(number), which JSON cannot represent")
    case .tooDeep(let reversedPath):
      let location = ([path] + reversedPath.reversed()).joined(separator: ".")
      throw SetteeError(
        .nestingTooDeep,
        "document nests deeper than \(limits.maxNestingDepth) levels at \(location)")
    case .nulInName(let name, let reversedPath):
      let location = ([path] + reversedPath.reversed()).joined(separator: ".")
      throw SetteeError(
        .invalidDocument,
        "field name \(quoted(name)) at \(location) contains U+0000, which names may not hold"
      )
    }
  }

  private static func findProblem(_ value: JSON, depth: Int, maxDepth: Int) -> ValueProblem? {
    switch value {
    case .double(let number) where !number.isFinite:
      return .notFinite(number, reversedPath: [])
    case .array(let elements):
      if depth > maxDepth { return .tooDeep(reversedPath: []) }
      for (index, element) in elements.enumerated() {
        if let problem = findProblem(element, depth: depth + 1, maxDepth: maxDepth) {
          return problem.adding(String(index))
        }
      }
    case .object(let object):
      if depth > maxDepth { return .tooDeep(reversedPath: []) }
      for member in object {
        if Names.containsNUL(member.key) { return .nulInName(member.key, reversedPath: []) }
        if let problem = findProblem(member.value, depth: depth + 1, maxDepth: maxDepth) {
          return problem.adding(member.key)
        }
      }
    default: break
    }
    return nil
  }
}
