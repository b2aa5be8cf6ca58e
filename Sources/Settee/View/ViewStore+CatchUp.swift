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
  ///
  /// With `mapped`, a slice mapped ahead on a reader (``mapAhead(_:_:mapper:)``) is stored
  /// instead, when the view is still where it was mapped from.
  @discardableResult
  static func catchUp(
    _ db: SQLConnection, _ stored: StoredView, mapper: ViewMapper, sliced: Bool = false,
    mapped: MappedSlice? = nil
  ) throws -> StoredView {
    if let mapped, let view = try store(db, stored, mapped) { return view }
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
    if let plan = try sqlPlan(db, view, mapper) {
      let counts = try plan.catchUp(db, view, from: view.lastSeq, to: target, fresh: fresh)
      return try finish(db, view, target: target, counts)
    }
    let writer = try RowWriter(db, view, fresh: fresh)
    let end = try mapChanges(
      db, view, to: target, mapper: mapper, until: SliceEnd(deadline: deadline)
    ) { id, seq, rows in
      try writer.replace(id, seq, rows)
    }
    return try finish(db, view, target: end, writer.counts)
  }

  /// The SQL that maps a declarative view, when it can (not for documents holding U+0000,
  /// which SQLite's JSON functions cut short).
  private static func sqlPlan(
    _ db: SQLConnection, _ view: StoredView, _ mapper: ViewMapper
  ) throws -> DeclaredViewSQL? {
    guard let definition = mapper.declared, let plan = DeclaredViewSQL(definition),
      !(try DocumentReader.holdsNUL(db, cid: view.cid))
    else { return nil }
    return plan
  }

  // MARK: - Mapping ahead, outside the write lock

  /// A slice of a catch-up mapped on a reader, before the write that stores it: the
  /// rows of each document changed in `(from, upTo]`, in sequence order (`nil` rows for a
  /// deleted or design document). Valid for the view's state it was mapped from.
  struct MappedSlice: Sendable {
    let vid: Int64
    let generation: Int64
    let from: Int64
    let upTo: Int64
    let documents: [(id: String, seq: Int64, rows: MappedRows?)]
  }

  /// A document's rows, or the error that skips it.
  typealias MappedRows = Result<[(key: JSON, value: JSON)], any Error>

  /// Maps the next slice of a view's catch-up on `db` (a reader: no write lock is held
  /// while the map function runs), for the write that then stores it
  /// (``catchUp(_:_:mapper:sliced:mapped:)``). `nil` when there is nothing to map ahead:
  /// the view is current, maps in SQL, or must be rebuilt for another ICU.
  ///
  /// A slice ends after ``sliceTime`` or ``maxMappedRows`` rows, whichever comes first.
  static func mapAhead(
    _ db: SQLConnection, _ view: StoredView, mapper: ViewMapper
  ) throws -> MappedSlice? {
    guard view.collatorVersion == (try view.collation.version()),
      try sqlPlan(db, view, mapper) == nil
    else { return nil }
    let target = try DocumentReader.lastSequence(db, cid: view.cid)
    guard view.lastSeq < target else { return nil }
    var documents: [(id: String, seq: Int64, rows: MappedRows?)] = []
    var end = SliceEnd(
      deadline: DispatchTime.now().uptimeNanoseconds + UInt64(sliceTime * 1e9),
      maxRows: maxMappedRows)
    let upTo = try mapChanges(db, view, to: target, mapper: mapper, until: end) { id, seq, rows in
      documents.append((id, seq, rows))
      if case .success(let emitted) = rows { end.rows += emitted.count }
    }
    return MappedSlice(
      vid: view.vid, generation: view.generation, from: view.lastSeq, upTo: upTo,
      documents: documents)
  }

  /// How many rows a slice mapped ahead holds at most before it is written.
  static let maxMappedRows = 100_000

  /// Stores a slice mapped ahead (``mapAhead(_:_:mapper:)``), if the view is still where
  /// it was mapped from; `nil` when it moved (another writer caught it up, or its
  /// definition changed): the caller maps in the write instead.
  private static func store(
    _ db: SQLConnection, _ view: StoredView, _ slice: MappedSlice
  ) throws -> StoredView? {
    guard slice.vid == view.vid, slice.generation == view.generation,
      slice.from == view.lastSeq, view.collatorVersion == (try view.collation.version())
    else { return nil }
    let writer = try RowWriter(db, view, fresh: view.lastSeq == 0 && view.totalRows == 0)
    func write() throws {
      for document in slice.documents {
        try writer.replace(document.id, document.seq, document.rows)
      }
    }
    // As a catch-up in the write does (see catchUp(_:_:mapper:sliced:mapped:)).
    if slice.documents.count > 100 { try db.withLargePageCache(write) } else { try write() }
    return try finish(db, view, target: slice.upTo, writer.counts)
  }
}
