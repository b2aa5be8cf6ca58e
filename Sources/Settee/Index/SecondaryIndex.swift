import GRDB
import SetteeCore

/// How a kind of secondary data is kept in step with its collection's documents.
enum Upkeep: Sendable {
  /// By Swift code in the write's own transaction (JSON and text indexes).
  case inWriteTransaction
  /// By SQLite triggers on `documents` (the `where` face's field tables).
  case byTrigger
  /// Caught up when queried, from the collection's changes (views and value indexes).
  case onRead
}

/// One kind of a collection's secondary data: JSON indexes, text indexes, views and value
/// indexes, the `where` face's field tables. Each kind is one type registered in
/// ``SecondaryIndexes/kinds``; the write path and `settee check` go through the registry
/// and name no kind. A new kind of index is one such type and one line there.
///
/// Creating and dropping one index stay with each face (their definitions differ: a Mango
/// index definition, a view's map, a `where` key list); keeping the data current, refusing
/// a write for it, rebuilding it and checking it are asked of every kind the same way.
protocol SecondaryIndexKind: Sendable {
  /// How the kind is kept current.
  static var upkeep: Upkeep { get }

  /// What keeps the collection's indexes of this kind current inside a write transaction
  /// (none for kinds kept by trigger or on read). `collection` is the collection's index
  /// catalog as the write read it.
  static func writers(_ db: SQLConnection, _ collection: CollectionState) -> [any IndexWriter]

  /// The error naming this kind's index that refused a document (a unique index that
  /// already holds its value), or `nil` when the refusal was not this kind's.
  static func refusal(
    _ db: SQLConnection, cid: Int64, _ error: DatabaseError, body: [UInt8], documentID: String
  ) -> SetteeError?

  /// Rebuilds the collection's data of this kind from its documents (in the caller's write
  /// transaction): what repairs the damage ``Database/check()-854zx`` reports. Kinds kept
  /// on read are emptied and caught up when next queried.
  static func rebuild(_ db: SQLConnection, cid: Int64) throws

  /// Removes the collection's indexes of this kind, definitions and data, in the caller's
  /// write transaction: the collection is being deleted (`Database.deleteCollection(_:)`).
  static func dropAll(_ db: SQLConnection, cid: Int64) throws

  /// The collection's data of this kind, as `DocumentCollection.secondaryIndexes()`
  /// lists it.
  static func describe(_ db: SQLConnection, cid: Int64) throws -> [SecondaryIndexInfo]

  /// Forgets a document that is purged (removed for good, with no tombstone) from data
  /// kept on read, which would otherwise never see it go; kinds kept in the write's
  /// transaction or by trigger see the removal themselves.
  static func forget(_ db: SQLConnection, cid: Int64, documentID: String) throws

  /// What checks the collection's data of this kind for ``Database/check()-854zx``.
  static func checkers(
    _ db: SQLConnection, _ database: Database, cid: Int64, collection: String,
    indexes: [StoredIndex]
  ) throws -> [any IndexChecker]
}

extension SecondaryIndexKind {
  static func writers(_ db: SQLConnection, _ collection: CollectionState) -> [any IndexWriter] {
    []
  }

  static func refusal(
    _ db: SQLConnection, cid: Int64, _ error: DatabaseError, body: [UInt8], documentID: String
  ) -> SetteeError? { nil }

  static func forget(_ db: SQLConnection, cid: Int64, documentID: String) throws {}
}

/// One document written, as every index kept in the write's transaction sees it.
struct DocumentChange {
  /// The document's row id.
  var rid: Int64
  /// The new version, with its new `_rev` (a tombstone for a deletion).
  var document: Document
  /// `document` as JSON, with `_id` and `_rev`, made once for every index.
  var json: JSON
  /// The document had no entries: it is new, or replaces a tombstone.
  var isNew: Bool
  /// The stored version being replaced, when it had entries and an index needs it
  /// (``IndexWriter/needsPrevious``), and it as JSON.
  var previous: Document?
  var previousJSON: JSON?
}

/// Keeps one index current inside a write transaction.
protocol IndexWriter {
  /// Whether ``update(_:)`` needs the version a write replaces.
  var needsPrevious: Bool { get }
  /// Replaces a document's entries (none for a deleted document).
  mutating func update(_ change: DocumentChange) throws
  /// Records what the index keeps about all the writes; called once after the last.
  func finish() throws
}

/// Checks one index (or one kind's data of a collection) against the collection's
/// documents, which the check reads once for all of them.
protocol IndexChecker {
  /// What the report calls it (`"where fields"`, an index's name).
  var label: String { get }
  /// Sees each live document the check reads: its row id and JSON (with `_id` and
  /// `_rev`), or `nil` when its body is damaged and what it should give is unknown.
  mutating func see(rid: Int64, document: JSON?) throws
  /// Compares what it saw with what is stored, reporting each difference.
  func finish(_ report: inout CheckReport) throws
}

extension IndexChecker {
  mutating func see(rid: Int64, document: JSON?) throws {}
}

/// The registry of secondary data kinds, and what a write asks of all of them.
enum SecondaryIndexes {
  /// Every kind of secondary data a collection may have.
  static let kinds: [any SecondaryIndexKind.Type] = [
    JSONIndexKind.self, TextIndexKind.self, ViewRowsKind.self, WhereFieldsKind.self,
  ]

  /// Rebuilds every kind's data of the collection from its documents.
  static func rebuild(_ db: SQLConnection, cid: Int64) throws {
    for kind in kinds { try kind.rebuild(db, cid: cid) }
  }

  /// Forgets a purged document in every kind that would not see it go.
  static func forget(_ db: SQLConnection, cid: Int64, documentID: String) throws {
    for kind in kinds { try kind.forget(db, cid: cid, documentID: documentID) }
  }

  /// The error naming the index that refused a document, if one of any kind did.
  static func refusal(
    _ db: SQLConnection, cid: Int64, _ error: DatabaseError, body: [UInt8], documentID: String
  ) -> SetteeError? {
    for kind in kinds {
      if let refusal = kind.refusal(db, cid: cid, error, body: body, documentID: documentID) {
        return refusal
      }
    }
    return nil
  }
}

/// What a write transaction keeps current for one collection: the writers of every kind
/// kept in the transaction, from the registry.
struct IndexMaintainer {
  private var writers: [any IndexWriter]

  /// The writers of every kind, for the collection's catalog.
  init(db: SQLConnection, collection: CollectionState) {
    writers = SecondaryIndexes.kinds.flatMap { $0.writers(db, collection) }
  }

  /// The writers of the given indexes only (an index being built).
  init(db: SQLConnection, indexes: [StoredIndex]) {
    self.init(
      db: db, collection: CollectionState(indexes: indexes, documentsHoldNUL: true, version: nil))
  }

  /// Whether ``update(rid:document:isNew:previous:)`` needs the previous version of a
  /// document.
  var needsPrevious: Bool { writers.contains { $0.needsPrevious } }

  /// Whether the collection has no index kept in the write's transaction.
  var isEmpty: Bool { writers.isEmpty }

  /// Replaces a document's entries in every index (none for a deleted document). `isNew`:
  /// the document had no entries (it is new, or replaces a tombstone). `previous`: the
  /// stored version being replaced (with its `_rev`) when it had entries and
  /// ``needsPrevious``.
  mutating func update(rid: Int64, document: Document, isNew: Bool, previous: Document?) throws {
    guard !writers.isEmpty else { return }
    let change = DocumentChange(
      rid: rid, document: document, json: .object(document.json), isNew: isNew,
      previous: previous, previousJSON: previous.map { .object($0.json) })
    for position in writers.indices { try writers[position].update(change) }
  }

  /// Lets every index record what it keeps about the writes.
  func finish() throws {
    for writer in writers { try writer.finish() }
  }
}
