import SetteeCore
import Testing

/// What a declarative definition's first rule says of its value, which decides whether the
/// view is mapped in SQL (a `null` value, fields, or the document) or in Swift (any other
/// constant). A definition without a value once read as "not statable as fields" and sent
/// every such view to Swift mapping, five times slower to build.
@Suite("Declarative view definitions: the first rule's value")
struct ViewDefinitionShapeTests {
  @Test(arguments: [
    (#"{"name":"v","key":"k"}"#, ViewDefinition.Value?.some(.none)),
    (#"{"name":"v","key":"k","value":null}"#, .some(.none)),
    (#"{"name":"v","key":"k","value":"a.b"}"#, .some(.field(FieldPath(components: ["a", "b"])))),
    (
      #"{"name":"v","key":"k","value":["a","b"]}"#,
      .some(.fields([FieldPath(components: ["a"]), FieldPath(components: ["b"])]))
    ),
    (#"{"name":"v","key":"k","value":"_doc"}"#, .some(.document)),
    (#"{"name":"v","key":"k","value":{"const":5}}"#, nil),
  ])
  func value(_ text: String, _ expected: ViewDefinition.Value?) throws {
    let definition = try ViewDefinition(json: JSONParser.parse(text))
    #expect(definition.value == expected)
  }
}
