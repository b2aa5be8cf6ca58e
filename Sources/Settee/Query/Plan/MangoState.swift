import SetteeCore

/// What Mango's `find` keeps for a database: the plans of recent query shapes.
final class MangoState: FaceState {
  let planCache = PlanCache()

  init() {}
}

extension Database {
  /// The plans of recent query shapes.
  var planCache: PlanCache { faceState(MangoState.self).planCache }
}
