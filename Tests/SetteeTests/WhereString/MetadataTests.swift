import Foundation
import Settee
import SetteeCore
import SetteeTestSupport
import Testing

/// Seed 003's store-wide metadata: any JSON by key, kept in the file.
@Suite("Metadata")
struct MetadataTests {
  let directory = TemporaryDirectory()

  @Test func valuesRoundTripAndPersist() throws {
    let path = directory.path("meta.db")
    do {
      let db = try Database(path: path)
      let values: [JSON] = [nil, true, 42, 1.5, "text", ["a", 1], ["nested": ["x": [1, 2]]]]
      for (index, value) in values.enumerated() { try db.setMetadata(value, forKey: "k\(index)") }
      for (index, value) in values.enumerated() {
        #expect(try db.metadata(forKey: "k\(index)") == value)
      }
      try db.setMetadata("replaced", forKey: "k1")
      try db.setMetadata(nil, forKey: "k2")
      #expect(try db.metadata(forKey: "k2") == nil)
      #expect(try db.metadata(forKey: "absent") == nil)
      expectError(.invalidArgument) { try db.setMetadata(1, forKey: "a\u{0}b") }
    }
    let reopened = try Database(path: path, configuration: .init(readOnly: true))
    #expect(try reopened.metadata(forKey: "k1") == "replaced")
    #expect(try reopened.metadataKeys() == ["k0", "k1", "k3", "k4", "k5", "k6"])
  }

  @Test func metadataHasAsyncForms() async throws {
    let db = try Database(inMemoryWith: .init())
    try await db.setMetadata(["schema": 3], forKey: "app")
    #expect(try await db.metadata(forKey: "app") == ["schema": 3])
    #expect(try await db.metadataKeys() == ["app"])
  }
}
