import Crypto

/// A CouchDB-style revision id, `N-<hex digest>`.
///
/// `N` (the generation) counts the edits on the document's branch; the digest is the MD5 of
/// the parent revision, the deletion flag and the body, so that the same edit made on two
/// replicas gets the same id, as in CouchDB. Revisions order by generation, then digest,
/// which is how CouchDB picks the winning revision among conflicts.
public struct RevisionID: Sendable, Hashable, Comparable, CustomStringConvertible,
  LosslessStringConvertible, ExpressibleByStringLiteral
{
  public let generation: Int
  /// Lowercase hexadecimal.
  public let digest: String

  /// Parses `N-<hex>`; `nil` when the text is not of that form.
  public init?(_ description: String) {
    guard let dash = description.utf8.firstIndex(of: UInt8(ascii: "-")) else { return nil }
    let number = description[..<dash]
    let hex = description[description.index(after: dash)...]
    guard let generation = Int(number), generation >= 1, number.first != "+",
      !hex.isEmpty, hex.utf8.count <= 128,
      hex.utf8.allSatisfy({ $0.isHexDigit })
    else { return nil }
    self.generation = generation
    // Stored revisions are lowercase already; only copy when they are not.
    self.digest = hex.utf8.contains(where: { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "F") })
      ? hex.lowercased() : String(hex)
  }

  /// Parses `N-<hex>`.
  ///
  /// - Throws: ``SetteeError`` with code `invalidRevision`.
  public init(parsing text: String) throws {
    guard let revision = RevisionID(text) else {
      throw SetteeError(
        .invalidRevision,
        "invalid revision \(JSONWriter.string(.string(text))): expected N-<hex digest>")
    }
    self = revision
  }

  public init(stringLiteral value: String) {
    guard let revision = RevisionID(value) else { preconditionFailure("invalid revision \(value)") }
    self = revision
  }

  public init(generation: Int, digest: String) {
    self.generation = generation
    self.digest = digest
  }

  /// The revision that an edit of `parent` (or a new document when `nil`) produces.
  ///
  /// - Parameter body: the canonical JSON bytes of the new body.
  public static func next(after parent: RevisionID?, deleted: Bool, body: [UInt8]) -> RevisionID {
    var hasher = Insecure.MD5()
    if let parent { hasher.update(data: Array(parent.description.utf8)) }
    hasher.update(data: [0, deleted ? 1 : 0])
    hasher.update(data: body)
    let digest = Hex.string(of: hasher.finalize())
    return RevisionID(generation: (parent?.generation ?? 0) + 1, digest: digest)
  }

  public var description: String { "\(generation)-\(digest)" }

  public static func < (lhs: RevisionID, rhs: RevisionID) -> Bool {
    (lhs.generation, lhs.digest) < (rhs.generation, rhs.digest)
  }
}

extension UInt8 {
  fileprivate var isHexDigit: Bool {
    (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(self)
      || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(self | 0x20)
  }
}
