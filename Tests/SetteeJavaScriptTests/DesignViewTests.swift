import Foundation
import Settee
import SetteeCore
import SetteeJavaScript
import Testing

/// JavaScript views of design documents, with CouchDB's documented examples and answers.
@Suite struct DesignViewTests {
  let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
    "settee-js-\(UUID().uuidString)")
  let database: Database

  init() throws {
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    database = try Database(path: directory.appendingPathComponent("js.db").path)
  }

  func collection(_ documents: [JSON], design: JSON) throws -> DocumentCollection {
    let collection = database.collection("docs")
    for document in documents {
      guard case .object(let object) = document else { continue }
      try collection.put(object)
    }
    guard case .object(let ddoc) = design else { throw SetteeError(.invalidArgument, "ddoc") }
    try collection.put(ddoc)
    return collection
  }

  @Test func mapEmitsRowsInCouchDBsOrder() throws {
    let people = try collection(
      [["_id": "a", "name": "Zoë", "age": 30], ["_id": "b", "name": "adam", "age": 25],
       ["_id": "c", "age": 40]],
      design: [
        "_id": "_design/people",
        "views": ["by_name": ["map": "function (doc) { if (doc.name) emit(doc.name, doc.age); }"]],
      ])
    let result = try people.designView("people/by_name").query(ViewQuery())
    // ICU order: "adam" before "Zoë"; the document without a name emits nothing.
    #expect(result.rows.map(\.key) == ["adam", "Zoë"])
    #expect(result.rows.map(\.value) == [25, 30])
    #expect(result.rows.map(\.id) == ["b", "a"])
  }
}
