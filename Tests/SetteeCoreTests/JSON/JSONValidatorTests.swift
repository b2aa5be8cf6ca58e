import SetteeCore
import SetteeTestSupport
import Testing

@Suite("JSON validation without parsing")
struct JSONValidatorTests {
  static func isObject(_ text: String, maxDepth: Int = JSONParser.defaultMaxDepth) -> Bool {
    Array(text.utf8).withUnsafeBufferPointer { JSONValidator.isObject($0, maxDepth: maxDepth) }
  }

  @Test(arguments: [
    "{}", " {} ", "\n{ }\t", #"{"a":1}"#, #"{"a":-0.5e+3,"b":[true,false,null,{}],"c":"x"}"#,
    #"{"s":"\" \\ \/ \b \f \n \r \t \u00e9 \uD83C\uDF89"}"#, #"{"é中🎉":"العربية"}"#,
    #"{"n":[0,-0,1.0,1E5,1e-5,123456789012345678901234567890]}"#, #"{"":""}"#,
  ])
  func accepts(_ text: String) {
    #expect(Self.isObject(text))
  }

  @Test(arguments: [
    "", " ", "[]", "1", #""a""#, "null", "{", "}", "{}}", "{} {}", #"{"a"}"#, #"{"a":}"#,
    #"{"a":1,}"#, #"{,"a":1}"#, #"{a:1}"#, #"{"a":01}"#, #"{"a":-}"#, #"{"a":1.}"#,
    #"{"a":.5}"#, #"{"a":1e}"#, #"{"a":+1}"#, #"{"a":tru}"#, #"{"a":nul}"#, #"{"a":[1,]}"#,
    #"{"a":[1 2]}"#, #"{"a":"\x"}"#, #"{"a":"\u12"}"#, #"{"a":"\u12G4"}"#, "{\"a\":\"\u{1}\"}",
    #"{"a":"unterminated}"#, #"{"a":1}x"#, "{\"a\":1}\u{0}",
  ])
  func refuses(_ text: String) {
    #expect(!Self.isObject(text))
  }

  @Test func refusesInvalidUTF8() {
    for bytes: [UInt8] in [
      [0xC3], [0xC0, 0x80], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xFF],
    ] {
      let text = Array(#"{"a":""#.utf8) + bytes + Array(#""}"#.utf8)
      #expect(!text.withUnsafeBufferPointer { JSONValidator.isObject($0) }, "\(bytes)")
      let name = Array(#"{""#.utf8) + bytes + Array(#"":1}"#.utf8)
      #expect(!name.withUnsafeBufferPointer { JSONValidator.isObject($0) }, "\(bytes)")
    }
  }

  @Test func nestingIsLimited() {
    let nested = { (depth: Int) in
      String(repeating: #"{"a":"#, count: depth - 1) + "{}"
        + String(repeating: "}", count: depth - 1)
    }
    #expect(Self.isObject(nested(4), maxDepth: 4))
    #expect(!Self.isObject(nested(5), maxDepth: 4))
    #expect(
      !Self.isObject(
        "{\"a\":" + String(repeating: "[", count: 600) + String(repeating: "]", count: 600) + "}"))
  }

  /// Random documents, and the same with a byte deleted, inserted or replaced: the
  /// validator agrees with the parser on each, except where the parser looks at values
  /// (duplicate names, numbers out of range, lone surrogates: see ``JSONValidator``).
  @Test(arguments: [1, 2, 3])
  func agreesWithTheParser(seed: UInt64) {
    var random = SplitMix64(seed: seed)
    let alphabet =
      Array(#"{}[]":,0123456789-+.eEtrufalsn\ uD"#.utf8) + [0x01, 0x0A, 0x80, 0xC3, 0xFF]
    var compared = 0
    for _ in 0..<3_000 {
      var object = JSONObject()
      for index in 0..<Int(random.next() % 5) {
        object["k\(index)"] = JSON.random(using: &random, depth: 1)
      }
      var text = JSONWriter.bytes(.object(object))
      if random.next() % 4 != 0 {
        let at = Int(random.next() % UInt64(text.count))
        let byte = alphabet[Int(random.next() % UInt64(alphabet.count))]
        switch random.next() % 3 {
        case 0: text.remove(at: at)
        case 1: text.insert(byte, at: at)
        default: text[at] = byte
        }
      }
      let parsed: Bool
      do {
        guard case .object = try JSONParser.parse(text) else {
          parsed = false
          #expect(!text.withUnsafeBufferPointer { JSONValidator.isObject($0) })
          continue
        }
        parsed = true
      } catch let error as SetteeError {
        let reason = error.reason
        if reason.contains("duplicate") || reason.contains("out of range")
          || reason.contains("surrogate")
        {
          continue
        }
        parsed = false
      } catch {
        Issue.record("\(error)")
        continue
      }
      compared += 1
      #expect(
        text.withUnsafeBufferPointer { JSONValidator.isObject($0) } == parsed,
        "\(String(decoding: text, as: UTF8.self))")
    }
    #expect(compared > 2_500)
  }
}
