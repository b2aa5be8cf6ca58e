import Foundation
import GRDB
import SetteeCore

extension DocumentCollection {
  /// A sequence number as the string a peer is given (`N-<token>`, `0` for 0): the
  /// token names the epoch of this file's history that wrote `seq`, so that a later
  /// ``sequence(since:)-12uo7`` can tell this file from a copy restored from an older backup, or
  /// re-created, and not skip changes. CouchDB's sequences are opaque strings too.
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func sequenceString(_ seq: Int64) throws -> String {
    try sequenceStrings([seq])[0]
  }

  /// Several sequence numbers as peers' strings (``sequenceString(_:)-53hlp``), reading
  /// the collection's epochs once: what a changes feed gives with each change.
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func sequenceStrings(_ seqs: [Int64]) throws -> [String] {
    guard seqs.contains(where: { $0 > 0 }) else { return seqs.map { _ in "0" } }
    return try database.read(
      inCollection(seqs.map { _ in "0" }) { db, cid in
        try Self.sequenceStrings(db, cid: cid, seqs)
      })
  }

  /// Sequence numbers as peers' strings (as `sequenceStrings(_:)`), inside a read of the
  /// collection `cid`.
  static func sequenceStrings(_ db: SQLConnection, cid: Int64, _ seqs: [Int64]) throws
    -> [String]
  {
    guard seqs.contains(where: { $0 > 0 }) else { return seqs.map { _ in "0" } }
    let epochs: [(start: Int64, token: String)] = try Row.fetchAll(
      db.cachedStatement(
        sql: "SELECT start_seq, token FROM epochs WHERE cid = ? ORDER BY start_seq, token"),
      arguments: [cid]
    ).map { (start: $0[0], token: $0[1]) }
    return seqs.map { seq in
      guard seq > 0 else { return "0" }
      // The epoch that wrote seq: the latest that started before it (the greatest token
      // among epochs that started at the same place).
      let token = epochs.last(where: { $0.start < seq })?.token ?? "0"
      return "\(seq)-\(token)"
    }
  }

  /// Where a peer's `since` continues in this file: `0`, `now` (the last sequence number),
  /// a bare number, or a string from ``sequenceString(_:)-53hlp``. A position in an epoch this
  /// file does not have (it was written after the copy this file was restored from) starts
  /// again from 0; one in an epoch that ended sooner here than the peer saw (the copy was
  /// taken during it) continues from that epoch's end, up to which both histories agree.
  /// Never past the last sequence number.
  ///
  /// - Throws: ``SetteeError`` with code `invalidArgument` for anything else.
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func sequence(since text: String) throws -> Int64 {
    let last = try lastSequence()
    if text == "now" { return last }
    if let plain = Int64(text), plain >= 0 { return min(plain, last) }
    guard let dash = text.firstIndex(of: "-"), let number = Int64(text[..<dash]), number >= 0
    else {
      throw SetteeError(
        .invalidArgument,
        "since must be 0, now, a sequence number or N-<token>, not \(quoted(text))")
    }
    let token = String(text[text.index(after: dash)...])
    let end: Int64? = try database.read(
      inCollection(nil) { db, cid in
        if token == "0" {
          // Before any epoch was recorded: up to the first one's start.
          return try Int64.fetchOne(
            db.cachedStatement(sql: "SELECT min(start_seq) FROM epochs WHERE cid = ?"),
            arguments: [cid]) ?? Int64.max
        }
        guard
          let start = try Int64.fetchOne(
            db.cachedStatement(sql: "SELECT start_seq FROM epochs WHERE cid = ? AND token = ?"),
            arguments: [cid, token])
        else { return nil }
        return try Int64.fetchOne(
          db.cachedStatement(
            sql: "SELECT min(start_seq) FROM epochs WHERE cid = ? AND start_seq > ?"),
          arguments: [cid, start]) ?? Int64.max
      })
    guard let end else { return 0 }
    return min(number, end, last)
  }

  /// A sequence number as a peer's string, without blocking the caller's thread.
  public func sequenceString(_ seq: Int64) async throws -> String {
    try await database.withConnection(.brief) { try self.sequenceString(seq) }
  }

  /// Several sequence numbers as peers' strings, without blocking the caller's thread.
  public func sequenceStrings(_ seqs: [Int64]) async throws -> [String] {
    try await database.withConnection(.reading) { try self.sequenceStrings(seqs) }
  }

  /// Where a peer's `since` continues, without blocking the caller's thread.
  public func sequence(since text: String) async throws -> Int64 {
    try await database.withConnection(.brief) { try self.sequence(since: text) }
  }
}

extension Database {
  /// The file's identity: 32 random hexadecimal digits made with the file, the same in
  /// every process that opens it and kept by copies and backups (CouchDB's `uuid`).
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func uuid() throws -> String {
    try read { db in
      try String.fetchOne(db.cachedStatement(sql: "SELECT uuid FROM identity")) ?? ""
    }
  }

  /// The file's identity, without blocking the caller's thread.
  public func uuid() async throws -> String {
    try await withConnection(.brief) { try self.uuid() }
  }

  /// Copies the whole database, as one consistent snapshot, into a new file at `path`
  /// (SQLite's online backup: other readers and writers go on meanwhile). Restoring such
  /// a copy later is safe for replication: the copy's sequence strings are told apart
  /// from those the original gave out after it (``DocumentCollection/sequence(since:)-12uo7``).
  ///
  /// - Throws: ``SetteeError`` with code `invalidArgument` when `path` exists already,
  ///   `io` or `storage` when it cannot be written.
  public func backup(to path: String) throws {
    guard !FileManager.default.fileExists(atPath: path) else {
      throw SetteeError(.invalidArgument, "backup target \(path) exists already")
    }
    do {
      let target = try DatabaseQueue(path: path)
      try writer.backup(to: target)
      try target.close()
    } catch let error as SetteeError {
      throw error
    } catch {
      throw SetteeError.from(
        error, "backup to \(path) failed", busyTimeout: configuration.busyTimeout)
    }
  }
}

/// What CouchDB's `GET /{db}` says of a collection, read from one snapshot.
package struct CollectionStatistics: Sendable, Hashable {
  package var lastSequence: Int64
  /// ``lastSequence`` as peers are given it.
  package var sequence: String
  package var purgeSequence: Int64
  package var count: Int
  package var deletedCount: Int

  package init(
    lastSequence: Int64, sequence: String, purgeSequence: Int64, count: Int, deletedCount: Int
  ) {
    self.lastSequence = lastSequence
    self.sequence = sequence
    self.purgeSequence = purgeSequence
    self.count = count
    self.deletedCount = deletedCount
  }
}

extension DocumentCollection {
  /// The collection's sequence, purge sequence and counts in one read (they were five,
  /// each seeing its own moment); `nil` when the collection does not exist.
  package func statistics() async throws -> CollectionStatistics? {
    let operation = inCollection(nil) { db, cid -> CollectionStatistics? in
      // A deleted collection keeps its row (and id), marked dropped.
      let dropped = try Bool.fetchOne(
        db.cachedStatement(sql: "SELECT dropped FROM collections WHERE cid = ?"),
        arguments: [cid])
      guard dropped == false else { return nil }
      let last = try DocumentReader.lastSequence(db, cid: cid)
      let counts = try DocumentReader.counts(db, cid: cid)
      return CollectionStatistics(
        lastSequence: last, sequence: try Self.sequenceStrings(db, cid: cid, [last])[0],
        purgeSequence: try Int64.fetchOne(
          db.cachedStatement(sql: "SELECT max(purge_seq) FROM purges WHERE cid = ?"),
          arguments: [cid]) ?? 0,
        count: counts.live, deletedCount: counts.deleted)
    }
    return try await database.withConnection(.reading) { try self.database.read(operation) }
  }
}
