// Reading the where string's tokens one at a time.
extension WhereParser {
  // MARK: - Tokens

  var current: Token { tokens[position].token }

  mutating func accept(_ token: Token) -> Bool {
    if current == token {
      position += 1
      return true
    }
    return false
  }

  mutating func expect(_ token: Token, _ description: String) throws {
    guard accept(token) else { throw error("expected \(description)") }
  }

  func expectEnd() throws {
    guard current == .end else { throw error("unexpected \(describe(current))") }
  }

  func describe(_ token: Token) -> String {
    switch token {
    case .word(let word): "\(JSON.string(word))"
    case .field(let name): "[\(name)]"
    case .number(let number): number.description
    case .string(let text): "'\(text)'"
    case .question: "?"
    case .symbol(let symbol): "\(JSON.string(symbol))"
    case .end: "the end"
    }
  }
}
