import Foundation
import SetteeCore

/// Which rows of a run moved beyond their noise since an earlier run (`settee bench
/// --compare earlier.json`, where `earlier.json` is what `--json` printed then).
///
/// A row's noise is the range of the ratios of its alternated runs (``BenchResult/ratios``),
/// widened by ``slack`` of its ratio on each side, so that a row measured once (``--quick``)
/// or with a narrow range still has some. A row moved when its range now and its range then
/// do not meet: a change that the machine's own variation does not explain.
enum BenchComparison {
  /// How much of its ratio each side of a row's range is widened by.
  static let slack = 0.05

  /// One line for each row of `results` that moved since the `earlier` report, naming the
  /// row, its ratio and range then and now, and which way it went.
  static func moved(from earlier: JSON, to results: [BenchResult]) -> [String] {
    var before: [String: JSON] = [:]
    for row in earlier["benchmarks"]?.arrayValue ?? [] {
      guard let name = row["name"]?.stringValue, let n = row["n"]?.doubleValue else { continue }
      before["\(name)\u{0}\(Int(n))"] = row
    }
    return results.compactMap { result -> String? in
      guard result.baseline > 0, let row = before["\(result.name)\u{0}\(result.n)"],
        let then = row["ratio"]?.doubleValue, then > 0
      else { return nil }
      let thenRange =
        (row["ratio_low"]?.doubleValue ?? then)...(row["ratio_high"]?.doubleValue ?? then)
      let now = result.ratio
      let nowRange = result.ratios ?? now...now
      let direction: String
      if nowRange.lowerBound - slack * now > thenRange.upperBound + slack * then {
        direction = "slower"
      } else if nowRange.upperBound + slack * now < thenRange.lowerBound - slack * then {
        direction = "faster"
      } else {
        return nil
      }
      return "moved: \(result.name) (n=\(result.n)): ratio \(describe(then, thenRange)) before, \(describe(now, nowRange)) now: \(direction) than its noise explains"
    }
  }

  private static func describe(_ ratio: Double, _ range: ClosedRange<Double>) -> String {
    String(format: "%.2f (%.2f-%.2f)", ratio, range.lowerBound, range.upperBound)
  }
}
