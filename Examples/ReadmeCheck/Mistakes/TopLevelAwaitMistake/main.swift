// The mistake Settee turns into a compile error: in top-level code Swift resolves these
// awaited calls to the blocking forms (it only warns "no 'async' operations occur within
// 'await' expression"), which would block the main thread. Settee's blocking forms are
// `noasync`, so each line below must fail to compile; CI checks that it does.
import Settee

let notes = try Database(inMemoryWith: .init()).collection("notes")
let count = try await notes.count()
try await notes.insert(["_id": "b", "text": "buy milk"])
await notes.waitForPendingOperations()
print(count)

// A task's closure with no `await` in it is still async code: a blocking call there
// would hold one of the few threads Swift's concurrency runs on.
func save(_ notes: DocumentCollection) {
  Task { try notes.insert(["_id": "c", "text": "pay rent"]) }
}
