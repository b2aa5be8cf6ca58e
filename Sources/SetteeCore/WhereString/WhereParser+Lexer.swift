/// The lexer of ``WhereParser``: the string's tokens, with their positions for errors.
extension WhereParser {
  static let keywords: Set<String> = [
    "AND", "OR", "NOT", "IS", "NULL", "IN", "LIKE", "GLOB", "ESCAPE", "BETWEEN", "CASE", "WHEN",
    "THEN", "ELSE", "END", "CAST", "AS", "COLLATE", "ASC", "DESC", "NULLS", "FIRST", "LAST",
    "TRUE", "FALSE", "ISNULL", "NOTNULL", "DISTINCT", "FROM",
  ]

  static func lex(_ text: String, what: String) throws -> [(token: Token, offset: Int)] {
    let scalars = Array(text.unicodeScalars)
    var tokens: [(Token, Int)] = []
    var index = 0
    func fail(_ message: String, _ at: Int) -> SetteeError { error(text, what, message, at: at) }
    while index < scalars.count {
      if tokens.count >= maxTokens {
        throw SetteeError(
          .limitExceeded,
          "\(what) of \(scalars.count) characters holds more than \(maxTokens) tokens (names, values, operators), the limit"
        )
      }
      let start = index
      let c = scalars[index]
      if c == " " || c == "\t" || c == "\n" || c == "\r" {
        index += 1
        continue
      }
      if c == "[" {
        // A field: up to the closing ]; "\]" and "\\" inside are escapes, as "\." is.
        var name = ""
        index += 1
        var closed = false
        while index < scalars.count {
          let d = scalars[index]
          if d == "\\", index + 1 < scalars.count {
            name.unicodeScalars.append(d)
            name.unicodeScalars.append(scalars[index + 1])
            index += 2
            continue
          }
          if d == "]" {
            closed = true
            index += 1
            break
          }
          name.unicodeScalars.append(d)
          index += 1
        }
        guard closed else { throw fail("a field's [ is never closed", start) }
        tokens.append((.field(name), start))
        continue
      }
      if c == "'" {
        var value = ""
        index += 1
        var closed = false
        while index < scalars.count {
          if scalars[index] == "'" {
            if index + 1 < scalars.count, scalars[index + 1] == "'" {
              value.unicodeScalars.append("'")
              index += 2
              continue
            }
            closed = true
            index += 1
            break
          }
          value.unicodeScalars.append(scalars[index])
          index += 1
        }
        guard closed else { throw fail("a string is never closed", start) }
        tokens.append((.string(value), start))
        continue
      }
      if c == "?" {
        index += 1
        if index < scalars.count, ("0"..."9").contains(scalars[index]) {
          throw fail("numbered arguments (?NNN) are not supported: use ? alone", start)
        }
        tokens.append((.question, start))
        continue
      }
      if ("0"..."9").contains(c)
        || (c == "." && index + 1 < scalars.count && ("0"..."9").contains(scalars[index + 1]))
      {
        var literal = ""
        while index < scalars.count,
          ("0"..."9").contains(scalars[index]) || scalars[index] == "." || scalars[index] == "e"
            || scalars[index] == "E"
            || ((scalars[index] == "+" || scalars[index] == "-")
              && (literal.hasSuffix("e") || literal.hasSuffix("E")))
        {
          literal.unicodeScalars.append(scalars[index])
          index += 1
        }
        if index < scalars.count, scalars[index].properties.isAlphabetic {
          throw fail("a number runs into a name", start)
        }
        let number: JSON
        if let integer = Int64(literal) {
          number = .int(integer)
        } else if let double = Double(literal), double.isFinite {
          number = .double(double)
        } else {
          throw fail("\(JSON.string(literal)) is not a number", start)
        }
        tokens.append((.number(number), start))
        continue
      }
      if c.properties.isAlphabetic || c == "_" {
        var word = ""
        while index < scalars.count,
          scalars[index].properties.isAlphabetic || scalars[index] == "_"
            || ("0"..."9").contains(scalars[index])
        {
          word.unicodeScalars.append(scalars[index])
          index += 1
        }
        let upper = word.uppercased()
        tokens.append((.word(keywords.contains(upper) ? upper : word), start))
        continue
      }
      // Symbols, longest first. Comments and statement separators are refused by name.
      let two = index + 1 < scalars.count ? String(c) + String(scalars[index + 1]) : ""
      if two == "--" || two == "/*" { throw fail("comments are not allowed", start) }
      if ["<=", ">=", "<>", "!=", "==", "||", "<<", ">>"].contains(two) {
        tokens.append((.symbol(two), start))
        index += 2
        continue
      }
      if "=<>+-*/%&|~(),".unicodeScalars.contains(c) {
        tokens.append((.symbol(String(c)), start))
        index += 1
        continue
      }
      if c == ";" { throw fail("a statement separator (;) is not allowed", start) }
      if c == "\"" || c == "`" {
        throw fail("quoted names are not allowed: fields are written [name]", start)
      }
      throw fail("unexpected \(JSON.string(String(c)))", start)
    }
    tokens.append((.end, scalars.count))
    return tokens
  }
}
