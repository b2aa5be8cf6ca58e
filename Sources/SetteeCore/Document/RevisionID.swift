/// A CouchDB-style revision id, `N-<suffix>`.
///
/// `N` (the generation) counts the edits on the document's branch. Settee's own revisions
/// have an MD5 hex digest as their suffix: of the parent revision, the deletion flag and
/// the body, so that the same edit made on two replicas gets the same id, as in CouchDB.
/// Revisions from peers keep whatever suffix they came with, byte for byte (CouchDB's own
/// examples use `10-ABC`; Couchbase Lite 1.x sends SHA-1s), except that a suffix of 32 hex
/// digits is lowercased, as CouchDB stores it. Revisions order by generation, then suffix
/// bytes, which is how CouchDB picks the winning revision among conflicts.
///
/// Revisions come from writes (``description`` gives the text to send back) or from text
/// through the throwing ``init(parsing:)``; there is deliberately no string literal form,
/// which could only trap on a bad literal.
public struct RevisionID: Sendable, Hashable, Comparable, CustomStringConvertible,
  LosslessStringConvertible
{
  /// How many edits the branch has had (`N` in `N-<suffix>`).
  public let generation: Int
  /// `N-<suffix>`, as stored and sent; kept whole, so reading a revision from a row costs
  /// no second string.
  public let description: String

  /// The most bytes a suffix may have.
  package static let maxSuffixBytes = 255

  /// The suffix after `N-` (for Settee's own revisions, lowercase hexadecimal).
  public var digest: String {
    let utf8 = description.utf8
    return String(Substring(utf8[utf8.index(after: utf8.firstIndex(of: UInt8(ascii: "-"))!)...]))
  }

  /// Parses `N-<suffix>`; `nil` when the text is not of that form.
  ///
  /// The generation is decimal without a sign or leading zero, at least 1; the suffix is
  /// 1 to ``maxSuffixBytes`` bytes with no control character, kept as given but for 32 hex
  /// digits, which are lowercased (CouchDB's rule: it keeps such a suffix as the 16 bytes
  /// they spell).
  public init?(_ description: String) {
    var text = description
    guard let (generation, lowercase) = text.withUTF8({ RevisionID.parse($0) }) else {
      return nil
    }
    self.generation = generation
    self.description = lowercase ? text.lowercased() : text
  }

  /// The generation of `N-<suffix>`, and whether the suffix is 32 hex digits with an
  /// uppercase one; `nil` for anything else.
  private static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> (Int, Bool)? {
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
    let count = bytes.count - index
    guard count >= 1, count <= maxSuffixBytes else { return nil }
    var hex = count == 32
    var upper = false
    while index < bytes.count {
      let byte = bytes[index]
      guard byte >= 0x20, byte != 0x7F else { return nil }
      switch byte {
      case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"): break
      case UInt8(ascii: "A")...UInt8(ascii: "F"): upper = true
      default: hex = false
      }
      index += 1
    }
    return (generation, hex && upper)
  }

  /// Parses `N-<suffix>` (see ``init(_:)``).
  ///
  /// - Throws: ``SetteeError`` with code `invalidRevision`.
  public init(parsing text: String) throws {
    guard let revision = RevisionID(text) else {
      throw SetteeError(
        .invalidRevision,
        "invalid revision \(JSONWriter.string(.string(text))): expected N-<suffix>, a generation of at least 1 without leading zeros, a dash, and 1 to \(RevisionID.maxSuffixBytes) bytes without control characters"
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
  package init(generation: Int, digest: String) {
    self.generation = generation
    description = "\(generation)-\(digest)"
  }

  /// The revision that an edit of `parent` (or a new document when `nil`) produces.
  ///
  /// - Parameters:
  ///   - parent: the revision edited; `nil` for a new document.
  ///   - deleted: whether the new revision is a deletion.
  ///   - body: the canonical JSON bytes of the new body.
  package static func next(after parent: RevisionID?, deleted: Bool, body: [UInt8]) -> RevisionID {
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

  /// Equal when the bytes are: two suffixes that differ only in Unicode normalization are
  /// two revisions (Swift's `String` equality would make them one).
  public static func == (lhs: RevisionID, rhs: RevisionID) -> Bool {
    // The generation first: most revisions compared (a tree's) differ there.
    lhs.generation == rhs.generation && lhs.description.hasSameBytes(as: rhs.description)
  }

  /// Hashes the bytes, as ``==(_:_:)`` compares them.
  public func hash(into hasher: inout Hasher) {
    var text = description
    text.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
  }

  /// By generation, then suffix bytes (not Swift's `String` order, which compares by
  /// Unicode canonical equivalence).
  public static func < (lhs: RevisionID, rhs: RevisionID) -> Bool {
    if lhs.generation != rhs.generation { return lhs.generation < rhs.generation }
    // The same generation writes the same `N-` before the suffix: the whole texts compare
    // as the suffixes do, without making the suffixes first.
    return lhs.description.utf8.lexicographicallyPrecedes(rhs.description.utf8)
  }
}

extension [RevisionID] {
  /// Appends the revisions as a JSON array of their strings, as `JSONWriter` prints it.
  package func writeJSON(into output: inout [UInt8]) {
    output.append(UInt8(ascii: "["))
    for (index, rev) in enumerated() {
      if index > 0 { output.append(UInt8(ascii: ",")) }
      JSONWriter.writeString(rev.description, into: &output)
    }
    output.append(UInt8(ascii: "]"))
  }
}
