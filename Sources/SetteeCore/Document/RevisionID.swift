
/// A CouchDB-style revision id, `N-<hex digest>`.
///
/// `N` (the generation) counts the edits on the document's branch; the digest is the MD5 of
/// the parent revision, the deletion flag and the body, so that the same edit made on two
/// replicas gets the same id, as in CouchDB. Revisions order by generation, then digest,
/// which is how CouchDB picks the winning revision among conflicts.
///
/// Revisions come from writes (``description`` gives the text to send back) or from text
/// through the throwing ``init(parsing:)``; there is deliberately no string literal form,
/// which could only trap on a bad literal.
public struct RevisionID: Sendable, Hashable, Comparable, CustomStringConvertible,
  LosslessStringConvertible
{
  /// How many edits the branch has had (`N` in `N-<digest>`).
  public let generation: Int
  /// `N-<digest>`, as stored and sent; kept whole, so reading a revision from a row costs
  /// no second string.
  public let description: String

  /// Lowercase hexadecimal.
  public var digest: String {
    let utf8 = description.utf8
    return String(Substring(utf8[utf8.index(after: utf8.firstIndex(of: UInt8(ascii: "-"))!)...]))
  }

  /// Parses `N-<hex>`; `nil` when the text is not of that form.
  ///
  /// Only the canonical spelling is accepted (a generation without leading zeros, a
  /// lowercase digest), as Settee and CouchDB write revisions: a revision is compared as
  /// text, so `1-ABC` is not `1-abc`, and taking it as such would hide a client's bug.
  public init?(_ description: String) {
    var text = description
    guard let generation = text.withUTF8({ RevisionID.parse($0) }) else { return nil }
    self.generation = generation
    self.description = text
  }

  /// The generation of a canonical `N-<lowercase hex>`; `nil` for anything else.
  private static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> Int? {
    var generation = 0
    var index = 0
    // The generation: decimal digits, no sign, no leading zero, at least 1.
    while index < bytes.count, bytes[index] != UInt8(ascii: "-") {
      let digit = bytes[index] &- UInt8(ascii: "0")
      guard digit < 10, generation < Int.max / 10 - 10 else { return nil }
      generation = generation * 10 + Int(digit)
      index += 1
    }
    guard index < bytes.count, index > 0, generation >= 1, bytes[0] != UInt8(ascii: "0") else {
      return nil
    }
    index += 1
    let digestOffset = index
    while index < bytes.count {
      switch bytes[index] {
      case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"): break
      default: return nil
      }
      index += 1
    }
    let count = bytes.count - digestOffset
    guard count >= 1, count <= 128 else { return nil }
    return generation
  }

  /// Parses `N-<hex>`.
  ///
  /// - Throws: ``SetteeError`` with code `invalidRevision`.
  public init(parsing text: String) throws {
    guard let revision = RevisionID(text) else {
      throw SetteeError(
        .invalidRevision,
        "invalid revision \(JSONWriter.string(.string(text))): expected N-<lowercase hex digest>, as Settee writes it"
      )
    }
    self = revision
  }

  /// A revision from its generation and canonical text, unchecked.
  private init(generation: Int, description: String) {
    self.generation = generation
    self.description = description
  }

  /// A revision from its parts (the digest as given, unchecked).
  public init(generation: Int, digest: String) {
    self.generation = generation
    description = "\(generation)-\(digest)"
  }

  /// The revision that an edit of `parent` (or a new document when `nil`) produces.
  ///
  /// - Parameters:
  ///   - parent: the revision edited; `nil` for a new document.
  ///   - deleted: whether the new revision is a deletion.
  ///   - body: the canonical JSON bytes of the new body.
  public static func next(after parent: RevisionID?, deleted: Bool, body: [UInt8]) -> RevisionID {
    var hasher = MD5()
    if let parent {
      var text = parent.description
      text.withUTF8 { hasher.update(UnsafeRawBufferPointer($0)) }
    }
    withUnsafeBytes(of: (UInt8(0), UInt8(deleted ? 1 : 0))) { hasher.update($0) }
    body.withUnsafeBytes { hasher.update($0) }
    let generation = (parent?.generation ?? 0) + 1
    return RevisionID(
      generation: generation,
      description: Hex.string(ofDigest: hasher.finalize(), prefix: "\(generation)-"))
  }

  public static func < (lhs: RevisionID, rhs: RevisionID) -> Bool {
    if lhs.generation != rhs.generation { return lhs.generation < rhs.generation }
    return lhs.digest < rhs.digest
  }
}
