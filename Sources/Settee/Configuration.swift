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
    /// tool makes: opening the file once rather than twice).
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

    /// Settings with the defaults named in each property.
    public init(
      limits: DocumentLimits = .default, fullSync: Bool = true, maximumReaderCount: Int = 5,
      busyTimeout: Double = 10, readOnly: Bool = false, observationInterval: Double = 0.05
    ) {
      self.limits = limits
      self.fullSync = fullSync
      self.maximumReaderCount = maximumReaderCount
      self.busyTimeout = busyTimeout
      self.readOnly = readOnly
      self.observationInterval = observationInterval
    }

    /// The `PRAGMA synchronous` level for ``fullSync``.
    package var synchronousLevel: String { fullSync ? "FULL" : "NORMAL" }
  }
}
