import Foundation
import SetteeCore
import SetteeTestSupport
import Testing

/// `settee where` through the built binary.
@Suite("The settee command: where")
struct WhereCLITests {
  let directory = TemporaryDirectory()

  @Test func findsCountsAndRefusesWhatIsOutsideTheGrammar() throws {
    let db = directory.path("where.db")
    for document in [
      #"{"_id":"a","name":"mike","age":40}"#, #"{"_id":"b","name":"mary","age":20}"#,
    ] {
      #expect(try SetteeBinary.run(["--db", db, "put", document]).status == 0)
    }
    let found = try SetteeBinary.run([
      "--db", db, "where", "[age] > ? AND [name] LIKE ?", "--args", #"[30,"m%"]"#, "--order-by",
      "[name] DESC", "--limit", "10",
    ])
    #expect(found.status == 0)
    #expect(try JSONParser.parse(found.stdout)[path: "docs.0._id"] == "a")
    let counted = try SetteeBinary.run(["--db", db, "where", "--count", "[name] LIKE 'M%'"])
    #expect(try JSONParser.parse(counted.stdout) == ["count": 2])
    let refused = try SetteeBinary.run(["--db", db, "where", "[age] > 1; DROP TABLE documents"])
    #expect(
      refused.status == 1 && refused.stderr.contains("invalid_query")
        && refused.stderr.contains("position 10"))
    let badArgs = try SetteeBinary.run(["--db", db, "where", "[age] > ?", "--args", "{}"])
    #expect(badArgs.status == 1 && badArgs.stderr.contains("invalid_query"))
    #expect(
      try SetteeBinary.run(["--db", db, "where", "--count", ""]).stdout.contains(#""count":2"#))
  }

  @Test func indexesQueryableFieldsDefaultsAndAliases() throws {
    let db = directory.path("settings.db")
    func run(_ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
      let result = try SetteeBinary.run(["--db", db, "--collection", "users"] + arguments)
      return (result.status, result.stdout, result.stderr)
    }
    for document in [
      #"{"_id":"a","email":"a@x.org","user":{"first":"ann"}}"#, #"{"_id":"b","flag":true}"#,
    ] {
      #expect(try run(["put", document]).status == 0)
    }
    #expect(try run(["where-index", "add", "--unique", "[email]"]).status == 0)
    #expect(try run(["where-index", "add", "[user.first] DESC"]).status == 0)
    #expect(
      try JSONParser.parse(run(["where-index", "list"]).stdout)
        == [
          "indexes": [
            ["fields": "[email]", "unique": true],
            ["fields": "[user.first] DESC", "unique": false],
          ]
        ])
    let duplicate = try run(["put", #"{"_id":"c","email":"a@x.org"}"#])
    #expect(duplicate.status == 1 && duplicate.stderr.contains("unique_violation"))
    #expect(duplicate.stderr.contains("[email]") && duplicate.stderr.contains("a@x.org"))
    let plan = try JSONParser.parse(
      run(["where", "--explain", "[email] = ?", "--args", #"["a@x.org"]"#]).stdout)
    #expect(plan[path: "plan"]?.description.contains("wx_") == true, "\(plan)")
    #expect(try run(["where-index", "remove", "[user.first]"]).status == 0)

    #expect(try run(["queryable", "add", "[flag], [user.first]"]).status == 0)
    #expect(
      try JSONParser.parse(run(["queryable", "list"]).stdout)
        == ["fields": ["[flag]", "[user.first]"]])
    #expect(try run(["defaults", "set", #"{"flag": false}"#]).status == 0)
    #expect(try JSONParser.parse(run(["defaults", "get"]).stdout) == ["flag": false])
    #expect(try run(["alias", "set", "firstName", "[user.first]"]).status == 0)
    #expect(try JSONParser.parse(run(["alias", "list"]).stdout) == ["firstName": "[user.first]"])
    let found = try run(["where", "[flag] = 0 AND firstName = ?", "--args", #"["ann"]"#])
    #expect(try JSONParser.parse(found.stdout)[path: "docs.0._id"] == "a", "\(found)")
    #expect(try run(["alias", "remove", "firstName"]).status == 0)
    let gone = try run(["alias", "remove", "firstName"])
    #expect(gone.status == 1 && gone.stderr.contains("not_found"))
    let badAlias = try run(["alias", "set", "x", "[a]; DROP TABLE documents"])
    #expect(badAlias.status == 1 && badAlias.stderr.contains("invalid_query"))
    let badDefaults = try run(["defaults", "set", "[1]"])
    #expect(badDefaults.status == 1 && badDefaults.stderr.contains("bad_request"))
    #expect(try run(["queryable", "remove", "[flag]"]).status == 0)
  }
}
