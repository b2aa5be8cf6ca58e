import Foundation
import SetteeCore
import SetteeTestSupport
import Testing

/// `settee metadata` through the built binary.
@Suite("The settee command: metadata")
struct MetadataCLITests {
  let directory = TemporaryDirectory()

  @Test func setGetListDelete() throws {
    let db = directory.path("meta.db")
    func settee(_ arguments: String...) throws -> SetteeBinary.Run {
      try SetteeBinary.run(["--db", db] + arguments)
    }
    #expect(try settee("metadata", "set", "app", #"{"schema":3}"#).status == 0)
    #expect(try settee("metadata", "set", "name", #""demo""#).status == 0)
    #expect(try JSONParser.parse(settee("metadata", "get", "app").stdout) == ["schema": 3])
    #expect(
      try JSONParser.parse(settee("metadata", "list").stdout) == [
        "app": ["schema": 3], "name": "demo",
      ])
    #expect(try settee("metadata", "delete", "app").status == 0)
    let missing = try settee("metadata", "get", "app")
    #expect(missing.status == 1 && missing.stderr.contains("not_found"))
    #expect(try settee("metadata", "set", "bad", "{").stderr.contains("bad_request"))
  }
}
