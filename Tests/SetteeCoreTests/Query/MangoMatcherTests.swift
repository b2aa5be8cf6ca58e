import Foundation
import SetteeTestSupport
import Testing

@testable import SetteeCore

/// CouchDB 3.5's Mango matching, case by case: what `mango_selector` normalizes and
/// matches, each row a selector, a document and whether CouchDB returns it.
@Suite("CouchDB dialect: selectors match as CouchDB's Mango matches")
struct MangoMatcherTests {
  struct Case: Sendable, CustomTestStringConvertible {
    var selector: String
    var document: String
    var matches: Bool
    var testDescription: String { "\(selector) on \(document)" }
  }

  static let cases: [Case] = [
    // A path reads one value: no implicit matching of array elements.
    Case(selector: #"{"tags": "blue"}"#, document: #"{"tags": ["blue", "red"]}"#, matches: false),
    Case(
      selector: #"{"tags": ["blue", "red"]}"#, document: #"{"tags": ["blue", "red"]}"#,
      matches: true),
    Case(selector: #"{"tags.1": "red"}"#, document: #"{"tags": ["blue", "red"]}"#, matches: true),
    Case(
      selector: #"{"pets.species": "cat"}"#, document: #"{"pets": [{"species": "cat"}]}"#,
      matches: false),
    Case(
      selector: #"{"pets.0.species": "cat"}"#, document: #"{"pets": [{"species": "cat"}]}"#,
      matches: true),
    // `$in` and `$nin` look at an array's elements (and not at the array itself).
    Case(
      selector: #"{"tags": {"$in": ["red"]}}"#, document: #"{"tags": ["blue", "red"]}"#,
      matches: true),
    Case(
      selector: #"{"tags": {"$in": [["blue", "red"]]}}"#, document: #"{"tags": ["blue", "red"]}"#,
      matches: false),
    Case(
      selector: #"{"tags": {"$nin": ["red"]}}"#, document: #"{"tags": ["blue", "red"]}"#,
      matches: false),
    Case(selector: #"{"tags": {"$nin": ["red"]}}"#, document: #"{"other": 1}"#, matches: false),
    // Comparisons cross types in CouchDB's collation.
    Case(selector: #"{"n": {"$lt": 5}}"#, document: #"{"n": null}"#, matches: true),
    Case(selector: #"{"n": {"$lt": 5}}"#, document: #"{"n": true}"#, matches: true),
    Case(selector: #"{"n": {"$lt": 5}}"#, document: #"{"n": "4"}"#, matches: false),
    Case(selector: #"{"n": {"$gt": "b"}}"#, document: #"{"n": [1]}"#, matches: true),
    Case(selector: #"{"n": {"$gt": "b"}}"#, document: #"{"n": {"a": 1}}"#, matches: true),
    Case(selector: #"{"n": {"$lt": 5}}"#, document: #"{"m": 1}"#, matches: false),
    // Strings in ICU's root collation: lower case first, accents after, ignorables ignored.
    Case(selector: #"{"s": {"$gt": "a"}}"#, document: #"{"s": "A"}"#, matches: true),
    Case(selector: #"{"s": {"$lt": "b"}}"#, document: #"{"s": "B"}"#, matches: false),
    Case(selector: #"{"s": {"$lt": "b"}}"#, document: #"{"s": "á"}"#, matches: true),
    Case(selector: #"{"s": "é"}"#, document: #"{"s": "e\u0301"}"#, matches: true),
    Case(selector: #"{"s": "a"}"#, document: #"{"s": "a\u0000"}"#, matches: true),
    // `_id` compares in Erlang's term order: strings byte by byte, after every number.
    Case(selector: #"{"_id": {"$gt": "B"}}"#, document: #"{"_id": "a"}"#, matches: true),
    Case(selector: #"{"_id": {"$lt": "b"}}"#, document: #"{"_id": "B"}"#, matches: true),
    Case(selector: #"{"_id": {"$gt": 5}}"#, document: #"{"_id": "a"}"#, matches: true),
    // Negations are pushed down to the conditions: the field must be there.
    Case(selector: #"{"n": {"$ne": 5}}"#, document: #"{"m": 1}"#, matches: false),
    Case(selector: #"{"n": {"$not": {"$gt": 0}}}"#, document: #"{"m": 1}"#, matches: false),
    Case(selector: #"{"n": {"$not": {"$gt": 0}}}"#, document: #"{"n": null}"#, matches: true),
    Case(selector: #"{"$nor": [{"n": 5}]}"#, document: #"{"m": 1}"#, matches: false),
    Case(selector: #"{"$not": {"n": {"$exists": true}}}"#, document: #"{"m": 1}"#, matches: true),
    Case(selector: #"{"n": {"$not": {"$regex": "x"}}}"#, document: #"{"m": 1}"#, matches: false),
    // … except inside `$elemMatch`, where `$not` is the complement.
    Case(
      selector: #"{"a": {"$elemMatch": {"$not": {"b": {"$gt": 1}}}}}"#,
      document: #"{"a": [{"c": 1}]}"#,
      matches: true),
    // `$exists: false` matches where an object lacks the member, not a path that cannot be
    // taken.
    Case(selector: #"{"a.b": {"$exists": false}}"#, document: #"{"a": {"c": 1}}"#, matches: true),
    Case(selector: #"{"a.b": {"$exists": false}}"#, document: #"{"a": 5}"#, matches: false),
    Case(
      selector: #"{"a.b": {"$exists": false}}"#, document: #"{"a": [{"b": 1}]}"#, matches: false),
    // `$all`: exact members (1 is not 1.0), or the single array argument itself.
    Case(
      selector: #"{"t": {"$all": ["a", "b"]}}"#, document: #"{"t": ["b", "c", "a"]}"#, matches: true
    ),
    Case(selector: #"{"t": {"$all": [1]}}"#, document: #"{"t": [1.0]}"#, matches: false),
    Case(selector: #"{"t": {"$all": [["a"]]}}"#, document: #"{"t": ["a"]}"#, matches: true),
    Case(selector: #"{"t": {"$all": []}}"#, document: #"{"t": []}"#, matches: false),
    // `$mod` needs an integer.
    Case(selector: #"{"n": {"$mod": [2, 1]}}"#, document: #"{"n": 7}"#, matches: true),
    Case(selector: #"{"n": {"$mod": [2, 1]}}"#, document: #"{"n": 7.0}"#, matches: false),
    Case(selector: #"{"n": {"$mod": [2, -1]}}"#, document: #"{"n": -7}"#, matches: true),
    // Empty combinators match everything (a whole `{"$or": []}` is answered empty by the
    // planner, not the matcher).
    Case(selector: #"{"$or": [], "n": 1}"#, document: #"{"n": 1}"#, matches: true),
    Case(selector: #"{"$and": [{"n": 1}, {"$or": []}]}"#, document: #"{"n": 1}"#, matches: true),
    // `{}` below the top is a value, and a field-less condition under `$and` applies to the
    // document itself.
    Case(selector: #"{"a": {}}"#, document: #"{"a": {}}"#, matches: true),
    Case(selector: #"{"$and": [{"$gt": 5}]}"#, document: #"{"a": 1}"#, matches: true),
    Case(selector: #"{"a": {"$elemMatch": {}}}"#, document: #"{"a": [{}]}"#, matches: true),
    Case(
      selector: #"{"a": {"$elemMatch": {"$gt": 2}}}"#, document: #"{"a": [1, 3]}"#, matches: true),
    Case(selector: #"{"a": {"$allMatch": {"$gt": 2}}}"#, document: #"{"a": []}"#, matches: false),
    Case(
      selector: #"{"a": {"$keyMapMatch": {"$eq": "k"}}}"#, document: #"{"a": {"k": 1}}"#,
      matches: true),
    Case(selector: #"{"a": {"$beginsWith": "ab"}}"#, document: #"{"a": "abc"}"#, matches: true),
    Case(selector: #"{"a": {"$beginsWith": "ab"}}"#, document: #"{"a": ["abc"]}"#, matches: false),
    Case(selector: #"{"a": {"$size": 2}}"#, document: #"{"a": [1, [2]]}"#, matches: true),
    Case(selector: #"{"a": {"$type": "number"}}"#, document: #"{"a": 1.5}"#, matches: true),
    Case(selector: #"{"a\\.b": 1}"#, document: #"{"a.b": 1}"#, matches: true),
  ]

  @Test(arguments: cases)
  func matchesAsCouchDBDoes(_ row: Case) throws {
    let selector = try MangoSelector.parse(JSONParser.parse(row.selector))
    #expect(try MangoMatcher.matches(selector, JSONParser.parse(row.document)) == row.matches)
  }

  /// What CouchDB refuses, with its error names.
  @Test(arguments: [
    (#"{"a": {"$in": 5}}"#, "bad_arg"), (#"{"a": {"$exists": 1}}"#, "bad_arg"),
    (#"{"a": {"$mod": [2.5, 1]}}"#, "bad_arg"), (#"{"a": {"$size": -1}}"#, "bad_arg"),
    (#"{"a": {"$regex": "("}}"#, "bad_arg"), (#"{"$or": {}}"#, "bad_arg"),
    (#"{"a": {"$near": 1}}"#, "not_supported"), (#"{"$where": "x"}"#, "not_supported"),
    (#"{"a": {"$foo": 1}}"#, "invalid_operator"), (#"{"$gt": 5}"#, "invalid_selector"),
    (#"{"$not": {}}"#, "invalid_selector"), (#"{"a": {"$elemMatch": 1}}"#, "bad_arg"),
    (#"{"a": {"$beginsWith": true}}"#, "invalid_operator"),
  ])
  func refusesAsCouchDBDoes(selector: String, error: String) throws {
    #expect {
      _ = try MangoSelector.parse(JSONParser.parse(selector))
    } throws: { ($0 as? SetteeError)?.couchDBError == error }
  }

  /// `use_index` as CouchDB's `mango_opts` splits it: a `[ddoc, name]` pair stays two
  /// parts even when the ddoc has `_design/`; a string splits at its first slash unless
  /// that is `_design/`'s; `null` names nothing.
  @Test(arguments: [
    (#""_design/a/b""#, ["_design/a/b"]), (#""a/b""#, ["a", "b"]), (#""a""#, ["a"]),
    (#"["_design/a", "b"]"#, ["_design/a", "b"]), (#"["a"]"#, ["a"]), ("null", []), ("[]", []),
  ])
  func splitsUseIndexAsCouchDBDoes(useIndex: String, parts: [String]) throws {
    let query = try FindQuery(
      json: JSONParser.parse(#"{"selector": {}, "use_index": "# + useIndex + "}"),
      dialect: .couchDB)
    #expect(query.useIndexParts == parts)
  }

  /// Projections: present fields in the order asked, through objects made on the way,
  /// without `_id` and `_rev` unless named.
  @Test(arguments: [
    (["name", "pets.species"], #"{"name": "x"}"#),
    (["tags.0", "tags"], #"{"tags": ["a", "b"]}"#),
    (["tags.1", "n.m"], #"{"tags": {"1": "b"}, "n": {"m": 1}}"#),
    (["_id", "n"], #"{"_id": "d", "n": {"m": 1}}"#),
  ])
  func extractsAsCouchDBDoes(fields: [String], expected: String) throws {
    let document = try JSONParser.parse(
      #"{"_id": "d", "_rev": "1-a", "name": "x", "tags": ["a", "b"], "n": {"m": 1}, "pets": [{"species": "cat"}]}"#
    )
    let extracted = MangoMatcher.extract(
      document, fields: fields.map { MangoSelector.components($0) })
    #expect(
      JSONWriter.string(.object(extracted)) == JSONWriter.string(try JSONParser.parse(expected)))
  }
}
