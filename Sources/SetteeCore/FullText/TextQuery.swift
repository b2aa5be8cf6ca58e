/// Translates a `$search` string in SQLite's FTS4 query syntax (seed 000) into the query
/// that runs against a TEXT index's table.
///
/// The syntax: terms (all must match), `"phrases"`, `prefix*`, `OR`, `AND`, `NOT`,
/// `NEAR` and `NEAR/n`, parentheses, and `field:term` to search one field (`_id:…` for the
/// document id). Terms are normalized as indexed text is (``TextNormalizer``), operators
/// are kept, and field names become the table's column names.
package enum TextQuery {
  /// The FTS `MATCH` expression for a `$text` search.
  ///
  /// - Parameters:
  ///   - search: the search as the user wrote it.
  ///   - columns: maps a field name as users write it (`comment`, `pet.species`, `_id`) to
  ///     its column in the FTS table.
  /// - Throws: ``SetteeError`` (`invalidQuery`) naming `$text` for an empty query,
  ///   unbalanced quotes or parentheses, or an unknown field.
  package static func translate(_ search: String, columns: [String: String]) throws -> String {
    var output: [String] = []
    var index = search.startIndex
    var depth = 0
    var terms = 0
    func fail(_ message: String) -> SetteeError {
      SetteeError(.invalidQuery, "\"$text\" search \(quoted(search)): \(message)")
    }
    // SQLite would read the search only up to a U+0000, and search for less than was asked.
    if Names.containsNUL(search) { throw fail("it holds U+0000, which a search cannot") }
    while index < search.endIndex {
      let character = search[index]
      if character.isWhitespace {
        index = search.index(after: index)
        continue
      }
      if character == "(" || character == ")" {
        depth += character == "(" ? 1 : -1
        if depth < 0 { throw fail("a ')' has no matching '('") }
        output.append(String(character))
        index = search.index(after: index)
        continue
      }
      // A word: up to white space, a parenthesis or a quote.
      var column: String?
      var end = index
      while end < search.endIndex, !search[end].isWhitespace, !"()\"".contains(search[end]) {
        end = search.index(after: end)
      }
      var word = String(search[index..<end])
      if let colon = word.lastIndex(of: ":"), colon != word.startIndex {
        let field = String(word[..<colon])
        guard let mapped = columns[field] else {
          throw fail(
            "the TEXT index has no field \(quoted(field)) (it has \(columns.keys.sorted().joined(separator: ", ")))"
          )
        }
        column = mapped
        word = String(word[word.index(after: colon)...])
        index = search.index(index, offsetBy: field.count + 1)
      }
      if word.isEmpty, index < search.endIndex, search[index] == "\"" {
        // A phrase, possibly after a field name.
        guard let close = search[search.index(after: index)...].firstIndex(of: "\"") else {
          throw fail("a '\"' is not closed")
        }
        let phrase = TextNormalizer.normalize(String(search[search.index(after: index)..<close]))
          .split(separator: " ").joined(separator: " ")
        var after = search.index(after: close)
        var star = ""
        if after < search.endIndex, search[after] == "*" {
          star = "*"
          after = search.index(after: after)
        }
        output.append((column.map { $0 + ":" } ?? "") + "\"" + phrase + "\"" + star)
        terms += 1
        index = after
        continue
      }
      index = end
      if column == nil, ["AND", "OR", "NOT", "NEAR"].contains(word) || isNear(word) {
        output.append(word)
        continue
      }
      let prefix = word.hasSuffix("*")
      let pieces = TextNormalizer.normalize(prefix ? String(word.dropLast()) : word).split(
        separator: " ")
      guard !pieces.isEmpty else { continue }  // punctuation alone searches nothing
      let body = pieces.count == 1 ? String(pieces[0]) : "\"" + pieces.joined(separator: " ") + "\""
      output.append((column.map { $0 + ":" } ?? "") + body + (prefix ? "*" : ""))
      terms += 1
    }
    if depth != 0 { throw fail("a '(' is not closed") }
    if terms == 0 { throw fail("there is nothing to search for") }
    return output.joined(separator: " ")
  }

  static func isNear(_ word: String) -> Bool {
    guard word.hasPrefix("NEAR/") else { return false }
    return Int(word.dropFirst(5)) != nil
  }
}
