import Foundation
import Settee
import SetteeCore
import SetteeJavaScript
import SetteeTestSupport
import Testing

/// Compiled design functions are shared only where the design document's body is the same
/// one in the same database (CouchDB's CVE-2023-26268): a database's administrator can
/// write any revision id with any body into their own database (`new_edits: false`), and a
/// function compiled from that body must never run for another database.
@Suite(
  .enabled(
    if: DesignFunctions.isAvailable, "JavaScriptCore (libjavascriptcoregtk-4.1-0) is not installed")
)
struct CompiledFunctionSharingTests {
  let directory = TemporaryDirectory()

  /// A map function that keeps what it saw in its global scope: the same text in both
  /// design documents, so that only the engine's state could carry a victim's value over.
  static let pins =
    "function (doc) { if (doc.pin) globalThis.pin = doc.pin; emit(doc._id, globalThis.pin || null); }"

  /// The victim's design document, written normally, and the attacker's: the same id and
  /// revision with another body, written as a replicator writes.
  static let victimDesign: JSONObject = [
    "_id": "_design/flt",
    "filters": ["f": "function (doc, req) { return doc.type === 'public'; }"],
    "views": [
      "v": ["map": "function (doc) { if (doc.type === this.shown) emit(doc._id, null); }"],
      "pins": ["map": .string(pins)],
    ],
    "shown": "public",
  ]

  static func attackerDesign(rev: String) -> JSONObject {
    [
      "_id": "_design/flt", "_rev": .string(rev),
      // The oracle: passes every document whose `pin` is the guess.
      "filters": ["f": "function (doc, req) { return doc.pin === req.query.guess; }"],
      "views": [
        "v": ["map": "function (doc) { if (doc.type === this.shown) emit(doc._id, null); }"],
        "pins": ["map": .string(pins)],
      ],
      "shown": "secret",
    ]
  }

  static let victimDocuments: [JSONObject] = [
    ["_id": "a", "type": "public"], ["_id": "b", "type": "public"],
    ["_id": "secret", "type": "secret", "pin": "4711"],
  ]

  /// Both orders: the attacker's function compiled first, and the victim's.
  @Test(arguments: [true, false])
  func sameRevisionOtherBodyInAnotherDatabase(attackerFirst: Bool) async throws {
    let database = try Database(path: directory.path("shared.db"))
    let victim = database.collection("victim")
    let open = database.collection("open")
    _ = try await victim.putEach(Self.victimDocuments)
    let rev = try await victim.put(Self.victimDesign).rev.description
    let written = try await open.put(Self.attackerDesign(rev: rev), newEdits: false)
    #expect(written.rev.description == rev)
    _ = try await open.putEach(
      Self.victimDocuments.map {
        var document = $0
        document["pin"] = nil
        return document
      })

    let request = FilterRequest(database: "victim", query: ["guess": "4711"])
    let documents = Self.victimDocuments.map(JSON.object)
    /// What a collection's filter, view as a filter and view answer.
    func answers(_ collection: DocumentCollection) async throws -> ([Bool], [Bool], [JSON]) {
      let filter = try await collection.designFilter("flt/f").keeps(documents, request: request)
      let viewFilter = try await collection.designFilter(view: "flt/v").keeps(
        documents, request: request)
      let rows = try await collection.designView("flt/pins").query(ViewQuery()).rows.map(\.value)
      return (filter, viewFilter, rows)
    }
    var answered: [String: ([Bool], [Bool], [JSON])] = [:]
    for collection in attackerFirst ? [open, victim] : [victim, open] {
      answered[collection.name] = try await answers(collection)
    }
    let (attackers, victims) = (try #require(answered["open"]), try #require(answered["victim"]))
    // Each database's functions, from its own body.
    #expect(victims.0 == [true, true, false])
    #expect(victims.1 == [true, true, false])
    #expect(victims.2 == [.null, .null, "4711"])
    #expect(attackers.0 == [false, false, true])
    #expect(attackers.1 == [false, false, true])
    #expect(attackers.2 == [.null, .null, .null])
  }

  /// Two database files whose design documents are the same revision with other bodies,
  /// open in one process (a server or an app with two files).
  @Test func twoFilesOneProcess() async throws {
    let first = try Database(path: directory.path("one.db")).collection("docs")
    let second = try Database(path: directory.path("two.db")).collection("docs")
    let rev = try await first.put(Self.victimDesign).rev.description
    _ = try await second.put(Self.attackerDesign(rev: rev), newEdits: false)
    let documents = Self.victimDocuments.map(JSON.object)
    let request = FilterRequest(database: "docs", query: ["guess": "4711"])
    #expect(
      try await second.designFilter("flt/f").keeps(documents, request: request)
        == [false, false, true])
    #expect(
      try await first.designFilter("flt/f").keeps(documents, request: request)
        == [true, true, false])
  }
}
