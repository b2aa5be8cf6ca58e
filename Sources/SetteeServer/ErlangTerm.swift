import Foundation
import SetteeCore

/// Erlang's external term format (`term_to_binary`), for the few terms CouchDB hashes into
/// names a client sees: an `_index` created without a `name` or `ddoc` is named by the SHA-1
/// of `term_to_binary({Def, lists:usort(Options)})` (Mango's `gen_name`), so Settee names
/// it the same way and a client that creates an unnamed index finds CouchDB's name.
///
/// JSON is encoded as CouchDB's JSON library (jiffy) decodes it: an object is a 1-tuple
/// holding a list of `{Key, Value}` pairs in their order, strings and keys are binaries,
/// `true`, `false` and `null` are atoms, integers are integers of any size and other
/// numbers floats. Atoms are written as `ATOM_EXT`, as the Erlang/OTP CouchDB 3.5 runs on
/// writes them (checked against names CouchDB 3.5.0 gave, `ErlangTermTests`).
enum ErlangTerm {
  /// A term: what the encoder knows how to write.
  indirect enum Term {
    case atom(String)
    case binary(String)
    case integer(Int64)
    /// An integer past 64 bits, as its decimal digits (with a sign).
    case bigInteger(String)
    case float(Double)
    case tuple([Term])
    case list([Term])

    /// JSON as jiffy decodes it.
    init(_ json: JSON) {
      switch json {
      case .null: self = .atom("null")
      case .bool(let flag): self = .atom(flag ? "true" : "false")
      case .int(let number): self = .integer(number)
      case .largeInteger(let digits): self = .bigInteger(digits)
      case .double(let number): self = .float(number)
      case .string(let text): self = .binary(text)
      case .array(let elements): self = .list(elements.map(Term.init))
      case .object(let members):
        self = .tuple([.list(members.map { .tuple([.binary($0.key), Term($0.value)]) })])
      }
    }
  }

  /// `term_to_binary(term)`: the version byte, then the term.
  static func bytes(_ term: Term) -> [UInt8] {
    var output: [UInt8] = [131]
    write(term, into: &output)
    return output
  }

  private static func write(_ term: Term, into output: inout [UInt8]) {
    switch term {
    case .atom(let name):
      let bytes = Array(name.utf8)
      output.append(100)  // ATOM_EXT
      append(UInt16(bytes.count), to: &output)
      output += bytes
    case .binary(let text):
      let bytes = Array(text.utf8)
      output.append(109)  // BINARY_EXT
      append(UInt32(bytes.count), to: &output)
      output += bytes
    case .integer(let number):
      if (0...255).contains(number) {
        output += [97, UInt8(number)]  // SMALL_INTEGER_EXT
      } else if let small = Int32(exactly: number) {
        output.append(98)  // INTEGER_EXT
        append(UInt32(bitPattern: small), to: &output)
      } else {
        big(negative: number < 0, magnitude: littleEndianDigits(number.magnitude), into: &output)
      }
    case .bigInteger(let digits):
      let negative = digits.hasPrefix("-")
      big(
        negative: negative, magnitude: littleEndianDigits(decimal: digits.drop { $0 == "-" || $0 == "+" }),
        into: &output)
    case .float(let number):
      output.append(70)  // NEW_FLOAT_EXT
      var bits = number.bitPattern.bigEndian
      withUnsafeBytes(of: &bits) { output += $0 }
    case .tuple(let elements):
      if elements.count < 256 {
        output += [104, UInt8(elements.count)]  // SMALL_TUPLE_EXT
      } else {
        output.append(105)  // LARGE_TUPLE_EXT
        append(UInt32(elements.count), to: &output)
      }
      for element in elements { write(element, into: &output) }
    case .list(let elements):
      if !elements.isEmpty {
        output.append(108)  // LIST_EXT
        append(UInt32(elements.count), to: &output)
        for element in elements { write(element, into: &output) }
      }
      output.append(106)  // NIL_EXT: the empty list, and a proper list's tail
    }
  }

  /// `SMALL_BIG_EXT` (or `LARGE_BIG_EXT`): the sign, then the magnitude's bytes, least
  /// significant first.
  private static func big(negative: Bool, magnitude: [UInt8], into output: inout [UInt8]) {
    if magnitude.count < 256 {
      output += [110, UInt8(magnitude.count)]
    } else {
      output.append(111)
      append(UInt32(magnitude.count), to: &output)
    }
    output.append(negative ? 1 : 0)
    output += magnitude
  }

  private static func littleEndianDigits(_ magnitude: UInt64) -> [UInt8] {
    var bytes: [UInt8] = []
    var rest = magnitude
    while rest > 0 {
      bytes.append(UInt8(rest & 0xff))
      rest >>= 8
    }
    return bytes
  }

  /// The bytes of a decimal magnitude, least significant first (schoolbook division by
  /// 256 of the digits).
  private static func littleEndianDigits(decimal: Substring) -> [UInt8] {
    var digits = decimal.compactMap { $0.wholeNumberValue }
    var bytes: [UInt8] = []
    while digits.contains(where: { $0 != 0 }) {
      var remainder = 0
      var quotient: [Int] = []
      quotient.reserveCapacity(digits.count)
      for digit in digits {
        let value = remainder * 10 + digit
        quotient.append(value / 256)
        remainder = value % 256
      }
      bytes.append(UInt8(remainder))
      digits = Array(quotient.drop { $0 == 0 })
    }
    return bytes
  }

  private static func append(_ value: UInt16, to output: inout [UInt8]) {
    output += [UInt8(value >> 8), UInt8(value & 0xff)]
  }

  private static func append(_ value: UInt32, to output: inout [UInt8]) {
    output += [
      UInt8(value >> 24), UInt8((value >> 16) & 0xff), UInt8((value >> 8) & 0xff),
      UInt8(value & 0xff),
    ]
  }

  /// The name CouchDB's Mango gives an index created without a `name` (and the design
  /// document one created without a `ddoc`, after `_design/`): the hex SHA-1 of
  /// `term_to_binary({Def, lists:usort(Options)})`, where the options are the `_index`
  /// request's validated ones (`ddoc`, `def`, `name`, `partitioned`, `type`, `w`, in that
  /// order, `auto_name` and `db_default` standing for the absent).
  static func mangoIndexName(_ request: JSONObject) -> String {
    let def = Term(request["index"] ?? .null)
    func named(_ member: String) -> Term {
      request[member]?.stringValue.map(Term.binary) ?? .atom("auto_name")
    }
    let partitioned: Term =
      switch request["partitioned"] {
      case .bool(let flag)?: .atom(flag ? "true" : "false")
      default: .atom("db_default")
      }
    let w: Term = request["w"]?.int64Value.map(Term.integer) ?? .integer(2)
    let options: [Term] = [
      .tuple([.atom("ddoc"), named("ddoc")]), .tuple([.atom("def"), def]),
      .tuple([.atom("name"), named("name")]), .tuple([.atom("partitioned"), partitioned]),
      .tuple([.atom("type"), .binary(request["type"]?.stringValue ?? "json")]),
      .tuple([.atom("w"), w]),
    ]
    return Hex.string(ofDigest: SHA1.hash(bytes(.tuple([def, .list(options)]))))
  }
}
