import Foundation
import SetteeCLI

/// Times work: a warm-up run, then the median of several.
enum Measure {
  static func median(repetitions: Int, warmUp: Bool = true, _ body: () throws -> Void) rethrows
    -> Double
  {
    if warmUp { try body() }
    var times: [Double] = []
    for _ in 0..<max(repetitions, 1) {
      let start = DispatchTime.now().uptimeNanoseconds
      try body()
      times.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
    }
    times.sort()
    return times[times.count / 2]
  }

  /// Times two pieces of work in alternation (a warm-up of each, then A B A B …) and returns
  /// the median of each: on a shared machine, load that comes and goes then weighs on both
  /// sides of a ratio rather than on whichever ran while it lasted.
  static func medians(
    repetitions: Int, _ first: () throws -> Void, _ second: () throws -> Void
  ) throws -> Paired {
    try paired(
      repetitions: repetitions, prepareFirst: { _ in () }, { _ in try first() },
      prepareSecond: { _ in () }, { _ in try second() }, warmUp: true)
  }

  /// Times two pieces of work that can run only once on the same state (a bulk insert, an
  /// index build) in alternation: `prepareFirst`/`prepareSecond` make fresh state for each
  /// run, untimed, and `cleanUpFirst`/`cleanUpSecond` undo a run, untimed. The first run of
  /// each is a warm-up, not counted.
  static func paired<A, B>(
    repetitions: Int,
    prepareFirst: (Int) throws -> A, _ first: (A) throws -> Void,
    cleanUpFirst: () throws -> Void = {},
    prepareSecond: (Int) throws -> B, _ second: (B) throws -> Void,
    cleanUpSecond: () throws -> Void = {},
    warmUp: Bool = true
  ) throws -> Paired {
    var firstTimes: [Double] = []
    var secondTimes: [Double] = []
    for run in (warmUp ? 0 : 1)...max(repetitions, 1) {
      let a = try prepareFirst(run)
      let firstTime = try time { try first(a) }
      try cleanUpFirst()
      let b = try prepareSecond(run)
      let secondTime = try time { try second(b) }
      try cleanUpSecond()
      if run > 0 {
        firstTimes.append(firstTime)
        secondTimes.append(secondTime)
      }
    }
    return Paired(first: firstTimes, second: secondTimes)
  }

  private static func time(_ body: () throws -> Void) rethrows -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    try body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
  }

  /// Times work that can run only once on the same state (a bulk insert, an index build):
  /// `prepare` makes fresh state for each run, untimed. The first run is a warm-up, not
  /// counted, as for the other figures.
  static func median<State>(
    repetitions: Int, prepare: (Int) throws -> State, _ body: (State) throws -> Void,
    cleanUp: () throws -> Void = {}
  ) rethrows -> Double {
    var times: [Double] = []
    for run in 0...max(repetitions, 1) {
      let state = try prepare(run)
      let start = DispatchTime.now().uptimeNanoseconds
      try body(state)
      if run > 0 { times.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9) }
      try cleanUp()
    }
    times.sort()
    return times[times.count / 2]
  }

  /// Gives the memory freed so far back to the system (glibc's `malloc_trim`), between
  /// workloads: glibc keeps what a thread freed in that thread's arena, so without this
  /// the process's peak is the sum of what earlier workloads left in every arena (about
  /// 125 MB more over the whole suite), not its largest workload's need.
  static func returnFreedMemory() {
    #if os(Linux)
      // Not in Swift's Glibc module (it is <malloc.h>'s): found by name, as ChildPipe
      // finds pipe2.
      typealias Trim = @convention(c) (Int) -> Int32
      if let trim = dlsym(nil, "malloc_trim") { _ = unsafeBitCast(trim, to: Trim.self)(0) }
    #endif
  }

  /// The process's peak resident memory, in bytes.
  static var peakMemory: Int {
    var usage = rusage()
    #if os(Linux)
      getrusage(RUSAGE_SELF.rawValue, &usage)
      return Int(usage.ru_maxrss) * 1024  // kilobytes on Linux
    #else
      getrusage(RUSAGE_SELF, &usage)
      return Int(usage.ru_maxrss)  // bytes on Darwin
    #endif
  }
}

/// Two pieces of work timed in alternation: the median of each, and the ratio of each pair
/// of runs (first / second) at its lowest and highest, which is the row's noise.
struct Paired {
  var settee: Double
  var baseline: Double
  var ratios: ClosedRange<Double>

  init(first: [Double], second: [Double]) {
    settee = first.sorted()[first.count / 2]
    baseline = second.sorted()[second.count / 2]
    let pairs = zip(first, second).map { $1 > 0 ? $0 / $1 : 0 }
    ratios = pairs.min()!...pairs.max()!
  }
}
