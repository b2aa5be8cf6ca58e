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
    var generation = 0
    var digestStart: String.UTF8View.Index?
    var hasUppercase = false
    let utf8 = description.utf8
    var index = utf8.startIndex
    // The generation: decimal digits, no sign, at least 1.
    while index < utf8.endIndex, utf8[index] != UInt8(ascii: "-") {
      let digit = utf8[index] &- UInt8(ascii: "0")
      guard digit < 10, generation < Int.max / 10 - 10 else { return nil }
      generation = generation * 10 + Int(digit)
      index = utf8.index(after: index)
    }
    guard index < utf8.endIndex, index != utf8.startIndex, generation >= 1 else { return nil }
    index = utf8.index(after: index)
    digestStart = index
    var count = 0
    while index < utf8.endIndex {
      let byte = utf8[index]
      switch byte {
      case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"): break
      case UInt8(ascii: "A")...UInt8(ascii: "F"): hasUppercase = true
      default: return nil
      }
      count += 1
      index = utf8.index(after: index)
    }
    guard let digestStart, count >= 1, count <= 128 else { return nil }
    let hex = Substring(utf8[digestStart...])
    self.generation = generation
    self.digest = hasUppercase ? hex.lowercased() : String(hex)
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
