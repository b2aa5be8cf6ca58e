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
    /// How many concurrent read connections a file database may open.
    public var maximumReaderCount: Int
    /// How long a connection waits for a lock held by another process, in seconds.
    public var busyTimeout: Double

    public init(
      limits: DocumentLimits = .default, fullSync: Bool = true, maximumReaderCount: Int = 5,
      busyTimeout: Double = 10
    ) {
      self.limits = limits
      self.fullSync = fullSync
      self.maximumReaderCount = maximumReaderCount
      self.busyTimeout = busyTimeout
    }
  }
}
