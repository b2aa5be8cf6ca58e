import Foundation

extension JSON: Codable {
  public init(from decoder: any Decoder) throws {
    if var array = try? decoder.unkeyedContainer() {
      var elements: [JSON] = []
      while !array.isAtEnd { elements.append(try array.decode(JSON.self)) }
      self = .array(elements)
      return
    }
    if let object = try? decoder.container(keyedBy: AnyCodingKey.self) {
      var members = JSONObject()
      for key in object.allKeys {
        members[key.stringValue] = try object.decode(JSON.self, forKey: key)
      }
      self = .object(members)
      return
    }
    let single = try decoder.singleValueContainer()
    if single.decodeNil() {
      self = .null
    } else if let flag = try? single.decode(Bool.self) {
      self = .bool(flag)
    } else if let number = try? single.decode(Int64.self) {
      self = .int(number)
    } else if let number = try? single.decode(UInt64.self) {
      self = .largeInteger(String(number))
    } else if let number = try? single.decode(Double.self) {
      self = .double(number)
    } else {
      self = .string(try single.decode(String.self))
    }
  }

  public func encode(to encoder: any Encoder) throws {
    switch self {
    case .null:
      var single = encoder.singleValueContainer()
      try single.encodeNil()
    case .bool(let flag):
      var single = encoder.singleValueContainer()
      try single.encode(flag)
    case .int(let number):
      var single = encoder.singleValueContainer()
      try single.encode(number)
    case .double(let number):
      var single = encoder.singleValueContainer()
      try single.encode(number)
    case .largeInteger(let digits):
      // Exactly when it fits an unsigned 64-bit integer, else as the nearest double.
      var single = encoder.singleValueContainer()
      if let number = UInt64(digits) {
        try single.encode(number)
      } else {
        try single.encode(Double(digits) ?? 0)
      }
    case .string(let string):
      var single = encoder.singleValueContainer()
      try single.encode(string)
    case .array(let elements):
      var array = encoder.unkeyedContainer()
      for element in elements { try array.encode(element) }
    case .object(let object):
      var container = encoder.container(keyedBy: AnyCodingKey.self)
      for member in object { try container.encode(member.value, forKey: AnyCodingKey(member.key)) }
    }
  }
}

struct AnyCodingKey: CodingKey {
  var stringValue: String
  var intValue: Int? { nil }
  init(_ string: String) { stringValue = string }
  init?(stringValue: String) { self.stringValue = stringValue }
  init?(intValue: Int) { stringValue = String(intValue) }
}

extension JSON {
  /// The JSON form of an `Encodable` value, as `encoder` writes it.
  ///
  /// - Throws: the encoder's error, or ``SetteeError`` when its output is not valid JSON.
  public init(encoding value: some Encodable, encoder: JSONEncoder = JSONEncoder()) throws {
    let data = try encoder.encode(value)
    self = try JSONParser.parse([UInt8](data))
  }

  /// Decodes a `Decodable` value from this JSON.
  ///
  /// - Throws: ``SetteeError`` with code `invalidDocument` that names the key path and
  ///   what was wrong (the decoder's `DecodingError` is kept as its cause).
  public func decode<T: Decodable>(
    _ type: T.Type = T.self, decoder: JSONDecoder = JSONDecoder()
  ) throws -> T {
    do {
      return try decoder.decode(type, from: Data(JSONWriter.bytes(self)))
    } catch let error as DecodingError {
      throw SetteeError(
        .invalidDocument, "cannot decode \(T.self): \(JSON.describe(error))", cause: "\(error)",
        underlyingError: error)
    }
  }

  /// A decoding error in a sentence: where (as a dotted path) and what.
  static func describe(_ error: DecodingError) -> String {
    func path(_ codingPath: [any CodingKey]) -> String {
      let text = codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue }
        .joined(separator: ".")
      return text.isEmpty ? "the top level" : JSONWriter.string(.string(text))
    }
    switch error {
    case .keyNotFound(let key, let context):
      return "member \(path(context.codingPath + [key])) is missing"
    case .typeMismatch(let type, let context):
      return "\(path(context.codingPath)) is not \(type) (\(context.debugDescription))"
    case .valueNotFound(let type, let context):
      return "\(path(context.codingPath)) is null, where \(type) was expected"
    case .dataCorrupted(let context):
      return "\(path(context.codingPath)): \(context.debugDescription)"
    @unknown default:
      return "\(error)"
    }
  }
}

extension Document {
  /// Decodes the document (with its `_id` and `_rev`) as a `Decodable` value.
  ///
  /// - Throws: ``SetteeError`` with code `invalidDocument` naming the document and the
  ///   key path that did not decode.
  public func decode<T: Decodable>(
    _ type: T.Type = T.self, decoder: JSONDecoder = JSONDecoder()
  ) throws -> T {
    do {
      return try JSON.object(json).decode(type, decoder: decoder)
    } catch var error as SetteeError {
      error.message = "document \(JSONWriter.string(.string(id))): " + error.message
      error.documentID = id
      throw error
    }
  }
}
