import SetteeCore
import SetteeTestSupport
import Testing

@Suite("JSON scanner")
struct JSONScannerTests {
  /// The scanner's answer for `path` in `text`, with a found value given as its text.
  func lookup(_ path: [String], _ text: String) -> String {
    var text = text
    return text.withUTF8 { bytes in
      switch JSONScanner.value(at: path, in: bytes) {
      case .missing: return "missing"
      case .unsupported: return "unsupported"
      case .value(let span): return String(decoding: bytes[span], as: UTF8.self)
      }
    }
  }

  static let cases: [(path: [String], text: String, expected: String)] = [
    (["a"], #"{"a":1}"#, "1"),
    (["a"], #"{"b":"x","a":"y\"z","c":[1]}"#, #""y\"z""#),
    (["a"], #"{ "a" : { "b" : [1, {"c": "}"}] } , "d": null }"#, #"{ "b" : [1, {"c": "}"}] }"#),
    (["a", "b"], #"{"a":{"b":-1.5e3}}"#, "-1.5e3"),
    (["a", "b"], #"{"a":{"c":1}}"#, "missing"),
    (["a", "b"], #"{"a":"text"}"#, "missing"),
    (["a", "b"], #"{"a":null}"#, "missing"),
    (["a", "b"], #"{"a":[{"b":1}]}"#, "unsupported"),
    (["a", "0"], #"{"a":{"0":true}}"#, "true"),
    (["a"], #"{"a":[1,2]}"#, "[1,2]"),
    (["a"], #"{}"#, "missing"),
    (["a"], #"{"x\"a":1}"#, "unsupported"),
    (["a"], #"{"a\u0000":1,"a":2}"#, "unsupported"),
    (["a"], #"{"a":1,"a":2}"#, "unsupported"),
    (["a"], #"{"a":1"#, "unsupported"),
    (["a"], #"{"a":1}}"#, "unsupported"),
    (["a"], #" {"a":1} "#, "1"),
    (["a", "b"], #"{"a":{"b":1}}}"#, "unsupported"),
    (["a"], #"{"a":"1}"#, "unsupported"),
    (["a"], "", "unsupported"),
    (["é"], #"{"é":"ü"}"#, #""ü""#),
    ([], #"{"a":1}"#, #"{"a":1}"#),
  ]

  @Test(arguments: cases)
  func findsValuesByTheirText(path: [String], text: String, expected: String) {
    #expect(lookup(path, text) == expected)
  }

  /// Against the reference: where the scanner answers, it answers what ``PathResolver``
  /// finds in the parsed document (one value, or none).
  @Test(arguments: [1, 2, 3] as [UInt64])
  func agreesWithThePathResolver(seed: UInt64) throws {
    var random = RandomQueries(seed: seed)
    var answered = 0
    for number in 0..<400 {
      let document = JSON.object(random.document(number))
      let text = JSONWriter.string(document)
      for path in RandomQueries.paths {
        let field = try FieldPath(parsing: path)
        let candidates = PathResolver.candidates(document, field)
        var bytes = text
        let found = bytes.withUTF8 { bytes -> JSON?? in
          switch JSONScanner.value(at: field.components, in: bytes) {
          case .unsupported: return .none
          case .missing: return .some(nil)
          case .value(let span):
            return .some(try? JSONParser.parse(UnsafeBufferPointer(rebasing: bytes[span])))
          }
        }
        guard let found else { continue }
        answered += 1
        #expect(found.map { [$0] } ?? [] == candidates, "\(path) in \(text)")
      }
    }
    #expect(answered > 2_000)
  }
}
