import Foundation
import GRDB
import SetteeCore

/// What an import did.
public struct ImportSummary: Sendable, Hashable {
  /// Documents written.
  public var documents: Int
  /// Transactions committed.
  public var batches: Int

  /// A summary of an import.
  public init(documents: Int, batches: Int) {
    self.documents = documents
    self.batches = batches
  }
}

/// How far an import has got, for progress displays.
public struct ImportProgress: Sendable, Hashable {
  /// Documents imported so far.
  public var documents: Int
  /// Bytes of input read so far.
  public var bytes: Int
}

extension DocumentCollection {
  /// Imports a stream of JSON records (a JSON array or NDJSON) as documents.
  ///
  /// Records follow ``put(_:)-4hucy``'s rules, except that a `_rev` on a document
  /// the collection does not hold is kept as given (CouchDB replication's rule), so that
  /// the output of ``exportDocuments(_:)-50qgv`` imports back unchanged, and that a record
  /// with `_revisions` is grafted into its document's tree as ``putAll(_:newEdits:)-6e4pp``
  /// grafts it (a revision already held is skipped). The input is streamed;
  /// memory stays bounded whatever its size.
  ///
  /// - Parameters:
  ///   - reader: the records, read as the import goes.
  ///   - batchSize: `nil` (the default) imports everything in one transaction: all or
  ///     nothing. A number commits every that many documents, so a failure keeps the
  ///     batches before it.
  ///   - progress: called now and then with how far the import has got.
  /// - Throws: ``SetteeError`` naming the first bad record by line and position; with a
  ///   `batchSize`, the error's message says how many documents were committed.
  @discardableResult
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func importDocuments(
    from reader: inout JSONRecordReader, batchSize: Int? = nil,
    progress: ((ImportProgress) -> Void)? = nil
  ) throws -> ImportSummary {
    if let batchSize, batchSize < 1 {
      throw SetteeError(.invalidArgument, "batch size must be at least 1, not \(batchSize)")
    }
    let limits = database.configuration.limits
    let name = self.name
    var summary = ImportSummary(documents: 0, batches: 0)
    var lastReport = 0
    do {
      // A larger page cache for the import's duration: with SQLite's 2 MB, a large
      // transaction spills pages into the WAL and reads them back, then writes them again
      // (100,000 documents: 22,600 page writes and 12,100 reads, with 64 MB 17,000 and
      // 5,600; whole import about 9% faster). 16 MiB: as fast as 64 MiB on a million
      // documents in random id order (7.40 s against 7.39 s; 8 MiB took 8.13 s), and the
      // import's peak stays at 48 MB whatever its size, where 64 MiB grew it from 56 MB
      // (100,000 documents) to 102 MB (a million) (docs/performance.md, issue 46).
      try database.writeWithoutTransaction { db in
        try db.withLargePageCache(mebibytes: 16) {
          var finished = false
          while !finished {
            var inBatch = 0
            try db.inTransaction {
              var writer = try DocumentWriter(db: db, collection: name, in: database)
              while batchSize.map({ inBatch < $0 }) ?? true {
                guard let record = try reader.next() else {
                  finished = true
                  break
                }
                do {
                  // Read straight into its stored form when nothing needs its values;
                  // parsed (which also gives any error) otherwise.
                  if !writer.needsBodies,
                    let encoded = record.bytes.withUnsafeBufferPointer({
                      EncodedDocument(text: $0, limits: limits)
                    })
                  {
                    _ = try writer.write(encoded, mode: .restore)
                  } else {
                    let json = try JSONParser.parse(record.bytes, maxDepth: limits.maxNestingDepth)
                    if case .object(let object) = json,
                      object["_id"]?.stringValue?.hasPrefix(LocalDocument.idPrefix) == true
                    {
                      // A local document from an export of whole trees: kept as it was.
                      try LocalDocuments.restore(
                        db, cid: writer.collectionID, object, limits: limits)
                    } else if case .object(let object) = json, object["_revisions"] != nil {
                      // A revision with its ancestry (an export of a tree, a peer's
                      // document): grafted as `new_edits: false` does.
                      let (document, history) = try Document.replicated(
                        validating: json, limits: limits)
                      _ = try writer.graft(document, history: history, validated: true)
                    } else {
                      _ = try writer.write(
                        Document(validating: json, limits: limits), mode: .restore,
                        validated: true)
                    }
                  }
                } catch let error as SetteeError {
                  throw error.locatedIn(record)
                }
                inBatch += 1
                if let progress, summary.documents + inBatch - lastReport >= 10_000 {
                  lastReport = summary.documents + inBatch
                  progress(ImportProgress(documents: lastReport, bytes: reader.bytesConsumed))
                }
              }
              try writer.finish()
              return .commit
            }
            if inBatch > 0 {
              summary.documents += inBatch
              summary.batches += 1
            }
          }
          // After a large import, refresh the statistics SQLite's planner has of `documents`.
          // (PRAGMA optimize did this only because each write looked its id up, which marked
          // the table as worth measuring; writes no longer do.) Exact, not sampled: with
          // `analysis_limit`, SQLite estimated 1,001 documents per collection for 100,000.
          // Only when they are stale: ANALYZE reads the whole table, every collection's
          // documents, so running it after every import made importing 100,000 documents
          // into a file of a million cost a fifth more, and more as the file grew.
          if summary.documents >= Self.analyzedImportSize, try db.documentsStatisticsAreStale() {
            try db.execute(sql: "ANALYZE documents")
          }
        }
      }
    } catch {
      var failure = SetteeError.from(
        error, "import failed", busyTimeout: database.configuration.busyTimeout)
      if batchSize != nil {
        failure.message +=
          "; \(summary.documents) documents in \(summary.batches) batches were committed before it"
      }
      throw failure
    }
    progress?(ImportProgress(documents: summary.documents, bytes: reader.bytesConsumed))
    return summary
  }
}

extension DocumentCollection {
  /// The fewest documents an import must write to have the planner's statistics of
  /// `documents` refreshed.
  static let analyzedImportSize = 10_000
}

extension GRDB.Database {
  /// Whether SQLite's planner statistics of `documents` are missing, or were taken when it
  /// held under two thirds of the rows it may hold now (its largest `rid`: an upper bound).
  /// Measuring again only after such growth keeps the cost of measuring in proportion to
  /// what was written: each row is read by ANALYZE about three times over the file's life.
  func documentsStatisticsAreStale() throws -> Bool {
    guard try tableExists("sqlite_stat1") else { return true }
    // Each index's row starts with the row count the statistics were taken at.
    let stat = try String.fetchOne(
      self,
      sql: "SELECT stat FROM sqlite_stat1 WHERE tbl = 'documents' AND idx = 'documents_by_id'")
    guard let measured = stat?.split(separator: " ").first.flatMap({ Int64($0) }) else {
      return true
    }
    let rows = try Int64.fetchOne(self, sql: "SELECT max(rid) FROM documents") ?? 0
    return rows * 2 >= measured * 3
  }
}

extension SetteeError {
  /// Places an error found inside a record at its line (and column) in the whole input.
  fileprivate func locatedIn(_ record: JSONRecordReader.Record) -> SetteeError {
    var copy = self
    let inner = location ?? Location()
    let innerLine = inner.line ?? 1
    copy.location = Location(
      line: record.line + innerLine - 1,
      column: inner.column.map { innerLine == 1 ? record.column + $0 - 1 : $0 },
      record: record.index)
    return copy
  }
}

extension DocumentCollection {
  /// Imports a file of JSON records (a JSON array or NDJSON), streamed in chunks.
  ///
  /// - Throws: as ``importDocuments(from:batchSize:progress:)``, and `io` when the file
  ///   cannot be read.
  @discardableResult
  @available(*, noasync, message: "blocks its thread; await its async form from an async func")
  public func importDocuments(contentsOf url: URL, batchSize: Int? = nil) throws -> ImportSummary {
    let handle: FileHandle
    do { handle = try FileHandle(forReadingFrom: url) } catch {
      throw SetteeError(.io, "cannot open \(url.path)", cause: "\(error)", underlyingError: error)
    }
    defer { try? handle.close() }
    let limits = database.configuration.limits
    var reader = JSONRecordReader(maxRecordBytes: limits.maxRecordBytes) {
      do {
        let chunk = try handle.read(upToCount: 1 << 20)
        return chunk.map { [UInt8]($0) }
      } catch {
        throw SetteeError(.io, "cannot read \(url.path)", cause: "\(error)", underlyingError: error)
      }
    }
    return try importDocuments(from: &reader, batchSize: batchSize)
  }

  /// Imports a file of JSON records without blocking the caller's thread.
  @discardableResult
  public func importDocuments(contentsOf url: URL, batchSize: Int? = nil) async throws
    -> ImportSummary
  {
    try await database.withConnection(.writing) {
      try self.importDocuments(contentsOf: url, batchSize: batchSize)
    }
  }
}
