import SetteeCore

/// What the views face keeps for a database: the Swift map functions registered in this
/// process, background update errors, and the views' definitions as last read.
final class ViewsState: FaceState {
  /// The Swift map (and reduce) functions registered in this process, by view.
  let registry = Locked<[ViewRegistryKey: ViewMapper]>([:])
  /// Why a view's last background update (`stale: .updateAfter`) failed, until the next
  /// query of that view reports it.
  let backgroundErrors = Locked<[ViewRegistryKey: SetteeError]>([:])
  /// Views' definition columns as last read, by id, checked by their generation.
  let cache = Locked<[Int64: StoredView]>([:])
  /// Counts of rows before a position, for all-documents and views' offsets.
  let rowRanks = RowRanks()

  init() {}
}

extension Database {
  /// The Swift map (and reduce) functions registered in this process, by view.
  var viewRegistry: Locked<[ViewRegistryKey: ViewMapper]> { faceState(ViewsState.self).registry }
  /// Background view update errors not reported yet.
  var backgroundErrors: Locked<[ViewRegistryKey: SetteeError]> {
    faceState(ViewsState.self).backgroundErrors
  }
  /// Views' definition columns as last read.
  var viewCache: Locked<[Int64: StoredView]> { faceState(ViewsState.self).cache }
  /// Counts of rows before a position, for all-documents and views' offsets.
  var rowRanks: RowRanks { faceState(ViewsState.self).rowRanks }
}
