import SetteeCore

/// What one face of the engine keeps for the life of a ``Database`` value: its caches and
/// registries. A face declares one such class in its own folder, registers it in
/// ``FaceStates/kinds``, and reaches it through ``Database/faceState(_:)``, so that adding
/// a face does not change `Database`.
///
/// Every cache in a face state follows the engine's one rule
/// (``SQLConnection/readsCommittedState``).
protocol FaceState: AnyObject, Sendable {
  init()
}

/// The face states of one database, made with it.
final class FaceStates: Sendable {
  /// Every face's state (a new face adds one line).
  static let kinds: [any FaceState.Type] = [MangoState.self, ViewsState.self, WhereState.self]

  /// One of each kind, in the order of ``kinds``: immutable, so reading needs no lock
  /// (queries read a state several times each).
  private let states: [any FaceState]

  init() { states = Self.kinds.map { $0.init() } }

  /// The state of type `type`.
  func state<State: FaceState>(_ type: State.Type) -> State {
    for state in states where ObjectIdentifier(Swift.type(of: state)) == ObjectIdentifier(type) {
      return unsafeDowncast(state, to: State.self)
    }
    preconditionFailure("\(type) is not registered in FaceStates.kinds")
  }
}

extension Database {
  /// The state a face keeps for this database (``FaceState``).
  func faceState<State: FaceState>(_ type: State.Type) -> State { faceStates.state(type) }
}

/// What faces outside this module (the JavaScript design functions' compiled engines) keep
/// for the life of one ``Database`` value, one of each type, made on first use: a cache
/// kept here cannot outlive its database or be reached from another.
package final class PackageFaceStates: Sendable {
  private let states = Locked<[ObjectIdentifier: any AnyObject & Sendable]>([:])

  init() {}

  /// The state of type `State`, made by `make` the first time it is asked for.
  package func state<State: AnyObject & Sendable>(
    _ type: State.Type, _ make: () -> State
  ) -> State {
    states.withLock { states in
      if let state = states[ObjectIdentifier(type)] { return unsafeDowncast(state, to: State.self) }
      let state = make()
      states[ObjectIdentifier(type)] = state
      return state
    }
  }
}
