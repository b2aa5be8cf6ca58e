import Foundation
import GRDB
import SetteeCore

/// Read-only connections on which the async forms' brief reads (``ConnectionUse/brief``)
/// run on the calling thread, with no switch to a reader lane and back.
///
/// They are not GRDB's pool readers: a pool read waits when every reader is taken (by the
/// lanes' long queries, or by blocking callers of the engine's API), and a cooperative
/// thread that waits stalls every task the process runs. These connections serve nothing
/// else and are never waited for: ``run(_:)`` takes an idle one, opens one while fewer than
/// `limit` are open, and otherwise returns `nil`, and the caller reads on a lane as before.
/// A brief read holds its connection for one read of a few rows by key, so a handful
/// (one per thread that runs tasks, at most) are enough.
final class BriefReaders: Sendable {
  /// One connection, with the schema version its GRDB caches were made at.
  private final class Reader: @unchecked Sendable {
    let queue: DatabaseQueue
    /// Read and set only by the thread that holds the reader (taken from `idle`).
    var schemaVersion: Int32?
    init(_ queue: DatabaseQueue) { self.queue = queue }
  }

  private let path: String
  private let configuration: GRDB.Configuration
  private let limit: Int
  /// The connections not in use, and how many are open in all.
  private let state = Locked<(idle: [Reader], open: Int)>(([], 0))

  /// Connections to the file at `path`, opened read-only with `configuration` (the pool
  /// readers' own: the same SQL functions and query budget), at most `limit` of them.
  init(path: String, configuration: GRDB.Configuration, limit: Int) {
    var configuration = configuration
    configuration.readonly = true
    (self.path, self.configuration, self.limit) = (path, configuration, max(1, limit))
  }

  /// Runs `body` on an idle connection of these, on the calling thread; `nil` without
  /// running it when every connection is in use (or a new one cannot be opened).
  func run<T>(_ body: (SQLConnection) throws -> T) throws -> T? {
    let (taken, opens) = state.withLock { state -> (Reader?, Bool) in
      if let reader = state.idle.popLast() { return (reader, false) }
      guard state.open < limit else { return (nil, false) }
      state.open += 1
      return (nil, true)
    }
    let reader: Reader
    if let taken {
      reader = taken
    } else if opens {
      guard let queue = try? DatabaseQueue(path: path, configuration: configuration) else {
        state.withLock { $0.open -= 1 }
        return nil
      }
      reader = Reader(queue)
    } else {
      return nil
    }
    defer { state.withLock { $0.idle.append(reader) } }
    return try reader.queue.inDatabase { db in
      // Another connection may have changed the schema since this one's last read: GRDB's
      // schema and statement caches are dropped then, as its pool does for its readers.
      let version = try db.schemaVersion()
      if version != reader.schemaVersion {
        db.clearSchemaCache()
        reader.schemaVersion = version
      }
      return try body(db)
    }
  }
}
