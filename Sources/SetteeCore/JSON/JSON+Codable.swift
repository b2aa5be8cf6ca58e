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
  public func decode<T: Decodable>(
    _ type: T.Type = T.self, decoder: JSONDecoder = JSONDecoder()
  ) throws -> T {
    try decoder.decode(type, from: Data(JSONWriter.bytes(self)))
  }
}

extension Document {
  /// Decodes the document (with its `_id` and `_rev`) as a `Decodable` value.
  public func decode<T: Decodable>(
    _ type: T.Type = T.self, decoder: JSONDecoder = JSONDecoder()
  ) throws -> T {
    try JSON.object(json).decode(type, decoder: decoder)
  }
}
