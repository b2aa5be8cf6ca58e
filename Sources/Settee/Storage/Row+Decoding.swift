import GRDB

extension Row {
  /// The column at `index` as `T`: a thrown error (``SetteeError/Code/corruption`` once
  /// converted by ``SetteeError/from(_:_:busyTimeout:)``) when the file holds something
  /// else there, such as NULL or a blob where Settee writes text. GRDB's subscript, which
  /// this replaces for every value read from the file, traps in that case, and a damaged
  /// or tampered file must never take its host down.
  func value<T: DatabaseValueConvertible>(_ index: Int) throws -> T {
    try decode(T.self, atIndex: index)
  }
}
