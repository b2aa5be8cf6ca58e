import Foundation
import GRDB
import SetteeCore

// A catch-up's rows: the changed documents mapped in sequence order, and their rows written.
extension ViewStore {
  /// When a slice of a catch-up mapped outside SQL ends: once its deadline passes or it
  /// holds `maxRows` rows (after one document at least).
  struct SliceEnd {
    var deadline: UInt64?
    var maxRows = Int.max
    var rows = 0

    var reached: Bool {
      if rows >= maxRows { return true }
      guard let deadline else { return false }
      return DispatchTime.now().uptimeNanoseconds > deadline
    }
  }

  /// Maps the documents changed in `(view.lastSeq, target]` in sequence order, handing
  /// each to `each` with its rows (`nil` for a deleted or design document, which only
  /// loses its rows), until `end` is reached; returns the last sequence number mapped.
  static func mapChanges(
    _ db: SQLConnection, _ view: StoredView, to target: Int64, mapper: ViewMapper,
    until end: @autoclosure () -> SliceEnd,
    each: (_ id: String, _ seq: Int64, _ rows: MappedRows?) throws -> Void
  ) throws -> Int64 {
    let changed = try RawStatement(
      db,
      SQLFragment(
        "SELECT id, rev, deleted, body, seq, rid, attachments, conflicts FROM documents WHERE cid = "
      )
        + .value(view.cid)
        + SQLFragment(" AND seq > ") + .value(view.lastSeq) + SQLFragment(" AND seq <= ")
        + .value(target) + SQLFragment(" ORDER BY seq"))
    // The last change this call has mapped (`nil` before the first).
    var mappedUpTo: Int64? = nil
    // Where a slice ended, when its end came first.
    var sliceEnd: Int64? = nil
    // Documents waiting for a batch mapper (``ViewMapper/mapTexts``): id, seq, JSON text.
    var pending: [(id: String, seq: Int64, text: [UInt8])] = []
    var pendingBytes = 0
    func mapPending() throws {
      pendingBytes = 0
      guard let mapTexts = mapper.mapTexts, !pending.isEmpty else { return }
      let results = try mapTexts(pending.map(\.text))
      for (document, result) in zip(pending, results) {
        try each(document.id, document.seq, result)
      }
      pending.removeAll(keepingCapacity: true)
    }
    try changed.forEach { row in
      let id = row.string(0)
      let seq = row.int64(4)
      if let mappedUpTo, end().reached {
        // This slice ends before this change; the next maps it.
        sliceEnd = mappedUpTo
        return false
      }
      mappedUpTo = seq
      if row.int64(2) != 0 || Document.isDesignID(id) {
        // Handed on at once, before a pending batch: each document changes once in a
        // catch-up, so the order of two documents' writes does not matter.
        try each(id, seq, nil)
        return true
      }
      if mapper.mapTexts != nil {
        let text = try documentText(db, view, row, id: id)
        pendingBytes += text.count
        pending.append((id, seq, text))
        if pending.count == Self.mapBatch || pendingBytes >= Self.mapBatchBytes {
          try mapPending()
        }
        return true
      }
      var document = try Document(
        id: id, rev: DocumentReader.storedRevision(row.string(1), documentID: id),
        body: DocumentReader.parseBody(row.bytes(3), documentID: id))
      if row.int64(7) > 0 {
        document.conflicts = try DocumentReader.conflicts(db, cid: view.cid, id: id)
      }
      try each(id, seq, Result { try mapper.map(document) })
      return true
    }
    try mapPending()
    return sliceEnd ?? target
  }

  /// A changed document as JSON text for a batch mapper, from its stored body: no parse,
  /// no print. A damaged body is named as parsing it names it.
  private static func documentText(
    _ db: SQLConnection, _ view: StoredView, _ row: RawStatement, id: String
  ) throws -> [UInt8] {
    let body = row.bytes(3)
    guard
      body.isEmpty
        || JSONValidator.isObject(body, maxDepth: Database.Configuration.maxNestingDepth)
    else {
      _ = try DocumentReader.parseBody(body, documentID: id)
      throw DocumentReader.damaged(id, "its stored body is not a JSON object")
    }
    var document = DocumentReader.documentText(id: id, rev: row.string(1), body: body)
    // Its other live leaves as `_conflicts`, as CouchDB gives a map function the document
    // (CouchDB's documented way to list conflicts with a view).
    if row.int64(7) > 0 {
      let revs = try DocumentReader.conflicts(db, cid: view.cid, id: id).map {
        JSON.string($0.description)
      }
      if !revs.isEmpty {
        document.removeLast()
        document += #","_conflicts":"#.utf8
        JSONWriter.write(.array(revs), into: &document)
        document.append(UInt8(ascii: "}"))
      }
    }
    guard row.int64(6) != 0 else { return document }
    // Its attachments as stubs, as CouchDB gives a map function the document.
    let stubs = try AttachmentStore.attachments(
      db, rid: row.int64(5),
      rev: DocumentReader.storedRevision(row.string(1), documentID: id)
    ).map { stored in
      var stub = stored.attachment
      stub.encoding = nil
      stub.encodedLength = nil
      return (stub.name, JSON.object(stub.json))
    }
    if !stubs.isEmpty {
      document.removeLast()
      document += #","_attachments":"#.utf8
      JSONWriter.write(.object(JSONObject(stubs)), into: &document)
      document.append(UInt8(ascii: "}"))
    }
    return document
  }

  /// Writes a catch-up's rows: each changed document loses the rows (and error) it had and
  /// gains what it maps to now. Rows are read and written through SQLite's C API
  /// (RawStatement): GRDB's arguments and rows cost as much as the rest of a Swift-mapped
  /// build.
  final class RowWriter {
    let db: SQLConnection
    let view: StoredView
    /// A view with no rows and no history needs no deletes: a first build skips them.
    let fresh: Bool
    private(set) var counts = RowCounts()
    private let insert: RawStatement.Prepared
    private let deleteRows: Statement
    private let deleteError: Statement
    private let insertError: Statement
    /// Whether a document has rows, probed through the table's index on doc_id before the
    /// delete: a `DELETE … RETURNING` opens an ephemeral table each time it runs, and most
    /// documents of a catch-up have no rows yet (every one after a first build's first
    /// slice: a third of a JavaScript view's build went to deleting nothing).
    private let hasRows: RawStatement
    /// The view's errors are few, usually none: none, no delete per document.
    private let hadErrors: Bool
    private var key: [UInt8] = []
    private var text: [UInt8] = []

    init(_ db: SQLConnection, _ view: StoredView, fresh: Bool) throws {
      self.db = db
      self.view = view
      self.fresh = fresh
      insert = try db.rawStatement(
        sql: (SQLFragment("INSERT INTO ") + view.table
          + SQLFragment(" (key, doc_id, n, key_json, value) VALUES (?, ?, ?, ?, ?)")).text)
      deleteRows = try db.makeStatement(
        sql: (SQLFragment("DELETE FROM ") + view.table
          + SQLFragment(" WHERE doc_id = ? RETURNING ") + otherValue).text)
      deleteError = try db.cachedStatement(
        sql: "DELETE FROM view_errors WHERE vid = ? AND doc_id = ?")
      insertError = try db.cachedStatement(
        sql: "INSERT OR REPLACE INTO view_errors (vid, doc_id, seq, message) VALUES (?, ?, ?, ?)")
      hasRows = RawStatement(
        db,
        statement: try db.rawStatement(
          sql: (SQLFragment("SELECT 1 FROM ") + view.table
            + SQLFragment(" WHERE doc_id = ? LIMIT 1")).text))
      hadErrors =
        try Bool.fetchOne(
          db, sql: "SELECT EXISTS (SELECT 1 FROM view_errors WHERE vid = ?)",
          arguments: [view.vid])
        ?? true
    }

    /// Replaces a changed document's rows with `rows` (none for `nil`), or records the
    /// error that skips it.
    func replace(_ id: String, _ seq: Int64, _ rows: MappedRows?) throws {
      if !fresh {
        hasRows.bind(1, text: id)
        let found = try hasRows.first { _ in true } ?? false
        for other in try found ? Bool.fetchAll(deleteRows, arguments: [id]) : [] {
          counts.removed += 1
          if other { counts.otherRemoved += 1 }
        }
        if hadErrors { try deleteError.execute(arguments: [view.vid, id]) }
      }
      guard let rows else { return }
      let emitted: [(key: JSON, value: JSON)]
      do {
        emitted = try rows.get()
        for pair in emitted {
          try checkEmitted(pair.key, "key")
          try checkEmitted(pair.value, "value")
        }
      } catch let error as SetteeError where error.code == .limitExceeded {
        // A filter's $regex past its budget fails the whole query, as it fails a find,
        // rather than costing its time limit on every document (the catch-up rolls back).
        throw error
      } catch {
        let message = (error as? SetteeError)?.message ?? "\(error)"
        try insertError.execute(arguments: [view.vid, id, seq, message])
        return
      }
      for (n, pair) in emitted.enumerated() {
        key.removeAll(keepingCapacity: true)
        try view.collation.append(pair.key, to: &key)
        let statement = RawStatement(db, statement: insert)
        key.withUnsafeBufferPointer { statement.bind(1, blob: $0) }
        statement.bind(2, text: id)
        statement.bind(3, Int64(n))
        text.removeAll(keepingCapacity: true)
        JSONWriter.write(pair.key, into: &text)
        text.withUnsafeBufferPointer { statement.bind(4, text: $0) }
        switch pair.value {
        case .null: statement.bindNull(5)
        case .int(let number): statement.bind(5, number)
        case .double(let number): statement.bind(5, double: number)
        default:
          text.removeAll(keepingCapacity: true)
          JSONWriter.write(pair.value, into: &text)
          text.withUnsafeBufferPointer { statement.bind(5, text: $0) }
        }
        try statement.execute()
      }
      counts.added += emitted.count
      counts.otherAdded += emitted.count { !$0.value.isNumber }
    }
  }

  /// How many documents a batch mapper (``ViewMapper/mapTexts``) is handed at a time.
  static let mapBatch = 256
  /// How many bytes of documents a batch mapper is handed at a time (a batch ends at
  /// whichever comes first): what one call into JavaScript holds stays a few MiB, well
  /// inside its memory limit, however large the documents.
  static let mapBatchBytes = 4 << 20

  /// Whether a view row's value is not a number (NULL, or JSON text; values are never
  /// blobs): text sorts after every number in SQLite, and the empty string before all
  /// other text. Counted by first builds, returned by deletes. Written without a function
  /// call: SQLite runs a `RETURNING` clause as a trigger, and one that calls a function
  /// may fail halfway, so the delete would first copy every page it changes into a
  /// statement journal, kept in a temporary file past 64 KB (1,000 changed documents:
  /// 2,294 writes to it). Not with `value IS NULL` either: SQLite 3.40 answers it false in
  /// a `RETURNING` clause for a NULL value when the table's first column is `NOT NULL`, as
  /// a view's key is.
  static let otherValue = SQLFragment("coalesce(value, '') >= ''")

  /// Rows a catch-up added and removed, and how many of each hold a value that is not a
  /// number.
  struct RowCounts {
    var added = 0
    var removed = 0
    var otherAdded = 0
    var otherRemoved = 0
  }

  /// Records that the view caught up with `target`.
  static func finish(
    _ db: SQLConnection, _ stored: StoredView, target: Int64, _ counts: RowCounts
  )
    throws -> StoredView
  {
    var view = stored
    view.totalRows += counts.added - counts.removed
    view.otherValues += counts.otherAdded - counts.otherRemoved
    view.lastSeq = target
    view.collectionSeq = max(view.collectionSeq, target)  // a slice ends before it
    view.hasErrors = true  // not known without asking: the query asks
    try db.execute(
      sql: "UPDATE views SET last_seq = ?, total_rows = ?, other_values = ? WHERE vid = ?",
      arguments: [target, view.totalRows, view.otherValues, view.vid])
    return view
  }
}
