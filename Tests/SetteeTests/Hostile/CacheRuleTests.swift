import Foundation
import Settee
import SetteeCore
import SetteeTestSupport
import Testing

/// Nothing read inside a write that later rolls back is kept by any cache of the engine.
@Suite("One cache rule")
struct CacheRuleTests {
  let directory = TemporaryDirectory()

  /// An all-or-nothing import that fails after its first records, whose progress callback
  /// read the new collection (and so its uncommitted id).
  func failedImport(into collection: DocumentCollection) {
    let lines =
      (0..<20_000).map { #"{"_id": "i\#($0)"}"# }.joined(separator: "\n") + "\n{not json}\n"
    var bytes = Array(lines.utf8)
    var reader = JSONRecordReader(maxRecordBytes: 1 << 20) {
      defer { bytes = [] }
      return bytes.isEmpty ? nil : bytes
    }
    #expect(throws: SetteeError.self) {
      try collection.importDocuments(from: &reader) { _ in
        _ = try? collection.count()
        _ = try? collection.find(where: "[n] > 0")
      }
    }
  }

  @Test(arguments: [false, true])
  func aRolledBackCollectionsIDIsNeverReused(onFile: Bool) throws {
    let database =
      onFile
      ? try Database(path: directory.path("cache-\(onFile).db"))
      : try Database(inMemoryWith: .init())
    let x = database.collection("x")
    failedImport(into: x)
    #expect(try x.count() == 0)
    let y = database.collection("y")
    try y.put(["_id": "only-in-y"])
    #expect(try x.get("only-in-y") == nil)
    try x.put(["_id": "mine"])
    #expect(try x.get("mine") != nil)
    #expect(try y.get("mine") == nil)
    #expect(try database.collectionNames() == ["x", "y"])
    #expect(try x.count() == 1 && y.count() == 1)
  }
}
