import Foundation
import Settee
import SetteeCore
import SetteeReplication
import SetteeJavaScript
import SetteeTestSupport
import Testing

/// `validate_doc_update` on every write `settee serve` takes, as CouchDB runs it (issue 47):
/// single and bulk writes, replicated ones, deletions, attachments, with CouchDB's statuses
/// and shapes; never on design or local documents.
@Suite(
  "settee serve: validate_doc_update",
  .enabled(if: DesignFunctions.isAvailable, "JavaScriptCore is not installed"))
struct ValidationServerTests {
  let directory = TemporaryDirectory()

  static let rules = """
    function (newDoc, oldDoc, userCtx, secObj) {
      if (newDoc._deleted) {
        if (oldDoc && oldDoc.locked) throw({forbidden: 'locked: ' + oldDoc._id});
        return;
      }
      if (typeof newDoc._id !== 'string') throw({forbidden: 'no _id'});
      if (!newDoc.title) throw({forbidden: 'a title is required'});
      if (newDoc.secret) throw({unauthorized: 'secrets need a name'});
      if (newDoc.boom) throw new TypeError('boom');
      if (newDoc.plain) throw 'plain';
      if (oldDoc && oldDoc.title !== newDoc.title) {
        throw({forbidden: 'title changed from ' + oldDoc.title + ' at ' + oldDoc._revisions.start});
      }
      var atts = newDoc._attachments || {};
      if (atts['bad.txt']) throw({forbidden: 'no bad.txt (' + atts['bad.txt'].length + ' bytes)'});
      if (newDoc.who !== undefined) {
        var seen = userCtx.db + '|' + userCtx.roles.join(',') + '|' + (secObj.admins ? secObj.admins.names.join(',') : '-');
        if (newDoc.who !== seen) throw({forbidden: seen});
      }
    }
    """

  @Test func everyWriteIsJudged() async throws {
    let server = try await ServerProcess(db: directory.path("validated.db"))
    defer { _ = server.stop() }
    #expect(try await server.put("/v", [:]).status == 201)
    #expect(
      try await server.put("/v/_design/rules", ["validate_doc_update": .string(Self.rules)])
        .status == 201)

    // Single writes: 403 forbidden, 401 unauthorized, 500 for an Error or a string thrown.
    let untitled = try await server.put("/v/a", ["n": 1])
    #expect(untitled.status == 403)
    #expect(untitled.json == ["error": "forbidden", "reason": "a title is required"])
    #expect(try await server.get("/v/a").status == 404)
    let created = try await server.put("/v/a", ["title": "x"])
    #expect(created.status == 201)
    let rev = created.json["rev"]!.stringValue!
    // The old document is the revision replaced, with its _revisions.
    let renamed = try await server.put("/v/a", ["_rev": .string(rev), "title": "y"])
    #expect(renamed.json == ["error": "forbidden", "reason": "title changed from x at 1"])
    let secret = try await server.post("/v", ["title": "s", "secret": true])
    #expect(secret.status == 401)
    #expect(secret.json == ["error": "unauthorized", "reason": "secrets need a name"])
    let boom = try await server.put("/v/b", ["title": "b", "boom": true])
    #expect(boom.status == 500 && boom.error == "TypeError", "\(boom.json)")
    let plain = try await server.put("/v/c", ["title": "c", "plain": true])
    #expect(plain.status == 500)
    #expect(plain.json == ["error": "unknown_error", "reason": "plain"])

    // userCtx (an admin party's administrator), the database's name and its _security.
    #expect(
      try await server.put("/v/_security", ["admins": ["names": ["ann"], "roles": []]]).status
        == 200)
    let who = try await server.put("/v/w", ["title": "w", "who": "v|_admin|ann"])
    #expect(who.status == 201, "\(who.json)")

    // Deletions: the function sees {_id, _rev, _deleted} over the old revision.
    let locked = try await server.put("/v/l", ["title": "l", "locked": true])
    let lockedRev = locked.json["rev"]!.stringValue!
    let refusedDelete = try await server.delete("/v/l?rev=\(lockedRev)")
    #expect(refusedDelete.status == 403 && refusedDelete.json["reason"] == "locked: l")
    #expect(try await server.get("/v/l").status == 200)

    // Attachments: the new revision with the attachment as a stub.
    let bad = try await server.request(
      "PUT", "/v/a/bad.txt?rev=\(rev)", body: Array("12345".utf8),
      headers: ["Content-Type": "text/plain"])
    #expect(bad.status == 403 && bad.json["reason"] == "no bad.txt (5 bytes)", "\(bad.json)")
    let good = try await server.request(
      "PUT", "/v/a/good.txt?rev=\(rev)", body: Array("hi".utf8),
      headers: ["Content-Type": "text/plain"])
    #expect(good.status == 201, "\(good.json)")

    // _bulk_docs: each document judged, the refused ones answered in place.
    let bulk = try await server.post(
      "/v/_bulk_docs",
      ["docs": [["_id": "d", "title": "d"], ["_id": "e"], ["_id": "f", "title": "f"]]])
    #expect(bulk.status == 201)
    let answers = bulk.json.arrayValue ?? []
    #expect(answers.map { $0["id"] } == ["d", "e", "f"])
    #expect(answers.map { $0["ok"] } == [true, nil, true])
    #expect(answers[1] == ["id": "e", "error": "forbidden", "reason": "a title is required"])
    #expect(try await server.get("/v/e").status == 404)
    // A document without _id has its id when the functions see it, as in CouchDB.
    let unnamed = try await server.post("/v/_bulk_docs", ["docs": [["title": "t"]]])
    #expect(unnamed.json[0]?["ok"] == true, "\(unnamed.json)")
    let generated = try #require(unnamed.json[0]?["id"]?.stringValue)
    #expect(try await server.get("/v/\(generated)").json["title"] == "t")

    // Replicated writes (new_edits=false) too: CouchDB lists the refused ones.
    let replicated = try await server.post(
      "/v/_bulk_docs",
      [
        "new_edits": false,
        "docs": [
          ["_id": "g", "_rev": "1-abc"], ["_id": "h", "_rev": "1-def", "title": "h"],
        ],
      ])
    #expect(replicated.status == 201)
    #expect(
      replicated.json == [
        ["id": "g", "rev": "1-abc", "error": "forbidden", "reason": "a title is required"]
      ])
    #expect(try await server.get("/v/g").status == 404)
    #expect(try await server.get("/v/h").status == 200)
    let single = try await server.put("/v/i?new_edits=false", ["_rev": "1-abc"])
    #expect(single.status == 403)

    // Design and local documents are not validated.
    #expect(try await server.put("/v/_local/x", ["n": 1]).status == 201)
    #expect(try await server.put("/v/_design/other", ["n": 1]).status == 201)

    // A changed design document is compiled again: this one accepts everything.
    let ddoc = try await server.get("/v/_design/rules").json
    #expect(
      try await server.put(
        "/v/_design/rules",
        ["_rev": ddoc["_rev"]!, "validate_doc_update": "function (newDoc) {}"]
      ).status == 201)
    #expect(try await server.put("/v/e", ["n": 1]).status == 201)
  }

  /// A hostile validate_doc_update cannot hang or crash the server: an endless loop is
  /// stopped at the time limit and answered; a function that does not compile refuses the
  /// writes it would judge, and the design document can still be fixed.
  @Test func hostileFunctionsAreContained() async throws {
    let server = try await ServerProcess(
      db: directory.path("hostile.db"), ["--log-level", "none", "--os-process-timeout", "0.5"])
    defer { _ = server.stop() }
    #expect(try await server.put("/h", [:]).status == 201)
    let loop = try await server.put(
      "/h/_design/loop", ["validate_doc_update": "function (doc) { while (true) {} }"])
    #expect(loop.status == 201)
    // It ends (how soon is the limit's, not a test's to time: under the whole suite on two
    // cores the request took 14.5 s and 89 s).
    let stopped = try await server.put("/h/a", ["n": 1])
    #expect(stopped.status == 500 && stopped.error == "os_process_error", "\(stopped.json)")
    // Deep recursion and a thrown non-object are errors, not crashes.
    let rev = loop.json["rev"]!
    #expect(
      try await server.put(
        "/h/_design/loop",
        [
          "_rev": rev,
          "validate_doc_update": "function f(doc) { if (doc.deep) return f(doc); throw 42; }",
        ]
      ).status == 201)
    let deep = try await server.put("/h/b", ["deep": true])
    #expect(deep.status == 500, "\(deep.json)")
    let number = try await server.put("/h/c", ["n": 1])
    #expect(number.status == 500 && number.error == "unknown_error", "\(number.json)")
    // A function that does not compile.
    let current = try await server.get("/h/_design/loop").json["_rev"]!
    #expect(
      try await server.put(
        "/h/_design/loop", ["_rev": current, "validate_doc_update": "function ( {"]
      ).status == 201)
    let broken = try await server.put("/h/d", ["n": 1])
    #expect(broken.status == 400 && broken.error == "compilation_error", "\(broken.json)")
    let fixed = try await server.get("/h/_design/loop").json["_rev"]!
    #expect(
      try await server.put(
        "/h/_design/loop", ["_rev": fixed, "validate_doc_update": "function (doc) {}"]
      ).status == 201)
    #expect(try await server.put("/h/d", ["n": 1]).status == 201)
    #expect(try await server.get("/_up").status == 200)
  }

  /// A replication into a collection of a file runs the target's validate_doc_update on
  /// each revision, as CouchDB's target does: refused documents are counted and named, the
  /// others written, and the replication completes.
  @Test func replicatedWritesAreJudgedByTheTarget() async throws {
    let source = try Database(path: directory.path("source.db")).collection("notes")
    let target = try Database(path: directory.path("target.db")).collection("notes")
    try await source.putAll([
      ["_id": "a", "kind": "memo"], ["_id": "b"], ["_id": "c", "kind": "memo"], ["_id": "d"],
    ])
    try await target.put([
      "_id": "_design/rules",
      "validate_doc_update":
        "function (doc) { if (!doc._deleted && !doc.kind) throw({forbidden: 'a kind is required'}); }",
    ])
    let progress = try await Replicator(
      ReplicationConfiguration(source: .collection(source), target: .collection(target))
    ).run()
    #expect(progress.state == .completed)
    #expect(progress.docWriteFailures == 2)
    #expect(Set(progress.failures.map(\.id)) == ["b", "d"])
    #expect(progress.failures.allSatisfy { $0.error == "forbidden" && $0.reason == "a kind is required" })
    for id in ["a", "c"] { #expect(try await target.get(id) != nil, "\(id)") }
    for id in ["b", "d"] { #expect(try await target.get(id) == nil, "\(id)") }
  }
}
