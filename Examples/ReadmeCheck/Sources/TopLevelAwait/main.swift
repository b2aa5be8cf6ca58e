// Top-level code that awaits Settee, as a user's `main.swift` writes it. Swift type-checks
// a top-level call as synchronous code, so it would pick a blocking form even under
// `await`; Settee marks those `noasync`, which makes that mistake a compile error
// (Mistakes/TopLevelAwaitMistake, built by CI, must fail). The way that compiles: an
// async function, awaited from the top level.
import Settee

struct Note: Codable, Sendable {
  var _id: String?
  var text: String
}

func main() async throws {
  let notes = try Database(inMemoryWith: .init()).collection("notes")
  try await notes.put(Note(_id: "a", text: "call mike"), id: "a")
  try await notes.insert(["_id": "b", "text": "buy milk"])
  await notes.waitForPendingOperations()
  let count = try await notes.count()
  let found = try await notes.find(Note.self, matching: Field("text") == "call mike")
  guard count == 2, found.map(\.text) == ["call mike"] else {
    fatalError("top-level async check: count \(count), found \(found.map(\.text))")
  }
  print("top-level async code: ok")
}

try await main()
