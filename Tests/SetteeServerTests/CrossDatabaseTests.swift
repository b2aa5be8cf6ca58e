import Foundation
import Settee
import SetteeCore
import SetteeJavaScript
import SetteeTestSupport
import Testing

/// What one database's administrator can reach in another database: nothing. The
/// reproduction of the flaw CouchDB fixed as CVE-2023-26268, as it was found against
/// `settee serve`: carol administers `open` and is no member of `victim`; she writes
/// `victim`'s design document id and revision into `open` with a filter of her own
/// (`new_edits: false`) and runs it once; a member of `victim` who then asks for
/// `victim`'s filter must get `victim`'s function, not carol's oracle.
@Suite(
  .enabled(
    if: DesignFunctions.isAvailable, "JavaScriptCore (libjavascriptcoregtk-4.1-0) is not installed")
)
struct CrossDatabaseTests {
  let directory = TemporaryDirectory()

  @Test func aDatabaseAdminsFunctionNeverRunsForAnotherDatabase() async throws {
    let server = try await ServerProcess(
      db: directory.path("cross.db"), ["--log-level", "none", "--admin", "boss"],
      environment: ["SETTEE_ADMIN_PASSWORD": "boss pass"])
    let boss = ServerAuthTests.basic("boss", "boss pass")
    let carol = ServerAuthTests.basic("carol", "carol pass")
    let vic = ServerAuthTests.basic("vic", "vic pass")
    #expect(try await server.request("PUT", "/_users", headers: boss).status == 201)
    for (name, password) in [("carol", "carol pass"), ("vic", "vic pass")] {
      let user = try ServerUsersTests.userDocument(name, password: password, roles: [])
      let answer = try await server.request(
        "PUT", "/_users/org.couchdb.user:\(name)", json: user, headers: boss)
      #expect(answer.status == 201)
    }
    for (database, security): (String, JSON) in [
      ("open", ["admins": ["names": ["carol"]], "members": ["names": ["carol"]]]),
      ("victim", ["members": ["names": ["vic"]]]),
    ] {
      #expect(try await server.request("PUT", "/" + database, headers: boss).status == 201)
      let answer = try await server.request(
        "PUT", "/\(database)/_security", json: security, headers: boss)
      #expect(answer.status == 200)
    }
    let secrets: JSON = [
      "docs": [
        ["_id": "a", "type": "public"], ["_id": "b", "type": "public"],
        ["_id": "secret", "type": "secret", "pin": "4711"],
      ]
    ]
    #expect(
      try await server.request("POST", "/victim/_bulk_docs", json: secrets, headers: boss).status
        == 201)
    let design: JSON = [
      "filters": ["f": "function (doc, req) { return doc.type === 'public'; }"],
      "views": ["v": ["map": "function (doc) { if (doc.type === 'public') emit(doc._id); }"]],
    ]
    let created = try await server.request(
      "PUT", "/victim/_design/flt", json: design, headers: boss)
    #expect(created.status == 201)
    let rev = try #require(created.json["rev"]?.stringValue)

    // Carol cannot read victim, and writes its design document's id and revision into
    // her own database with her own functions: an oracle on the secret's pin.
    #expect(try await server.request("GET", "/victim/secret", headers: carol).status == 403)
    let forged: JSON = [
      "new_edits": false,
      "docs": [
        [
          "_id": "_design/flt", "_rev": .string(rev),
          "filters": ["f": "function (doc, req) { return doc.pin === req.query.guess; }"],
          "views": [
            "v": ["map": "function (doc) { if (doc.pin === '4711') emit(doc._id); }"]
          ],
        ]
      ],
    ]
    #expect(
      try await server.request("POST", "/open/_bulk_docs", json: forged, headers: carol).status
        == 201)
    let own = try await server.request(
      "GET", "/open/_design/flt", headers: carol)
    #expect(own.json["_rev"]?.stringValue == rev)
    for path in [
      "/open/_changes?filter=flt/f&guess=4711", "/open/_changes?filter=_view&view=flt/v",
    ] {
      let answer = try await server.request("GET", path, headers: carol)
      #expect(answer.status == 200, "\(path): \(answer.json)")
    }

    // Vic, a member of victim, asks for victim's filter: victim's own function runs.
    for path in [
      "/victim/_changes?filter=flt/f&guess=4711", "/victim/_changes?filter=_view&view=flt/v",
    ] {
      let answer = try await server.request("GET", path, headers: vic)
      #expect(answer.status == 200)
      let ids = answer.json["results"]?.arrayValue?.compactMap { $0["id"]?.stringValue }
      #expect(ids.map { Set($0) } == ["a", "b"], "\(path)")
    }
  }
}
