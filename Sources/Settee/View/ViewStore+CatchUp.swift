import Foundation
import GRDB
import SetteeCore

// Catching a view up with its collection's changes, in slices when mapped in Swift.
extension ViewStore {
  // MARK: - Catching up

  /// Whether the view is behind its collection, or its keys were made by another ICU.
  static func isBehind(_ db: SQLConnection, _ view: StoredView) throws -> Bool {
    if view.lastSeq < view.collectionSeq { return true }
    return view.collatorVersion != (try view.collation.version())
  }

  /// Maps the documents changed since the view's `last_seq`, in one transaction (the
  /// caller's), and records the new sequence number. Deleted documents and design
  /// documents lose their rows; a document whose map function throws emits nothing and
  /// its error is kept in `view_errors`.
  ///
  /// - Returns: the view as stored after the update.
  ///
  /// With `sliced`, mapping in Swift stops after ``sliceTime`` (having mapped at least one
  /// change) and records how far it got: the caller commits that slice, letting other
  /// writers in, and goes on in another transaction (the view is consistent at every
  /// slice: as of the sequence number it records). See ``isBehind(_:_:)``.
  @discardableResult
  static func catchUp(
    _ db: SQLConnection, _ stored: StoredView, mapper: ViewMapper, sliced: Bool = false
  ) throws -> StoredView {
    var view = stored
    if view.collatorVersion != (try view.collation.version()) {
      try reset(db, view)
      let version = try view.collation.version()
      try db.execute(
        sql: "UPDATE views SET collator_version = ?, generation = generation + 1 WHERE vid = ?",
        arguments: [version, view.vid])
      view.generation += 1
      view.collatorVersion = version
      view.lastSeq = 0
      view.totalRows = 0
      view.otherValues = 0
    }
    let target = try DocumentReader.lastSequence(db, cid: view.cid)
    guard view.lastSeq < target else { return view }
    // A catch-up of a few changes fits SQLite's own cache; a larger one (a first build, a
    // batch of writes) touches a few pages per document.
    let deadline =
      sliced ? DispatchTime.now().uptimeNanoseconds + UInt64(sliceTime * 1e9) : nil
    guard target - view.lastSeq > 100 else {
      return try catchUp(db, view, to: target, mapper: mapper, deadline: deadline)
    }
    return try db.withLargePageCache {
      try catchUp(db, view, to: target, mapper: mapper, deadline: deadline)
    }
  }

  /// How long one slice of a catch-up mapped in Swift holds the write lock at most, in
  /// seconds (a slice maps at least one change).
  static let sliceTime = 0.2

  /// Waits between two slices of a catch-up, so that a writer of another process finds
  /// the lock free: SQLite's busy handler polls it every 100 ms once it has waited a
  /// little, so a pause that long is always seen (writers of this process queue up
  /// between slices anyway).
  static func pauseBetweenSlices() { usleep(useconds_t(slicePause / 1_000)) }

  /// The pause between two slices, in nanoseconds.
  static let slicePause: UInt64 = 100_000_000

  /// Maps the documents changed in `(view.lastSeq, target]`, or up to the change being
  /// mapped when `deadline` passes.
  private static func catchUp(
    _ db: SQLConnection, _ view: StoredView, to target: Int64, mapper: ViewMapper,
    deadline: UInt64?
  ) throws -> StoredView {
    // A view with no rows and no history needs no deletes: the first build skips them.
    let fresh = view.lastSeq == 0 && view.totalRows == 0
    if let definition = mapper.declared, let plan = DeclaredViewSQL(definition),
      !(try DocumentReader.holdsNUL(db, cid: view.cid))
    {
      let counts = try plan.catchUp(db, view, from: view.lastSeq, to: target, fresh: fresh)
      return try finish(db, view, target: target, counts)
    }
    // Rows are read and written through SQLite's C API (RawStatement): GRDB's arguments
    // and rows cost as much as the rest of a Swift-mapped build.
    let insert = try db.rawStatement(
      sql: (SQLFragment("INSERT INTO ") + view.table
        + SQLFragment(" (key, doc_id, n, key_json, value) VALUES (?, ?, ?, ?, ?)")).text)
    let deleteRows = try db.makeStatement(
      sql: (SQLFragment("DELETE FROM ") + view.table
        + SQLFragment(" WHERE doc_id = ? RETURNING ") + otherValue).text)
    let deleteError = try db.cachedStatement(
      sql: "DELETE FROM view_errors WHERE vid = ? AND doc_id = ?")
    // Whether a document has rows, probed through the table's index on doc_id before the
    // delete: a `DELETE … RETURNING` opens an ephemeral table each time it runs, and most
    // documents of a catch-up have no rows yet (every one after a first build's first
    // slice: a third of a JavaScript view's build went to deleting nothing).
    let hasRows = RawStatement(
      db,
      statement: try db.rawStatement(
        sql: (SQLFragment("SELECT 1 FROM ") + view.table + SQLFragment(" WHERE doc_id = ? LIMIT 1"))
          .text))
    // The view's errors are few, usually none: none, no delete per document.
    let hadErrors =
      try Bool.fetchOne(
        db, sql: "SELECT EXISTS (SELECT 1 FROM view_errors WHERE vid = ?)", arguments: [view.vid])
      ?? true
    let insertError = try db.cachedStatement(
      sql: "INSERT OR REPLACE INTO view_errors (vid, doc_id, seq, message) VALUES (?, ?, ?, ?)")
    let changed = try RawStatement(
      db,
      SQLFragment(
        "SELECT id, rev, deleted, body, seq, rid, attachments FROM documents WHERE cid = ")
        + .value(view.cid)
        + SQLFragment(" AND seq > ") + .value(view.lastSeq) + SQLFragment(" AND seq <= ")
        + .value(target) + SQLFragment(" ORDER BY seq"))
    var counts = RowCounts()
    var key: [UInt8] = []
    var text: [UInt8] = []
    // The last change this call has mapped (`nil` before the first).
    var mappedUpTo: Int64? = nil
    // Where a slice ended, when the deadline ended it.
    var sliceEnd: Int64? = nil
    // A document's rows, or the error that skips it (recorded for the view).
    func store(_ id: String, _ seq: Int64, _ result: Result<[(key: JSON, value: JSON)], any Error>)
      throws
    {
      let emitted: [(key: JSON, value: JSON)]
      do {
        emitted = try result.get()
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
    // Documents waiting for a batch mapper (``ViewMapper/mapTexts``): id, seq, JSON text.
    var pending: [(id: String, seq: Int64, text: [UInt8])] = []
    func mapPending() throws {
      guard let mapTexts = mapper.mapTexts, !pending.isEmpty else { return }
      let results = try mapTexts(pending.map(\.text))
      for (document, result) in zip(pending, results) { try store(document.id, document.seq, result) }
      pending.removeAll(keepingCapacity: true)
    }
    try changed.forEach { row in
      let id = row.string(0)
      let seq = row.int64(4)
      if let deadline, let mappedUpTo, DispatchTime.now().uptimeNanoseconds > deadline {
        // This slice ends before this change; the next maps it.
        sliceEnd = mappedUpTo
        return false
      }
      mappedUpTo = seq
      if !fresh {
        hasRows.bind(1, text: id)
        let found = try hasRows.first { _ in true } ?? false
        for other in try found ? Bool.fetchAll(deleteRows, arguments: [id]) : [] {
          counts.removed += 1
          if other { counts.otherRemoved += 1 }
        }
        if hadErrors { try deleteError.execute(arguments: [view.vid, id]) }
      }
      if row.int64(2) != 0 || Document.isDesignID(id) { return true }
      if mapper.mapTexts != nil {
        // The document's text from the stored body: no parse, no print. A damaged body
        // is named as parsing it names it.
        let body = row.bytes(3)
        guard
          body.isEmpty
            || JSONValidator.isObject(body, maxDepth: Database.Configuration.maxNestingDepth)
        else {
          _ = try DocumentReader.parseBody(body, documentID: id)
          throw DocumentReader.damaged(id, "its stored body is not a JSON object")
        }
        var document = DocumentReader.documentText(id: id, rev: row.string(1), body: body)
        if row.int64(6) != 0 {
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
        }
        pending.append((id, seq, document))
        if pending.count == Self.mapBatch { try mapPending() }
        return true
      }
      let document = try Document(
        id: id, rev: DocumentReader.storedRevision(row.string(1), documentID: id),
        body: DocumentReader.parseBody(row.bytes(3), documentID: id))
      try store(id, seq, Result { try mapper.map(document) })
      return true
    }
    try mapPending()
    if let sliceEnd { return try finish(db, view, target: sliceEnd, counts) }
    return try finish(db, view, target: target, counts)
  }

  /// How many documents a batch mapper (``ViewMapper/mapTexts``) is handed at a time.
  static let mapBatch = 256

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
