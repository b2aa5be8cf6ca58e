import SetteeCore

extension Database {
  /// Settings for opening a database.
  public struct Configuration: Sendable {
    /// Size and nesting limits for documents.
    public var limits: DocumentLimits
    /// When `true` (the default) every commit is flushed to disk before it returns
    /// (`PRAGMA synchronous = FULL`), so committed writes survive a power cut as well as a
    /// crash. `false` keeps crash safety but may lose the last commits on power loss.
    public var fullSync: Bool
    /// How many concurrent read connections a file database may open. With ``readOnly``,
    /// 1 opens a single connection for everything (a quick one-off read, as the `settee`
    /// tool makes: opening the file once rather than twice). A writable file's async forms
    /// also open up to as many again (at most one per processor) for brief reads, such as a
    /// document by its id, which they run on the calling thread.
    public var maximumReaderCount: Int
    /// How long a write waits for the write lock that another connection or process holds
    /// (an all-or-nothing import holds it until it commits), in seconds, before it fails
    /// with a `busy` error and writes nothing.
    public var busyTimeout: Double
    /// Opens the file for reading only: nothing is written to it (not even its header), so
    /// read-only files, directories and mounts can be read; writes fail with `readOnly`,
    /// and a missing file is `notFound` rather than created.
    public var readOnly: Bool
    /// How often, in seconds, live queries and the continuous changes feed look for writes
    /// made by other processes and other `Database` values on the file (writes through
    /// this `Database` are seen at once). Only while something observes; default 0.05.
    public var observationInterval: Double
    /// The longest one query may run, in seconds, whatever face asked for it (`find`,
    /// `count`, `where`, a view or value index query, all-documents), not counting the time
    /// the caller's own closure takes; past it the query stops with a `limitExceeded`
    /// error. `nil` sets no limit. Default 60. Bulk work (imports, index and view builds,
    /// exports, `check`) has none.
    public var queryTimeLimit: Double?
    /// Where the `log(message)` calls of design documents' JavaScript go (`SetteeJavaScript`:
    /// map, reduce, filter and `validate_doc_update` functions), with the design document's
    /// id; CouchDB writes them to its log. `nil` (the default) drops them. Called on the
    /// thread that ran the function.
    public var javaScriptLog: (@Sendable (_ designDocument: String, _ message: String) -> Void)?

    /// Settings with the defaults named in each property.
    public init(
      limits: DocumentLimits = .default, fullSync: Bool = true, maximumReaderCount: Int = 5,
      busyTimeout: Double = 10, readOnly: Bool = false, observationInterval: Double = 0.05,
      queryTimeLimit: Double? = 60,
      javaScriptLog: (@Sendable (_ designDocument: String, _ message: String) -> Void)? = nil
    ) {
      self.javaScriptLog = javaScriptLog
      self.queryTimeLimit = queryTimeLimit
      self.limits = limits
      self.fullSync = fullSync
      self.maximumReaderCount = maximumReaderCount
      self.busyTimeout = busyTimeout
      self.readOnly = readOnly
      self.observationInterval = observationInterval
    }

    /// The longest ``busyTimeout``, in seconds: what SQLite can wait (2^31 milliseconds,
    /// about 24 days).
    public static let maxBusyTimeout: Double = 2_147_483
    /// The longest ``observationInterval``, in seconds.
    public static let maxObservationInterval: Double = 3_600
    /// The most connections ``maximumReaderCount`` may ask for.
    public static let maxReaderCount = 1_000
    /// The largest ``DocumentLimits/maxDocumentBytes``: SQLite's largest value (1 GB).
    public static let maxDocumentBytes = 1_000_000_000
    /// The deepest ``DocumentLimits/maxNestingDepth``: deeper documents would need more
    /// stack to parse than a thread may have.
    public static let maxNestingDepth = 1_000

    /// Refuses settings outside their ranges (each named with its value), before anything
    /// uses them.
    ///
    /// - Throws: ``SetteeError`` with code `invalidArgument`.
    package func validate() throws {
      func refuse(_ name: String, _ value: String, _ range: String) -> SetteeError {
        SetteeError(
          .invalidArgument, "Configuration.\(name) must be \(range), not \(value)")
      }
      guard busyTimeout.isFinite, (0...Self.maxBusyTimeout).contains(busyTimeout) else {
        throw refuse(
          "busyTimeout", "\(busyTimeout)",
          "a number of seconds from 0 to \(Int(Self.maxBusyTimeout))")
      }
      guard observationInterval.isFinite, observationInterval > 0,
        observationInterval <= Self.maxObservationInterval
      else {
        throw refuse(
          "observationInterval", "\(observationInterval)",
          "a number of seconds above 0 and at most \(Int(Self.maxObservationInterval))")
      }
      if let queryTimeLimit {
        guard queryTimeLimit.isFinite, queryTimeLimit > 0, queryTimeLimit <= Self.maxBusyTimeout
        else {
          throw refuse(
            "queryTimeLimit", "\(queryTimeLimit)",
            "nil or a number of seconds above 0 and at most \(Int(Self.maxBusyTimeout))")
        }
      }
      guard (1...Self.maxReaderCount).contains(maximumReaderCount) else {
        throw refuse(
          "maximumReaderCount", "\(maximumReaderCount)", "from 1 to \(Self.maxReaderCount)")
      }
      guard (1...Self.maxDocumentBytes).contains(limits.maxDocumentBytes) else {
        throw refuse(
          "limits.maxDocumentBytes", "\(limits.maxDocumentBytes)",
          "from 1 to \(Self.maxDocumentBytes)")
      }
      guard (1...Self.maxNestingDepth).contains(limits.maxNestingDepth) else {
        throw refuse(
          "limits.maxNestingDepth", "\(limits.maxNestingDepth)", "from 1 to \(Self.maxNestingDepth)"
        )
      }
    }

    /// The `PRAGMA synchronous` level for ``fullSync``.
    package var synchronousLevel: String { fullSync ? "FULL" : "NORMAL" }
  }
}
