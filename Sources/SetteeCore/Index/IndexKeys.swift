/// The entries a document puts into a JSON index: one row of keys per combination of the
/// values its fields hold.
///
/// A field holding a scalar gives its ``CollationKey``; an array gives a key per element
/// and one for the whole array (``CollationKey/wholeArrayTag``), so both element and
/// exact-array queries can use the index; a missing field (or an empty array, which sorts
/// as missing) gives `nil`. Several multi-valued fields multiply: the rows are their
/// Cartesian product, capped at ``maxRowsPerDocument``.
public enum IndexKeys {
  /// The most entries one document may put into one index.
  public static let maxRowsPerDocument = 1_000

  /// The rows of keys (`nil` for missing) for `document` (with `_id` and `_rev`).
  ///
  /// - Throws: ``SetteeError`` (`invalidDocument`) when the product of the fields' values
  ///   exceeds ``maxRowsPerDocument``.
  public static func rows(_ document: JSON, fields: [FieldPath], indexName: String) throws -> [[[UInt8]?]] {
    var rows: [[[UInt8]?]] = [[]]
    for field in fields {
      let keys = self.keys(document, field)
      if rows.count * keys.count > maxRowsPerDocument {
        throw SetteeError(
          .invalidDocument,
          "document \(document["_id"].map { JSONWriter.string($0) } ?? "") would put more than \(maxRowsPerDocument) entries into index \(quoted(indexName)) (its fields hold too many array elements together)")
      }
      rows = rows.flatMap { row in keys.map { row + [$0] } }
    }
    return rows
  }

  /// The distinct keys of one field.
  public static func keys(_ document: JSON, _ field: FieldPath) -> [[UInt8]?] {
    var keys: [[UInt8]?] = []
    var seen = Set<[UInt8]>()
    func add(_ key: [UInt8]?) {
      if let key {
        if seen.insert(key).inserted { keys.append(key) }
      } else if !keys.contains(where: { $0 == nil }) {
        keys.append(nil)
      }
    }
    for candidate in PathResolver.candidates(document, field) {
      if case .array(let elements) = candidate {
        for element in elements { add(CollationKey.encode(element)) }
        add(CollationKey.encodeWholeArray(candidate))
        if elements.isEmpty { add(nil) }
      } else {
        add(CollationKey.encode(candidate))
      }
    }
    if keys.isEmpty { add(nil) }
    return keys
  }
}
