import Foundation
import GRDB
import SetteeCore

/// The SQL functions Settee adds to every connection.
enum SQLFunctions {
  static func register(in db: SQLConnection) {
    db.add(function: collationKey)
    ViewGroupFunction.register(in: db)
    ViewKeyFunctions.register(in: db)
    db.add(function: sortKey)
    db.add(function: regexp)
    db.add(function: match)
    db.add(function: Relevance.function)
    db.add(function: jsonString)
  }

  /// `settee_json_string(body, path)`: the whole string at a JSON path of
  /// ``WhereFieldTable/jsonPath(_:)``'s form, as UTF-8 bytes (a blob: GRDB returns text only
  /// up to a U+0000, which is why this exists; see ``WhereFieldTable/StringReading``).
  /// NULL when the path does not lead to a string.
  static let jsonString = DatabaseFunction("settee_json_string", argumentCount: 2, pure: true) {
    values in
    guard let body = String.fromDatabaseValue(values[0]),
      let path = String.fromDatabaseValue(values[1]),
      let components = WhereFieldTable.components(ofJSONPath: path)
    else { return nil }
    guard let json = try? JSONParser.parse(body) else {
      throw DatabaseError(message: "malformed JSON")  // a damaged body, named by the caller
    }
    var value = json
    for component in components {
      switch (component, value) {
      case (.member(let name), .object(let object)):
        guard let member = object[name] else { return nil }
        value = member
      case (.index(let index), .array(let elements)):
        guard index < elements.count else { return nil }
        value = elements[index]
      default: return nil
      }
    }
    guard case .string(let text) = value else { return nil }
    return Data(text.utf8)
  }

  /// `settee_key(value, json_type)`: the ``CollationKey`` of a value that SQLite's JSON
  /// functions returned with its type (arrays and objects come as JSON text).
  static let collationKey = DatabaseFunction("settee_key", argumentCount: 2, pure: true) { values in
    guard let type = String.fromDatabaseValue(values[1]) else { return nil }
    let json: JSON
    switch type {
    case "null": json = .null
    case "true": json = .bool(true)
    case "false": json = .bool(false)
    case "integer": json = .int(Int64.fromDatabaseValue(values[0]) ?? 0)
    case "real": json = .double(Double.fromDatabaseValue(values[0]) ?? 0)
    case "text": json = .string(String.fromDatabaseValue(values[0]) ?? "")
    default:
      guard let text = String.fromDatabaseValue(values[0]) else { return nil }
      json = try JSONParser.parse(text)
    }
    return Data(CollationKey.encode(json))
  }

  /// `settee_sort_key(body, id, rev, path, descending)`: the key a document sorts by for
  /// one sort field (NULL when the field is missing, which sorts first).
  static let sortKey = DatabaseFunction("settee_sort_key", argumentCount: 5, pure: true) { values in
    guard let body = String.fromDatabaseValue(values[0]),
      let id = String.fromDatabaseValue(values[1]),
      let rev = String.fromDatabaseValue(values[2]),
      let pathText = String.fromDatabaseValue(values[3]),
      let descending = Bool.fromDatabaseValue(values[4])
    else { return nil }
    var document = try JSONParser.parse(body).objectValue ?? [:]
    document.insert(.string(id), forKey: "_id", at: 0)
    document.insert(.string(rev), forKey: "_rev", at: 1)
    let path = FieldPath(
      components: try JSONParser.parse(pathText).arrayValue?.compactMap(\.stringValue) ?? [])
    guard
      let key = Matcher.sortKey(
        .object(document), FindQuery.SortField(path, descending: descending))
    else {
      return nil
    }
    return Data(CollationKey.encode(key))
  }

  /// `regexp(pattern, text)`, which SQLite's `REGEXP` operator calls: an unanchored
  /// NSRegularExpression search, under ``RegexCache/timeLimit``. A search that runs past
  /// it stops the statement with an error that ``SetteeError/from(_:_:busyTimeout:)``
  /// turns back into the typed one.
  static let regexp = DatabaseFunction("regexp", argumentCount: 2, pure: true) { values in
    guard let pattern = String.fromDatabaseValue(values[0]),
      let text = String.fromDatabaseValue(values[1])
    else {
      return false
    }
    do {
      return try RegexCache.shared.matches(pattern, text)
    } catch let error as SetteeError {
      throw DatabaseError(resultCode: limitExceeded, message: error.message)
    }
  }

  /// `settee_match(selector, id, rev, body)`: whether the reference ``Matcher`` matches the
  /// document, for the few that SQL cannot check exactly (see
  /// ``SelectorCompiler/nulSafe(_:_:_:)``). The selector comes as Mango JSON
  /// (``Selector/json``), parsed once per text.
  static let match = DatabaseFunction("settee_match", argumentCount: 4, pure: true) { values in
    guard let selectorText = String.fromDatabaseValue(values[0]),
      let id = String.fromDatabaseValue(values[1]),
      let rev = String.fromDatabaseValue(values[2]).flatMap(RevisionID.init),
      let bodyText = String.fromDatabaseValue(values[3])
    else { return false }
    do {
      let selector = try selectors.selector(selectorText)
      guard case .object(let body) = try JSONParser.parse(bodyText) else { return false }
      return try Matcher.matches(selector, .object(Document(id: id, rev: rev, body: body).json))
    } catch let error as SetteeError where error.code == .limitExceeded {
      throw DatabaseError(resultCode: limitExceeded, message: error.message)
    } catch {
      // A damaged body, named by the caller (DocumentReader.namingDamagedBodies).
      throw DatabaseError(resultCode: .SQLITE_CORRUPT, message: "malformed JSON")
    }
  }

  /// Selectors parsed from their JSON text, for ``match``.
  static let selectors = ParsedSelectors()

  final class ParsedSelectors: Sendable {
    private let parsed = Locked<[String: Selector]>([:])

    func selector(_ text: String) throws -> Selector {
      if let known = parsed.withLock({ $0[text] }) { return known }
      let selector = try SelectorParser.parse(JSONParser.parse(text))
      parsed.withLock { parsed in
        if parsed.count >= 256 { parsed.removeAll(keepingCapacity: true) }
        parsed[text] = selector
      }
      return selector
    }
  }

  /// The result code of the error a function raises for a
  /// ``SetteeError/Code/limitExceeded`` (its message is the reason): `SQLITE_TOOBIG` with
  /// an extended code of Settee's own, which SQLite hands back from the statement as the
  /// function gave it (extended codes are on in every GRDB connection).
  static let limitExceeded = ResultCode(rawValue: ResultCode.SQLITE_TOOBIG.rawValue | (0x5E << 8))
}
