// The where parser's errors, and the depth it allows.
extension WhereParser {
  // MARK: - Errors

  func error(_ message: String, at offset: Int? = nil) -> SetteeError {
    let at = offset ?? tokens[min(position, tokens.count - 1)].offset
    return Self.error(text, what, message, at: at)
  }

  static func error(_ text: String, _ what: String, _ message: String, at offset: Int)
    -> SetteeError
  {
    SetteeError(.invalidQuery, "\(what) \(quoting(text)): \(message) at position \(offset + 1)")
  }

  /// The text as errors quote it: whole up to 200 characters, else its start and `…`.
  static func quoting(_ text: String) -> String {
    text.unicodeScalars.count > 200
      ? JSON.string(String(String.UnicodeScalarView(text.unicodeScalars.prefix(200)))).description
        + "…"
      : JSON.string(text).description
  }

  func limitError(_ message: String) -> SetteeError {
    SetteeError(
      .limitExceeded,
      "\(what) \(Self.quoting(text)): \(message)")
  }

  /// Refuses a tree deeper than ``maxDepth`` or larger than ``maxTokens`` nodes (aliases
  /// expanded), before anything walks it.
  func checkDepth(_ expression: WhereExpression) throws {
    let (depth, nodes) = expression.size
    if depth > Self.maxDepth {
      throw limitError(
        "it nests \(depth) levels deep (operator chains, parentheses, functions and aliases counted), more than the limit of \(Self.maxDepth)"
      )
    }
    if nodes > Self.maxTokens {
      throw limitError(
        "with its aliases expanded it holds \(nodes) terms, more than the limit of \(Self.maxTokens)"
      )
    }
  }

  /// One level deeper, refused past ``maxDepth``; ``leave()`` comes back up.
  mutating func enter() throws {
    depth += 1
    if depth > Self.maxDepth {
      throw limitError(
        "it nests more than \(Self.maxDepth) levels deep (parentheses, function arguments, CASE, CAST, prefix operators)"
      )
    }
  }

  mutating func leave() { depth -= 1 }

  /// Whether `name` is a keyword of the grammar (in any case), so that it cannot name an
  /// alias.
  package static func isKeyword(_ name: String) -> Bool { keywords.contains(name.uppercased()) }
}
