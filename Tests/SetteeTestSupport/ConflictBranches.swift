import SetteeCore

/// A document with `count` conflicting leaves, as a peer's replicator would write them
/// (`new_edits: false`): revisions `2-<n>` on one common `1-aaa…`.
package func conflictBranches(_ id: String, _ count: Int) -> [JSONObject] {
  (0..<count).map { number in
    let hash = String(format: "%032x", number + 1)
    return [
      "_id": .string(id), "_rev": .string("2-\(hash)"),
      "_revisions": [
        "start": 2, "ids": [.string(hash), .string(String(repeating: "a", count: 32))],
      ],
      "branch": .int(Int64(number)),
    ]
  }
}
