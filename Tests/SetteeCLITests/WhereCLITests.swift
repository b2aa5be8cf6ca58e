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
}
