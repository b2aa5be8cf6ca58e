/// SplitMix64: a tiny, fast, seedable generator. Not for secrets: Settee uses it for the
/// steps between sequential ids and for reproducible benchmark and test data.
package struct SplitMix64: RandomNumberGenerator, Sendable {
  private var state: UInt64

  /// A generator that always gives the same sequence for a seed.
  package init(seed: UInt64) { state = seed }

  /// The next number of the sequence.
  package mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
}
