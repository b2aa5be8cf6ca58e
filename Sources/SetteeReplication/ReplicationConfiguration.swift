import Foundation
import Settee
import SetteeCore

/// One side of a replication: a collection of a Settee file, or a CouchDB-protocol database
/// at a URL (CouchDB 3.x, `settee serve`, PouchDB Server …), credentials allowed in the URL.
public enum ReplicationEndpoint: Sendable {
  /// A collection of a Settee file, replicated through the engine's own calls.
  case collection(DocumentCollection)
  /// A database at a URL (`http://name:password@host:5984/db`), spoken to over HTTP.
  case url(URL)

  /// How progress, errors and `_active_tasks` name this side: a URL without its user name,
  /// password and query, or `FILE#COLLECTION`.
  public var label: String {
    switch self {
    case .collection(let collection): LocalPeer.label(of: collection)
    case .url(let url): (try? HTTPPeer(url: url))?.label ?? "(not a database URL)"
    }
  }
}

/// What to replicate, and how.
public struct ReplicationConfiguration: Sendable {
  /// Where documents come from.
  public var source: ReplicationEndpoint
  /// Where they are written.
  public var target: ReplicationEndpoint
  /// Follow the source's changes until stopped, instead of ending once caught up.
  public var continuous: Bool
  /// Create the target database when it does not exist.
  public var createTarget: Bool
  /// Replicate only these documents (CouchDB's `doc_ids`, `selector`).
  public var filter: ReplicationFilter
  /// Start after this source sequence instead of at the checkpoint (CouchDB's `since_seq`).
  public var sinceSequence: String?
  /// Copy only each document's winning revision, not its conflicts (CouchDB's
  /// `winning_revs_only`): for a backup or a one-way copy that is not synced back.
  public var winningRevisionsOnly: Bool
  /// How many changes are read at a time: 1,000 (CouchDB reads 500 in each of four
  /// workers; Settee's one pipeline measured fastest at 1,000).
  public var batchSize: Int
  /// How often progress is checkpointed on both peers, at most.
  public var checkpointInterval: Duration
  /// How long one request may take before the connection counts as stalled.
  public var requestTimeout: Duration
  /// How long a continuous replication's long poll waits for a change before asking again.
  public var pollTimeout: Duration
  /// The longest wait between two attempts after a failure (they double from a quarter of a
  /// second, as CouchDB's replicator's do).
  public var maxRetryDelay: Duration
  /// How many times a one-shot replication tries again after a transient failure before it
  /// fails (a continuous one tries for as long as it runs).
  public var retries: Int
  /// Read and write the checkpoints (`_local/<replication id>`) on both peers; `false`
  /// starts from the beginning (or ``sinceSequence``) and leaves no log (CouchDB's
  /// `use_checkpoints`).
  public var useCheckpoints: Bool
  /// Read a server source's documents with `_bulk_get`; `false` reads each by `open_revs`
  /// (CouchDB's `use_bulk_get`).
  public var useBulkGet: Bool

  /// A configuration; every setting but the two sides has CouchDB's default or Settee's.
  public init(
    source: ReplicationEndpoint, target: ReplicationEndpoint, continuous: Bool = false,
    createTarget: Bool = false, filter: ReplicationFilter = .none, sinceSequence: String? = nil,
    winningRevisionsOnly: Bool = false, batchSize: Int = 1_000,
    checkpointInterval: Duration = .seconds(5),
    requestTimeout: Duration = .seconds(60), pollTimeout: Duration = .seconds(30),
    maxRetryDelay: Duration = .seconds(60), retries: Int = 5, useCheckpoints: Bool = true,
    useBulkGet: Bool = true
  ) {
    self.useCheckpoints = useCheckpoints
    self.useBulkGet = useBulkGet
    self.source = source
    self.target = target
    self.continuous = continuous
    self.createTarget = createTarget
    self.filter = filter
    self.sinceSequence = sinceSequence
    self.winningRevisionsOnly = winningRevisionsOnly
    self.batchSize = batchSize
    self.checkpointInterval = checkpointInterval
    self.requestTimeout = requestTimeout
    self.pollTimeout = pollTimeout
    self.maxRetryDelay = maxRetryDelay
    self.retries = retries
  }
}
