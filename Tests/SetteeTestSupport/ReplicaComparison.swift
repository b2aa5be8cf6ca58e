import Foundation
import Settee
import SetteeCore

/// The tests' comparison of two replicas: every document's every leaf (deleted ones too),
/// with its revision history and its attachments' bytes, must be the same on both sides.
package enum ReplicaComparison {
  /// What differs, one line per document (empty when the replicas are equal).
  package static func differences(_ first: DocumentCollection, _ second: DocumentCollection)
    async throws -> [String]
  {
    let ids =
      Set(try await first.changes().map(\.id)).union(try await second.changes().map(\.id))
    var differences: [String] = []
    for id in ids.sorted() {
      let one = try await leaves(first, id)
      let other = try await leaves(second, id)
      if one != other {
        differences.append(
          "\(id): \(JSONWriter.string(.array(one))) ≠ \(JSONWriter.string(.array(other)))")
      }
    }
    return differences
  }

  /// Every leaf of a document, sorted by revision, with `_revisions` and attachment data.
  package static func leaves(_ collection: DocumentCollection, _ id: String) async throws -> [JSON]
  {
    let answers = try await collection.openRevisions(
      id, nil, options: RevisionReadOptions(revs: true, attachments: true))
    return answers.compactMap { answer -> JSON? in
      guard case .found(let document) = answer else { return nil }
      return .object(document)
    }.sorted { ($0["_rev"]?.stringValue ?? "") < ($1["_rev"]?.stringValue ?? "") }
  }
}
