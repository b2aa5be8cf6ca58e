/// Prints JSON values as compact UTF-8 text.
///
/// Members keep their order; only `"`, `\` and control characters are escaped, so
/// non-ASCII text is written as UTF-8. Doubles print in their shortest round-tripping
/// form, so parsing the output gives back the same value.
package enum JSONWriter {
  /// Appends the JSON text of `value` to `output`.
  ///
  /// - Complexity: O(n) in the size of the output.
  package static func write(_ value: JSON, into output: inout [UInt8]) {
    switch value {
    case .null: append("null", to: &output)
    case .bool(let flag): append(flag ? "true" : "false", to: &output)
    case .int(let number): writeInteger(number, into: &output)
    case .double(let number): writeDouble(number, into: &output)
    case .largeInteger(let digits): output.append(contentsOf: digits.utf8)
    case .string(let string): writeString(string, into: &output)
    case .array(let elements):
      output.append(UInt8(ascii: "["))
      for (index, element) in elements.enumerated() {
        if index > 0 { output.append(UInt8(ascii: ",")) }
        write(element, into: &output)
      }
      output.append(UInt8(ascii: "]"))
    case .object(let object): write(object, into: &output)
    }
  }

  /// Appends the JSON text of an object to `output`.
  package static func write(_ object: JSONObject, into output: inout [UInt8]) {
    output.append(UInt8(ascii: "{"))
    writeMembers(object, into: &output)
    output.append(UInt8(ascii: "}"))
  }

  /// Appends `"key":value` pairs separated by commas, without braces.
  package static func writeMembers(_ object: JSONObject, into output: inout [UInt8]) {
    for (index, member) in object.enumerated() {
      if index > 0 { output.append(UInt8(ascii: ",")) }
      writeString(member.key, into: &output)
      output.append(UInt8(ascii: ":"))
      write(member.value, into: &output)
    }
  }

  /// The JSON text of `value` as bytes.
  package static func bytes(_ value: JSON) -> [UInt8] {
    var output: [UInt8] = []
    output.reserveCapacity(256)
    write(value, into: &output)
    return output
  }

  /// The JSON text of `value`.
  package static func string(_ value: JSON) -> String {
    String(decoding: bytes(value), as: UTF8.self)
  }

  /// Appends a quoted, escaped JSON string.
  package static func writeString(_ string: String, into output: inout [UInt8]) {
    output.append(UInt8(ascii: "\""))
    var string = string
    string.withUTF8 { utf8 in
      var runStart = 0
      for index in 0..<utf8.count {
        let byte = utf8[index]
        guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else {
          continue
        }
        output.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<index]))
        runStart = index + 1
        output.append(UInt8(ascii: "\\"))
        switch byte {
        case UInt8(ascii: "\""): output.append(UInt8(ascii: "\""))
        case UInt8(ascii: "\\"): output.append(UInt8(ascii: "\\"))
        case 0x0A: output.append(UInt8(ascii: "n"))
        case 0x0D: output.append(UInt8(ascii: "r"))
        case 0x09: output.append(UInt8(ascii: "t"))
        case 0x08: output.append(UInt8(ascii: "b"))
        case 0x0C: output.append(UInt8(ascii: "f"))
        default:
          output.append(contentsOf: [UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")])
          output.append(hexDigit(byte >> 4))
          output.append(hexDigit(byte & 0xF))
        }
      }
      output.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<utf8.count]))
    }
    output.append(UInt8(ascii: "\""))
  }

  static func writeInteger(_ number: Int64, into output: inout [UInt8]) {
    if number == 0 {
      output.append(UInt8(ascii: "0"))
      return
    }
    if number < 0 { output.append(UInt8(ascii: "-")) }
    var magnitude = number.magnitude
    withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
      var count = 0
      while magnitude > 0 {
        digits[19 - count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
        magnitude /= 10
        count += 1
      }
      output.append(contentsOf: UnsafeBufferPointer(rebasing: digits[(20 - count)...]))
    }
  }

  static func writeDouble(_ number: Double, into output: inout [UInt8]) {
    // JSON has no NaN or infinity; documents are validated before they get here, and
    // anything else prints null as JavaScript's JSON.stringify does.
    guard number.isFinite else { return append("null", to: &output) }
    output.append(contentsOf: number.description.utf8)
  }

  private static func append(_ literal: StaticString, to output: inout [UInt8]) {
    literal.withUTF8Buffer { output.append(contentsOf: $0) }
  }

  private static func hexDigit(_ value: UInt8) -> UInt8 {
    value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") + value - 10
  }
}
