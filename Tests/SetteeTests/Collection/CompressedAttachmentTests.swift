import Foundation
import Settee
import SetteeCore
import SetteeTestSupport
import Testing

/// Compressible attachments are stored as CouchDB stores them (issue 55, item 3): gzip at
/// level 8, so that their digests are CouchDB's and replicas of one revision agree.
@Suite("Compressible attachments stored as CouchDB stores them")
struct CompressedAttachmentTests {
  /// Every attachment with inline data that CouchDB 3.5.0 answered in the conformance
  /// recording, with CouchDB's digest.
  static func recorded() throws -> [(type: String, data: [UInt8], digest: String)] {
    let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
      .deletingLastPathComponent().deletingLastPathComponent()
      .appendingPathComponent("Fixtures/couchdb-wire/conformance/recording-1.json")
    let recording = try JSONParser.parse(Array(try Data(contentsOf: url)))
    var found: [(String, [UInt8], String)] = []
    for request in recording["requests"]?.arrayValue ?? [] {
      guard let attachments = request["expected"]?["json"]?["_attachments"]?.objectValue
      else { continue }
      for member in attachments {
        guard let data = member.value["data"]?.stringValue,
          let bytes = Data(base64Encoded: data), let type = member.value["content_type"]?.stringValue,
          let digest = member.value["digest"]?.stringValue
        else { continue }
        found.append((type, Array(bytes), digest))
      }
    }
    return found
  }

  @Test func digestsAreCouchDBs() throws {
    let recorded = try Self.recorded()
    #expect(recorded.count >= 10)
    #expect(recorded.contains { Gzip.isCompressible(contentType: $0.type) })
    let docs = try Database(inMemoryWith: .init()).collection()
    for (index, attachment) in recorded.enumerated() {
      // Inline, and streamed a chunk at a time: the same digest either way.
      let id = "d\(index)"
      var document = Document(id: id)
      document.attachments = [
        Attachment(name: "a", contentType: attachment.type, data: attachment.data)
      ]
      try docs.put(document)
      var chunks = stride(from: 0, to: attachment.data.count, by: 7).map {
        Array(attachment.data[$0..<min($0 + 7, attachment.data.count)])
      }[...]
      try docs.putAttachment("b", to: "s\(index)", rev: nil, contentType: attachment.type) {
        chunks.popFirst()
      }
      for (document, name) in [(id, "a"), ("s\(index)", "b")] {
        let stub = try #require(try docs.attachments(of: document).first { $0.name == name })
        #expect(stub.digest == attachment.digest, "\(attachment.type), \(document)")
        #expect(stub.length == Int64(attachment.data.count))
        #expect(stub.encoding == (Gzip.isCompressible(contentType: attachment.type) ? "gzip" : nil))
        #expect(try docs.attachment(name, of: document)?.data == attachment.data)
      }
    }
  }
}
