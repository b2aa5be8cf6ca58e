/// The entries a document puts into a JSON index: one row of keys per combination of the
/// values its fields hold.
///
/// A field holding a scalar gives its ``CollationKey``; an array gives a key per element
/// and one for the whole array (``CollationKey/wholeArrayTag``), so both element and
/// exact-array queries can use the index; a missing field (or an empty array, which sorts
/// as missing) gives `nil`. Several multi-valued fields multiply: the rows are their
/// Cartesian product, capped at ``maxRowsPerDocument``.
package enum IndexKeys {
  /// The most entries one document may put into one index.
  package static let maxRowsPerDocument = 1_000

  /// One field's entry: its collation key and the value it was made from (`nil` for a
  /// missing field).
  package struct Entry: Sendable, Hashable {
    /// The collation key; `nil` for a missing field.
    package var key: [UInt8]?
    /// The value the key was made from.
    package var value: JSON?

    /// An entry of a key and its value.
    package init(key: [UInt8]?, value: JSON?) {
      self.key = key
      self.value = value
    }
  }

  /// The rows of entries for `document` (with `_id` and `_rev`), one entry per field.
  ///
  /// - Throws: ``SetteeError`` (`invalidDocument`) when the product of the fields' values
  ///   exceeds ``maxRowsPerDocument``.
  package static func rows(_ document: JSON, fields: [FieldPath], indexName: String) throws
    -> [[Entry]]
  {
    let perField = fields.map { keys(document, $0) }
    // Most documents give each field one entry: one row, built once.
    if perField.allSatisfy({ $0.count == 1 }) { return [perField.map { $0[0] }] }
    let count = try rowCount(
      perField.map(\.count), documentID: document["_id"]?.stringValue ?? "", indexName: indexName)
    // The Cartesian product, the first field varying slowest.
    var rows: [[Entry]] = []
    rows.reserveCapacity(count)
    var row: [Entry] = []
    row.reserveCapacity(fields.count)
    func extend(_ position: Int) {
      guard position < perField.count else {
        rows.append(row)
        return
      }
      for entry in perField[position] {
        row.append(entry)
        extend(position + 1)
        row.removeLast()
      }
    }
    extend(0)
    return rows
  }

  /// How many rows fields with these numbers of entries give (their product).
  ///
  /// - Throws: ``SetteeError`` (`invalidDocument`, naming the document) when it exceeds
  ///   ``maxRowsPerDocument``.
  package static func rowCount(_ perField: [Int], documentID: String, indexName: String) throws
    -> Int
  {
    var count = 1
    for entries in perField {
      count *= entries
      if count > maxRowsPerDocument {
        throw SetteeError(
          .invalidDocument,
          "document \(JSONWriter.string(.string(documentID))) would put more than \(maxRowsPerDocument) entries into index \(quoted(indexName)) (its fields hold too many array elements together)"
        )
      }
    }
    return count
  }

  /// The distinct entries of one field.
  package static func keys(_ document: JSON, _ field: FieldPath) -> [Entry] {
    keys(candidates: PathResolver.candidates(document, field))
  }

  /// The distinct entries of a field whose path leads to `candidates` (``PathResolver``).
  package static func keys(candidates: [JSON]) -> [Entry] {
    var entries: [Entry] = []
    // Most fields give one or a few keys: a linear search costs less than hashing them,
    // until there are many.
    var seen: Set<[UInt8]>?
    func add(_ key: [UInt8]?, _ value: JSON?) {
      if let key {
        if entries.count >= 16, seen == nil { seen = Set(entries.compactMap(\.key)) }
        let isNew =
          seen != nil ? seen!.insert(key).inserted : !entries.contains(where: { $0.key == key })
        if isNew { entries.append(Entry(key: key, value: value)) }
      } else if !entries.contains(where: { $0.key == nil }) {
        entries.append(Entry(key: nil, value: nil))
      }
    }
    for candidate in candidates {
      if case .array(let elements) = candidate {
        for element in elements { add(CollationKey.encode(element), element) }
        add(CollationKey.encodeWholeArray(candidate), candidate)
        if elements.isEmpty { add(nil, nil) }
      } else {
        add(CollationKey.encode(candidate), candidate)
      }
    }
    if entries.isEmpty { add(nil, nil) }
    return entries
  }
}
