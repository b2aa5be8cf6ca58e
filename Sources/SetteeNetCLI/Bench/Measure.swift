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
  ) rethrows -> (first: Double, second: Double) {
    func time(_ body: () throws -> Void) rethrows -> Double {
      let start = DispatchTime.now().uptimeNanoseconds
      try body()
      return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    }
    try first()
    try second()
    var firstTimes: [Double] = []
    var secondTimes: [Double] = []
    for _ in 0..<max(repetitions, 1) {
      firstTimes.append(try time(first))
      secondTimes.append(try time(second))
    }
    firstTimes.sort()
    secondTimes.sort()
    return (firstTimes[firstTimes.count / 2], secondTimes[secondTimes.count / 2])
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
