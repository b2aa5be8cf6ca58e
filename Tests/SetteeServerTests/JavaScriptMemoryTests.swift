import Foundation
import Settee
import SetteeCore
import SetteeJavaScript
import SetteeTestSupport
import Testing

/// JavaScript that allocates without end (issue 57, item 6: a database admin's map function
/// took the server from 40 MB to 5.9 GB before its time limit stopped it): a view, a
/// `validate_doc_update` and a filter that keeps what it allocates in its global scope are
/// each stopped at their memory limit with a clear error, again and again, while the
/// server stays under 200 MB and goes on answering.
@Suite(
  .enabled(
    if: DesignFunctions.isAvailable, "JavaScriptCore (libjavascriptcoregtk-4.1-0) is not installed")
)
struct JavaScriptMemoryTests {
  let directory = TemporaryDirectory()

  static let bomb = "var a = []; while (true) a.push(new Array(1000000).fill(1.5));"

  /// The server's peak resident size so far, in bytes (Linux's `VmHWM`).
  static func peakResident(_ server: ServerProcess) throws -> Int {
    let status = try String(
      contentsOfFile: "/proc/\(server.process.processIdentifier)/status", encoding: .utf8)
    let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") })
    let kilobytes = try #require(Int(line.split(separator: " ").dropFirst().first ?? ""))
    return kilobytes << 10
  }

  @Test func functionsThatAllocateWithoutEndAreStopped() async throws {
    let server = try await ServerProcess(db: directory.path("bomb.db"))
    #expect(try await server.request("PUT", "/db").status == 201)
    #expect(try await server.put("/db/a", ["x": 1]).status == 201)
    let design: JSON = [
      "views": ["v": ["map": .string("function (doc) { \(Self.bomb) }")]],
      "validate_doc_update": .string("function (doc) { if (doc.bomb) { \(Self.bomb) } }"),
      "filters": [
        "f":
          "function (doc, req) { globalThis.keep = []; while (true) keep.push(new Array(1000000).fill(1.5)); }"
      ],
    ]
    #expect(try await server.put("/db/_design/bomb", design).status == 201)
    for round in 0..<3 {
      for (method, path, body): (String, String, JSON?) in [
        ("GET", "/db/_design/bomb/_view/v", nil), ("PUT", "/db/b\(round)", ["bomb": true]),
        ("GET", "/db/_changes?filter=bomb/f", nil),
      ] {
        // Raw: Foundation's URLSession on Linux failed this request with "resource exceeds
        // maximum size" while every other client read the answer.
        let answer = try await RawHTTP.send(
          WireMessage(
            method: method, path: path, headers: [("Content-Type", "application/json")],
            body: body.map { JSONWriter.bytes($0) } ?? []), to: server)
        #expect([400, 500].contains(answer.status), "\(path): \(answer.status)")
        #expect(
          answer.json?["reason"]?.stringValue?.contains("memory limit") == true,
          "\(path): \(String(decoding: answer.body, as: UTF8.self))")
      }
    }
    // The server goes on: a write, and the view of another design document.
    #expect(try await server.put("/db/c", ["ok": true]).status == 201)
    let fine: JSON = ["views": ["ids": ["map": "function (doc) { emit(doc._id, null); }"]]]
    #expect(try await server.put("/db/_design/fine", fine).status == 201)
    #expect(try await server.get("/db/_design/fine/_view/ids").json["total_rows"] == 2)
    let peak = try Self.peakResident(server)
    #expect(peak < 200 << 20, "the server grew to \(peak >> 20) MB")
  }
}
