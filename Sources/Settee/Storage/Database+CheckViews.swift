import Foundation
import GRDB
import SetteeCore

extension Database {
  /// One stored row of a view, as compared.
  private struct ViewRowImage: Hashable {
    var key: [UInt8]
    var n: Int64
    /// The value's ``CollationKey`` (numbers compare by value, whatever their spelling).
    var value: [UInt8]
  }

  /// Checks a view or value index: its bookkeeping (row counts, its sequence number)
  /// against its rows, and, when its map function is at hand (a declarative definition,
  /// or Swift code registered in this process), every row against what the documents it
  /// has caught up with should emit.
  func checkView(
    _ db: SQLConnection, _ stored: StoredView, label: String, collection: String,
    collectionSeq: Int64, _ report: inout CheckReport
  ) throws {
    func problem(_ id: String?, _ message: String) {
      report.add(.init(collection: collection, documentID: id, index: label, message: message))
    }
    if stored.lastSeq > collectionSeq {
      problem(
        nil,
        "\(label) records sequence number \(stored.lastSeq), past the collection's \(collectionSeq)"
      )
    }
    // Its rows, by document, checking that each reads back.
    var rows: [String: Set<ViewRowImage>] = [:]
    var count = 0
    var others = 0
    let select =
      SQLFragment("SELECT key, doc_id, n, key_json, value FROM ") + stored.table
    let cursor = try Row.fetchCursor(db, sql: select.text)
    while let row = try cursor.next() {
      count += 1
      let id: String = try row.value(1)
      do {
        let key: Data = try row.value(0)
        let keyJSON = try StoredData.json(try row.value(3) as String, "a row's key_json")
        let value = try ViewStore.decodeValue(row[4] as DatabaseValue)
        if !value.isNumber { others += 1 }
        var recomputed: [UInt8] = []
        try stored.collation.append(keyJSON, to: &recomputed)
        if recomputed != [UInt8](key), stored.collatorVersion == (try stored.collation.version()) {
          problem(id, "a row of \(label) holds a key that is not its key_json's")
        }
        rows[id, default: []].insert(
          ViewRowImage(key: [UInt8](key), n: try row.value(2), value: CollationKey.encode(value)))
      } catch let error as SetteeError {
        problem(id, "a row of \(label) is damaged: \(error.message)")
      }
    }
    if count != stored.totalRows {
      problem(nil, "\(label) records \(stored.totalRows) rows but holds \(count)")
    }
    if others != stored.otherValues {
      problem(
        nil,
        "\(label) records \(stored.otherValues) values that are not numbers but holds \(others) (its reduce relies on this count)"
      )
    }
    // The rows each document it has caught up with should have.
    let view = View(collection: self.collection(collection), name: stored.name, kind: stored.kind)
    // Rebuilt at its next query when ICU changed; a Swift map function not registered in
    // this process cannot be run.
    guard stored.collatorVersion == (try stored.collation.version()) else { return }
    let mapper: ViewMapper
    do { mapper = try view.mapper(db, for: stored) } catch let error as SetteeError
      where error.code == .viewNotRegistered
    {
      return
    }
    var expected: [String: Set<ViewRowImage>] = [:]
    var later: Set<String> = []
    let documents = try Row.fetchCursor(
      db, sql: "SELECT id, rev, deleted, body, seq FROM documents WHERE cid = ?",
      arguments: [stored.cid])
    while let row = try documents.next() {
      let id: String = try row.value(0)
      guard (try row.value(4) as Int64) <= stored.lastSeq else {
        later.insert(id)  // changed since the view caught up: its rows may be older
        continue
      }
      guard !(try row.value(2) as Bool), !Document.isDesignID(id) else { continue }
      guard
        let document = try? Document(
          id: id, rev: DocumentReader.storedRevision(try row.value(1), documentID: id),
          body: DocumentReader.parseBody(row, at: 3, documentID: id)),
        let emitted = try? mapper.map(document)
      else { continue }  // a damaged body is reported with the documents; a map error emits nothing
      var images: Set<ViewRowImage> = []
      for (n, pair) in emitted.enumerated() {
        var key: [UInt8] = []
        try stored.collation.append(pair.key, to: &key)
        images.insert(
          ViewRowImage(key: key, n: Int64(n), value: CollationKey.encode(pair.value)))
      }
      if !images.isEmpty { expected[id] = images }
    }
    for id in Set(rows.keys).union(expected.keys).sorted()
    where !later.contains(id) && rows[id] != expected[id] {
      problem(
        id,
        expected[id] == nil
          ? "\(label) holds rows for a document that is deleted, gone or emits none"
          : "\(label) holds \(rows[id]?.count ?? 0) rows for this document that differ from the \(expected[id]!.count) it emits"
      )
    }
  }
}

extension CheckReport {
  /// Runs one part of a check; an error it meets (a table missing, a definition that does
  /// not read back) is reported as a problem of that part rather than ending the check.
  mutating func checking(
    collection: String?, index: String? = nil, _ body: (inout CheckReport) throws -> Void
  ) {
    do { try body(&self) } catch let error as SetteeError {
      add(.init(collection: collection, index: index, message: error.reason))
    } catch {
      add(
        .init(
          collection: collection, index: index,
          message: SetteeError.from(error, "cannot be checked").reason))
    }
  }
}
