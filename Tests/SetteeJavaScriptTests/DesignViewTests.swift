import Foundation
import Settee
import SetteeCore
import SetteeJavaScript
import Testing

/// JavaScript views of design documents, with CouchDB's documented examples and answers.
/// Skipped where JavaScriptCore is not installed (a newcomer's machine); `.ci/run` installs
/// it and fails when this suite did not run.
@Suite(.enabled(if: DesignFunctions.isAvailable, "JavaScriptCore (libjavascriptcoregtk-4.1-0) is not installed"))
struct DesignViewTests {
  let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
    "settee-js-\(UUID().uuidString)")
  let database: Database

  init() throws {
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    database = try Database(path: directory.appendingPathComponent("js.db").path)
  }

  func collection(_ documents: [JSON], design: JSON) throws -> DocumentCollection {
    let collection = database.collection("docs")
    for document in documents {
      guard case .object(let object) = document else { continue }
      try collection.put(object)
    }
    guard case .object(let ddoc) = design else { throw SetteeError(.invalidArgument, "ddoc") }
    try collection.put(ddoc)
    return collection
  }

  @Test func mapEmitsRowsInCouchDBsOrder() throws {
    let people = try collection(
      [["_id": "a", "name": "Zoë", "age": 30], ["_id": "b", "name": "adam", "age": 25],
       ["_id": "c", "age": 40]],
      design: [
        "_id": "_design/people",
        "views": ["by_name": ["map": "function (doc) { if (doc.name) emit(doc.name, doc.age); }"]],
      ])
    let result = try people.designView("people/by_name").query(ViewQuery())
    // ICU order: "adam" before "Zoë"; the document without a name emits nothing.
    #expect(result.rows.map(\.key) == ["adam", "Zoë"])
    #expect(result.rows.map(\.value) == [25, 30])
    #expect(result.rows.map(\.id) == ["b", "a"])
  }

  /// The recipes of CouchDB's guide to views ("Introduction to Views"): blog posts by date,
  /// with the built-in and JavaScript reduces giving the documented sums and counts.
  @Test func couchDBsBlogExampleWithReduces() throws {
    let posts: [JSON] = [
      ["_id": "biking", "title": "Biking", "date": "2009/01/30 18:04:11", "tags": ["a", "b"]],
      ["_id": "bought-a-cat", "title": "Bought a Cat", "date": "2009/02/17 21:13:39",
       "tags": ["b"]],
      ["_id": "hello-world", "title": "Hello World", "date": "2009/01/15 15:52:20",
       "tags": ["a", "b", "c"]],
    ]
    let blog = try collection(
      posts,
      design: [
        "_id": "_design/blog",
        "views": [
          "by_date": ["map": "function(doc) { if(doc.date && doc.title) { emit(doc.date, doc.title); } }"],
          "tag_count": [
            "map": "function(doc) { if (doc.tags) { doc.tags.forEach(function(tag) { emit(tag, 1); }); } }",
            "reduce": "function(keys, values, rereduce) { return sum(values); }",
          ],
          "tags_builtin": [
            "map": "function(doc) { if (doc.tags) { for (var i in doc.tags) emit(doc.tags[i], null); } }",
            "reduce": "_count",
          ],
        ],
      ])
    let byDate = try blog.designView("blog/by_date").query(ViewQuery())
    #expect(byDate.rows.map(\.value) == ["Hello World", "Biking", "Bought a Cat"])
    let ranged = try blog.designView("_design/blog/by_date").query(
      ViewQuery(startKey: "2009/01/30 18:04:11", endKey: "2010/01/01 00:00:00"))
    #expect(ranged.rows.map(\.id) == ["biking", "bought-a-cat"])
    for name in ["blog/tag_count", "blog/tags_builtin"] {
      let grouped = try blog.designView(name).query(ViewQuery(group: true))
      #expect(grouped.rows.map(\.key) == ["a", "b", "c"], "\(name)")
      #expect(grouped.rows.map(\.value) == [2, 3, 1], "\(name)")
      #expect(try blog.designView(name).query(ViewQuery()).rows.map(\.value) == [6], "\(name)")
    }
  }

  /// CommonJS modules under views.lib, required by path, relative paths, and a module that
  /// requires another; anything outside views.lib is refused (the document is skipped).
  @Test func requireLoadsModulesUnderViewsLib() throws {
    let docs = try collection(
      [["_id": "x", "n": 3]],
      design: [
        "_id": "_design/lib",
        "secret": "exports.x = 1;",
        "views": [
          "lib": [
            "math": "var twice = require('./twice').twice; exports.square = function (n) { return twice(n) * n / 2; };",
            "twice": "exports.twice = function (n) { return 2 * n; };",
          ],
          "squares": ["map": "function (doc) { emit(doc._id, require('views/lib/math').square(doc.n)); }"],
          "outside": ["map": "function (doc) { emit(doc._id, require('secret').x); }"],
        ],
      ])
    #expect(try docs.designView("lib/squares").query(ViewQuery()).rows.map(\.value) == [9])
    let outside = try docs.designView("lib/outside").query(ViewQuery())
    #expect(outside.rows.isEmpty)
    #expect(outside.errors.first?.message.contains("only load modules under views.lib") == true)
  }

  /// CouchDB's rule: a map function that throws for one document skips that document and
  /// the others are indexed; the error is reported with the view's results.
  @Test func aThrowingMapSkipsOnlyThatDocument() throws {
    let docs = try collection(
      [["_id": "good", "v": 1], ["_id": "bad", "v": 2], ["_id": "deep", "v": 3]],
      design: [
        "_id": "_design/t",
        "views": [
          "v": [
            "map": """
              function (doc) {
                if (doc._id === 'bad') throw({forbidden: 'no ' + doc._id});
                if (doc._id === 'deep') { var f = function (n) { return f(n + 1) + 1; }; f(0); }
                emit(doc._id, doc.v);
              }
              """
          ]
        ],
      ])
    let result = try docs.designView("t/v").query(ViewQuery())
    #expect(result.rows.map(\.id) == ["good"])
    let errors = Dictionary(uniqueKeysWithValues: result.errors.map { ($0.documentID, $0.message) })
    #expect(errors["bad"]?.contains(#"{"forbidden":"no bad"}"#) == true)
    #expect(errors["deep"]?.contains("RangeError") == true)
  }

  /// Hostile functions: an endless loop is stopped at the time limit and fails the query
  /// (nothing is written, the process goes on); one that allocates without end is stopped
  /// at its memory limit; a million emits for one document is refused
  /// for that document; a function that does not compile is a compilation error; a throwing
  /// reduce fails its query with the exception's text.
  @Test func hostileFunctionsAreStoppedAndNamed() throws {
    let docs = try collection(
      [["_id": "one", "v": 1]],
      design: [
        "_id": "_design/h",
        "views": [
          "loop": ["map": "function (doc) { while (true) {} }"],
          "million": ["map": "function (doc) { for (var i = 0; i < 1000000; i++) emit(i, null); }"],
          "broken": ["map": "function (doc) { emit(doc._id, }"],
          "huge": [
            "map":
              "function (doc) { var s = 'x'; for (var i = 0; i < 24; i++) s = s + s; emit(doc._id, s); }"
          ],
          "bomb": [
            "map":
              "function (doc) { var a = []; while (true) a.push(new Array(1000000).fill(1.5)); }"
          ],
          "reduce": [
            "map": "function (doc) { emit(doc._id, 1); }",
            "reduce": "function (keys, values) { throw new Error('no sums today'); }",
          ],
        ],
      ])
    // The other functions get a generous time limit: each must be stopped by its own bound
    // (rows, bytes, memory) even when a loaded machine makes their work slow.
    let started = Date()
    #expect {
      try docs.designView("h/loop", timeLimit: 0.5).query(ViewQuery())
    } throws: { error in
      (error as? SetteeError)?.code == .limitExceeded
        && (error as? SetteeError)?.message.contains("time limit") == true
    }
    #expect(Date().timeIntervalSince(started) < 60)
    let million = try docs.designView("h/million", timeLimit: 300).query(ViewQuery())
    #expect(million.rows.isEmpty)
    #expect(million.errors.first?.message.contains("more than 100000 rows") == true)
    // Allocating without end: stopped by the memory limit, not the time limit (it grew the
    // process to 5.9 GB in 5 s before), and the engine is not used again.
    #expect {
      try docs.designView("h/bomb", timeLimit: 300).query(ViewQuery())
    } throws: { error in
      (error as? SetteeError)?.code == .limitExceeded
        && (error as? SetteeError)?.message.contains("memory limit") == true
    }
    // 16 MiB of rows for one document: past the bound in bytes, that document is skipped.
    let huge = try docs.designView("h/huge", timeLimit: 300).query(ViewQuery())
    #expect(huge.rows.isEmpty)
    #expect(huge.errors.first?.message.contains("more than 16777216 bytes") == true)
    #expect {
      try docs.designView("h/broken")
    } throws: { error in
      (error as? SetteeError)?.message.hasPrefix("compilation_error") == true
    }
    #expect {
      try docs.designView("h/reduce").query(ViewQuery())
    } throws: { error in
      (error as? SetteeError)?.message.contains("no sums today") == true
    }
    // The engine that ran the endless loop still answers.
    #expect(try docs.designView("h/reduce").query(ViewQuery(reduce: false)).rows.count == 1)
  }

  /// The forms of a function's source CouchDB 3 compiles (an expression, or a program whose
  /// last anonymous function declaration is the function, as CouchDB's own tests write
  /// them: `function (doc) {…};`), and those it refuses: `nil` for a compilation error.
  @Test(arguments: [
    ("function (doc) { emit(doc._id, 1); }", 1),
    ("function (doc) { emit(doc._id, 1); };", 1),
    ("  function(doc) {\n  emit(doc._id, 1);\n};\n// done\n", 1),
    ("var n = 2; function (doc) { emit(doc._id, n); }", 2),
    ("var twice = function (x) { return 2 * x; };\nfunction (doc) { [1].forEach(function (v) { emit(doc._id, twice(v)); }); };", 2),
    ("(function (doc) { emit(doc._id, 3); })", 3),
    // Accepted as a named function expression (couchjs 1.x did; CouchDB 3 may refuse it).
    ("function named(doc) { emit(doc._id, 4); }", 4),
    ("42", nil),
    ("function (doc) { emit(doc._id, ; }", nil),
  ] as [(String, Int?)])
  func functionSourcesCompileAsInCouchDB(_ source: String, _ value: Int?) throws {
    let docs = database.collection("sources")
    try docs.put(["_id": "d"])
    let id = "_design/s\(abs(source.hashValue))"
    try docs.put(["_id": .string(id), "views": ["v": ["map": .string(source)]]])
    let name = String(id.dropFirst("_design/".count)) + "/v"
    guard let value else {
      #expect(throws: SetteeError.self, "\(source)") { try docs.designView(name).query(ViewQuery()) }
      return
    }
    #expect(try docs.designView(name).query(ViewQuery()).rows.map(\.value) == [.int(Int64(value))])
  }

  /// A changed map function rebuilds the view's rows; an unchanged design document (another
  /// member changed) keeps them.
  @Test func aChangedMapRebuildsAnUnchangedOneKeeps() throws {
    let docs = try collection(
      [["_id": "a", "n": 1], ["_id": "b", "n": 2]],
      design: [
        "_id": "_design/c", "views": ["v": ["map": "function (doc) { emit(doc.n, null); }"]],
      ])
    #expect(try docs.designView("c/v").query(ViewQuery()).rows.map(\.key) == [1, 2])
    let version = try docs.views().first { $0.name == "c/v" }?.version
    guard var ddoc = try docs.get("_design/c")?.json else { return }
    ddoc["note"] = "only this changed"
    try docs.put(ddoc)
    _ = try docs.designView("c/v").query(ViewQuery())
    #expect(try docs.views().first { $0.name == "c/v" }?.version == version)
    ddoc = try docs.get("_design/c")!.json
    ddoc["views"] = ["v": ["map": "function (doc) { emit(-doc.n, null); }"]]
    try docs.put(ddoc)
    #expect(try docs.designView("c/v").query(ViewQuery()).rows.map(\.key) == [-2, -1])
    #expect(try docs.views().first { $0.name == "c/v" }?.version != version)
  }

  @Test func missingDesignDocumentsAndViewsAreNotFound() async throws {
    let docs = try collection(
      [], design: ["_id": "_design/m", "views": ["v": ["map": "function (doc) {}"]]])
    for path in ["nope/v", "m/nope"] {
      await #expect {
        try await docs.designView(path)
      } throws: { error in
        (error as? SetteeError)?.code == .notFound
      }
    }
    await #expect {
      try await docs.designView("no-slash")
    } throws: { error in
      (error as? SetteeError)?.code == .invalidArgument
    }
  }

  /// A filter function gets each document and CouchDB's req; a deleted document comes as
  /// its tombstone; require may load any module of the design document (filters are not
  /// limited to views.lib).
  @Test func filtersJudgeDocumentsWithTheRequest() throws {
    let docs = try collection(
      [],
      design: [
        "_id": "_design/f",
        "lib": ["kinds": "exports.wanted = function (doc, kind) { return doc.kind === kind; };"],
        "filters": [
          "kind": "function (doc, req) { return require('lib/kinds').wanted(doc, req.query.kind) || doc._deleted === true; }"
        ],
      ])
    let filter = try docs.designFilter("f/kind")
    let kept = try filter.keeps(
      [
        ["_id": "a", "kind": "cat"], ["_id": "b", "kind": "dog"],
        ["_id": "c", "_rev": "2-x", "_deleted": true],
      ],
      request: FilterRequest(database: "docs", query: ["kind": "cat"]))
    #expect(kept == [true, false, true])
    #expect(throws: SetteeError.self) { try docs.designFilter("f/none") }
  }

  /// A view's map function as a filter (`_changes?filter=_view`): a document passes when
  /// it emits a row, a tombstone when the map emits for it; a map that throws fails the
  /// call, as couchjs's filter_view does.
  @Test func aViewsMapFunctionFilters() async throws {
    let docs = try await Task.detached { [self] in
      try collection(
        [],
        design: [
          "_id": "_design/v",
          "views": [
            "cats": ["map": "function (doc) { if (doc.kind === 'cat' || doc._deleted) emit(doc._id, null); }"],
            "throws": ["map": "function (doc) { return doc.a.b; }"],
          ],
        ])
    }.value
    let request = FilterRequest(database: "docs")
    let cats = try await docs.designFilter(view: "v/cats")
    let kept = try await cats.keeps(
      [["_id": "a", "kind": "cat"], ["_id": "b", "kind": "dog"], ["_id": "c", "_rev": "2-x", "_deleted": true]],
      request: request)
    #expect(kept == [true, false, true])
    await #expect(throws: SetteeError.self) {
      try await docs.designFilter(view: "v/throws").keeps([["_id": "a"]], request: request)
    }
    await #expect(throws: SetteeError.self) { try await docs.designFilter(view: "v/none") }
    await #expect(throws: SetteeError.self) { try await docs.designFilter(view: "w/cats") }
  }

  /// A Swift app runs a pulled database's validate_doc_update as CouchDB would: the old
  /// revision (the one `_rev` names, or for a replicated write the newest ancestor it
  /// holds), the user and the security object; refusals are typed.
  @Test func validationJudgesSwiftWrites() async throws {
    let notes = try collection(
      [],
      design: [
        "_id": "_design/rules",
        "lib": ["check": "exports.owner = function (doc) { return doc.owner; };"],
        "validate_doc_update": """
          function (newDoc, oldDoc, userCtx, secObj) {
            var owner = require('lib/check').owner;
            if (oldDoc && owner(oldDoc) !== userCtx.name) throw({unauthorized: 'not yours: ' + oldDoc._rev});
            if (!owner(newDoc)) throw({forbidden: 'who owns ' + newDoc._id + '?'});
            if (secObj.frozen) throw({forbidden: 'frozen ' + userCtx.db});
          }
          """,
      ])
    let rules = try await notes.designValidation()
    #expect(rules.designDocuments == ["_design/rules"])
    let ann = UserContext(name: "ann")
    let first = try await notes.put(["_id": "n", "owner": "ann"], validatedBy: rules, as: ann)
    await #expect(throws: ValidationRefusal.self) {
      try await notes.put(["_id": "m"], validatedBy: rules, as: ann)
    }
    do {
      _ = try await notes.put(
        ["_id": "n", "_rev": .string(first.rev.description), "owner": "bob"], validatedBy: rules,
        as: UserContext(name: "bob"))
      Issue.record("bob replaced ann's note")
    } catch let refusal as ValidationRefusal {
      #expect(refusal.kind == .unauthorized)
      #expect(refusal.reason == "not yours: \(first.rev)")
      #expect(refusal.documentID == "n" && refusal.designDocument == "_design/rules")
    }
    // Replicated: the old document is the newest ancestor the collection holds as a leaf.
    let replicated: JSONObject = [
      "_id": "n", "_rev": "3-c", "owner": "ann",
      "_revisions": ["start": 3, "ids": ["c", "b", .string(first.rev.digest)]],
    ]
    let judged = try await rules.check(
      [replicated, ["_id": "_design/x"], ["_id": "new", "_rev": "1-a"]], in: notes,
      newEdits: false, as: UserContext(name: "bob"), security: ["frozen": false])
    #expect(judged[0]?.kind == .unauthorized)
    #expect(judged[1] == nil)
    #expect(judged[2]?.reason == "who owns new?")
    let frozen = try await rules.check(
      [["_id": "k", "owner": "ann"]], in: notes, as: ann, security: ["frozen": true])
    #expect(frozen[0]?.reason == "frozen docs")
    #expect(try await notes.get("m") == nil)
  }

  /// `_approx_count_distinct` counts the distinct keys of a range or a group (exactly;
  /// CouchDB estimates), the same in SQL and in Swift's chunked reduce and rereduce.
  @Test func approximateCountDistinctCountsKeys() throws {
    let tags = ["red", "blue", "red", "green", "blue", "red"]
    let docs = try collection(
      tags.enumerated().map { ["_id": .string("d\($0.offset)"), "tag": .string($0.element)] },
      design: [
        "_id": "_design/t",
        "views": [
          "tags": [
            "map": "function (doc) { emit(doc.tag, 1); emit([doc.tag, doc._id.length], null); }",
            "reduce": "_approx_count_distinct",
          ]
        ],
      ])
    let view = try docs.designView("t/tags")
    // Three tags and three [tag, 2] arrays.
    #expect(try view.query(ViewQuery()).rows.map(\.value) == [6])
    #expect(try view.query(ViewQuery(startKey: "a", endKey: "z")).rows.map(\.value) == [3])
    #expect(try view.query(ViewQuery(group: true)).rows.map(\.value) == [1, 1, 1, 1, 1, 1])
    // Swift's path, over more rows than one chunk, agrees.
    let keys = (0..<2000).map { JSON.string("k\($0 % 700)") }
    let reduced = try ViewReduce.approximateCountDistinct.reduceAll(
      keys: keys, ids: keys.map { _ in "x" }, values: keys.map { _ in .null })
    #expect(reduced == 700)
  }

  /// A map function gets the document's attachments as stubs, as CouchDB gives them (no
  /// data, no encoding), and a document without any has no `_attachments`.
  @Test func mapsSeeAttachmentStubs() throws {
    let docs = try collection(
      [["_id": "plain"]],
      design: [
        "_id": "_design/a",
        "views": [
          "atts": [
            "map": """
              function (doc) {
                var atts = doc._attachments;
                if (!atts) { emit(doc._id, null); return; }
                for (var name in atts) emit([doc._id, name], [atts[name].content_type, atts[name].length, atts[name].stub === true, atts[name].data === undefined]);
              }
              """
          ]
        ],
      ])
    try docs.putAttachment(
      "note.txt", to: "with", rev: nil, contentType: "text/plain", data: Array("hello".utf8))
    let rows = try docs.designView("a/atts").query(ViewQuery()).rows
    #expect(rows.map(\.key) == ["plain", ["with", "note.txt"]])
    #expect(rows.map(\.value) == [.null, ["text/plain", 5, true, true]])
  }

  /// `log(message)` of every kind of function reaches the database's `javaScriptLog` with
  /// its design document's id, as CouchDB writes it to its log.
  @Test func logMessagesReachTheConfiguredLog() async throws {
    let messages = Locked<[String]>([])
    var configuration = Database.Configuration()
    configuration.javaScriptLog = { design, message in
      messages.withLock { $0.append("\(design): \(message)") }
    }
    let logged = try Database(
      path: directory.appendingPathComponent("log.db").path, configuration: configuration)
    let docs = logged.collection("docs")
    try await docs.put(["_id": "a", "n": 1])
    try await docs.put([
      "_id": "_design/l",
      "views": [
        "v": [
          "map": "function (doc) { log('map ' + doc._id); emit(doc.n, doc.n); }",
          "reduce": "function (keys, values) { log({reduced: values.length}); return sum(values); }",
        ]
      ],
      "filters": ["f": "function (doc, req) { log('filter ' + doc._id); return true; }"],
      "validate_doc_update": "function (doc) { log('validate ' + doc._id); }",
    ])
    #expect(try await docs.designView("l/v").query(ViewQuery()).rows.map(\.value) == [1])
    _ = try await docs.designFilter("l/f").keeps(
      [["_id": "a"]], request: FilterRequest(database: "docs"))
    let rules = try await docs.designValidation()
    try await docs.put(["_id": "b"], validatedBy: rules, as: .administrator)
    #expect(
      messages.withLock { $0 } == [
        "_design/l: map a", "_design/l: {\"reduced\":1}", "_design/l: filter a",
        "_design/l: validate b",
      ])
  }

  /// A message longer than CouchDB's `max_message_size` (16,000) is cut there, and a call
  /// logs 100 messages at most: a function cannot flood the log. The call has a generous
  /// time limit: building the long message is real work on a loaded machine, and the limit
  /// is not what this test is about.
  @Test func logMessagesAreBounded() async throws {
    let messages = Locked<[String]>([])
    var configuration = Database.Configuration()
    configuration.javaScriptLog = { _, message in messages.withLock { $0.append(message) } }
    let logged = try Database(
      path: directory.appendingPathComponent("loud.db").path, configuration: configuration)
    let docs = logged.collection("docs")
    try await docs.put(["_id": "a"])
    try await docs.put([
      "_id": "_design/loud",
      "views": [
        "v": [
          "map": """
            function (doc) {
              log(new Array(200001).join("x"));
              for (var i = 0; i < 500; i++) log("line " + i);
              emit(doc._id, null);
            }
            """
        ]
      ],
    ])
    #expect(
      try await docs.designView("loud/v", timeLimit: 300).query(ViewQuery()).totalRows == 1)
    let all = messages.withLock { $0 }
    #expect(all.count == 100)
    #expect(all.first == String(repeating: "x", count: 16_000) + "\u{2026} (200000 characters)")
    #expect(all.last == "line 98")
  }

  /// The validation rules of CouchDB's documentation ("Validate document update
  /// functions": a required field, deletions by administrators or the document's owner)
  /// with an owner rule through `secObj`, as a table: the new document, the one it
  /// replaces, the user, and the refusal expected.
  @Test(arguments: [
    (["_id": "a", "address": "x"], nil, UserContext(), nil),
    (["_id": "a"], nil, UserContext(), "forbidden: Document must have an address."),
    (["_id": "a", "_deleted": true], ["_id": "a", "name": "ann"], UserContext(name: "ann"), nil),
    (
      ["_id": "a", "_deleted": true], ["_id": "a", "name": "ann"], UserContext(name: "bob"),
      "forbidden: Only admins may delete other user docs."
    ),
    (["_id": "a", "_deleted": true], ["_id": "a", "name": "ann"], UserContext.administrator, nil),
    (
      ["_id": "a", "address": "y"], ["_id": "a", "name": "ann", "address": "x"],
      UserContext(name: "bob"), "unauthorized: Only its owner or a database admin may change it."
    ),
    (
      ["_id": "a", "address": "y"], ["_id": "a", "name": "ann", "address": "x"],
      UserContext(name: "carl"), nil
    ),
  ] as [(JSONObject, JSONObject?, UserContext, String?)])
  func documentedValidationRules(
    new: JSONObject, old: JSONObject?, user: UserContext, refusal: String?
  ) async throws {
    let docs = try collection(
      [],
      design: [
        "_id": "_design/rules",
        "validate_doc_update": """
          function (newDoc, oldDoc, userCtx, secObj) {
            if (newDoc._deleted === true) {
              if (userCtx.roles.indexOf('_admin') !== -1 || (oldDoc && userCtx.name === oldDoc.name)) return;
              throw({forbidden: 'Only admins may delete other user docs.'});
            }
            if (newDoc.address === undefined) throw({forbidden: 'Document must have an address.'});
            if (oldDoc && oldDoc.name !== userCtx.name && secObj.admins.names.indexOf(userCtx.name) === -1) {
              throw({unauthorized: 'Only its owner or a database admin may change it.'});
            }
          }
          """,
      ])
    let rules = try await docs.designValidation()
    let answer = try await rules.validate(
      [ValidatedWrite(new, replacing: old)], as: user,
      security: ["admins": ["names": ["carl"], "roles": []]])[0]
    #expect(answer.map { "\($0.error): \($0.reason)" } == refusal)
  }
}
