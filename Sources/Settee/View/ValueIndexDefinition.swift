import Foundation
import SetteeCore

/// A stored field index: `{"field": "firstname", "type": "string"}`.
struct ValueIndexDefinition {
  let field: FieldPath
  let type: ValueIndexes.ValueType

  init(field: FieldPath, type: ValueIndexes.ValueType) {
    self.field = field
    self.type = type
  }

  init(json: JSON) throws {
    guard case .string(let path)? = json["field"],
      let type = json["type"]?.stringValue.flatMap(ValueIndexes.ValueType.init(rawValue:))
    else { throw SetteeError(.corruption, "a stored value index definition is damaged: \(json)") }
    self.init(field: try FieldPath(parsing: path, allowingDollar: true), type: type)
  }

  var json: JSON { ["field": .string(field.description), "type": .string(type.rawValue)] }

  var mapper: ViewMapper {
    let field = field
    let type = type
    return ViewMapper(
      version: "field:" + JSONWriter.string(json), collation: .raw, reduce: nil
    ) { document in
      guard let value = JSON.object(document.json).value(at: field) else { return [] }
      let values = value.arrayValue ?? [value]
      return values.compactMap { Self.convert($0, to: type) }.map { (key: $0, value: JSON.null) }
    }
  }

  /// A value as an index of `type` holds it; `nil` when it cannot be (left out).
  static func convert(_ value: JSON, to type: ValueIndexes.ValueType) -> JSON? {
    switch (type, value) {
    case (.string, .string): value
    case (.string, .int), (.string, .double), (.string, .bool): .string(JSONWriter.string(value))
    case (.integer, .int): value
    case (.integer, .double(let number)):
      number.rounded() == number && abs(number) < 9.2e18 ? .int(Int64(number)) : nil
    case (.integer, .string(let text)): Int64(text).map(JSON.int)
    default: nil
    }
  }

  /// The type of a stored index, from its version (`field:{…"type":…}` or
  /// `swift:<type>:<version>`).
  static func type(of view: StoredView) throws -> ValueIndexes.ValueType {
    if view.version.hasPrefix("field:") {
      return try StoredData.reading("the definition of value index \(JSON.string(view.name))") {
        try ValueIndexDefinition(json: JSONParser.parse(String(view.version.dropFirst(6)))).type
      }
    }
    return view.version.hasPrefix("swift:integer:") ? .integer : .string
  }
}
