/// Bounds that protect the database and the process from hostile or broken input.
public struct DocumentLimits: Sendable, Hashable {
  /// The largest encoded body accepted, in bytes (CouchDB's default: 8 MiB).
  public var maxDocumentBytes: Int
  /// The deepest nesting of objects and arrays accepted; the document itself is level 1
  /// (MongoDB's limit: 100).
  public var maxNestingDepth: Int

  /// Limits of your own.
  public init(maxDocumentBytes: Int = 8 * 1024 * 1024, maxNestingDepth: Int = 100) {
    self.maxDocumentBytes = maxDocumentBytes
    self.maxNestingDepth = maxNestingDepth
  }

  /// The largest record an import reads before it gives up on it: a body at the limit
  /// may grow when written with escapes and the `_id` and `_rev` an export adds.
  public var maxRecordBytes: Int { maxDocumentBytes * 4 + 4096 }

  /// 8 MiB and 100 levels.
  public static let `default` = DocumentLimits()
}
