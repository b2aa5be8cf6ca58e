/// Finds a value in JSON text without building it: an index build reads a few fields of
/// every document, and parsing each whole body into a ``JSON`` value first cost more than
/// the rest of the build.
///
/// It answers only what it can answer exactly by looking at bytes, and says so otherwise:
/// a path through an array (whose elements the ``PathResolver`` rules apply to), a member
/// name written with escapes, a name met twice, or text it cannot follow is
/// ``Lookup/unsupported``, and the caller parses the document.
package enum JSONScanner {
  /// What a lookup found.
  package enum Lookup: Equatable, Sendable {
    /// The path leads nowhere: a member is absent, or a value along it is a scalar.
    case missing
    /// The value's text, as offsets into the scanned text.
    case value(Range<Int>)
    /// The text must be parsed to answer (see ``JSONScanner``).
    case unsupported
  }

  /// The value at `components` in `text`, reached through objects only.
  package static func value(at components: [String], in text: UnsafeBufferPointer<UInt8>)
    -> Lookup
  {
    var results: [Lookup] = []
    Paths([components]).lookUp(in: text, into: &results)
    return results[0]
  }

  /// Several paths, looked up together in one pass over a document's members.
  package struct Paths: Sendable {
    /// Each path's member names, as UTF-8.
    let paths: [[[UInt8]]]
    let firstNames: [[UInt8]?]

    /// Paths given as their member names (``FieldPath/components``).
    package init(_ paths: [[String]]) {
      self.paths = paths.map { $0.map { Array($0.utf8) } }
      firstNames = self.paths.map(\.first)
    }

    /// Sets `results` to the value at each path in `text` (in the order of the paths).
    package func lookUp(in text: UnsafeBufferPointer<UInt8>, into results: inout [Lookup]) {
      results.removeAll(keepingCapacity: true)
      let scanner = Scanner(text: text)
      // The document's whole text (not skipped over first: reading its members checks it).
      var end = text.count
      while end > 0, text[end - 1].isJSONSpace { end -= 1 }
      let start = scanner.skipSpace(0)
      guard start < end else {
        results.append(contentsOf: repeatElement(.unsupported, count: paths.count))
        return
      }
      let top = start..<end
      // The paths' first names, found in one pass over the top-level members.
      results.append(contentsOf: repeatElement(.missing, count: paths.count))
      guard paths.contains(where: { !$0.isEmpty }) else {
        for index in paths.indices { results[index] = .value(top) }
        return
      }
      switch text[top.lowerBound] {
      case UInt8(ascii: "{"):
        let complete = scanner.members(of: top) { name, span in
          for index in firstNames.indices {
            guard let first = firstNames[index], same(name, first) else { continue }
            switch results[index] {
            // Stored bodies hold each name once; text that does not is left to the parser.
            case .value: results[index] = .unsupported
            case .missing: results[index] = .value(span)
            case .unsupported: break
            }
          }
        }
        guard complete else {
          for index in results.indices { results[index] = .unsupported }
          return
        }
      case UInt8(ascii: "["):
        for index in results.indices { results[index] = .unsupported }
        return
      default:
        break
      }
      for (index, path) in paths.enumerated() {
        if path.isEmpty {
          results[index] = .value(top)
        } else if case .value(let span) = results[index], path.count > 1 {
          results[index] = scanner.value(at: path[1...], in: span)
        }
      }
    }
  }

  @inline(__always)
  private static func same(_ name: UnsafeBufferPointer<UInt8>, _ wanted: [UInt8]) -> Bool {
    guard name.count == wanted.count else { return false }
    return wanted.withUnsafeBufferPointer { wanted in
      for index in 0..<wanted.count where name[index] != wanted[index] { return false }
      return true
    }
  }

  private struct Scanner {
    let text: UnsafeBufferPointer<UInt8>

    @inline(__always)
    func skipSpace(_ start: Int) -> Int {
      var position = start
      while position < text.count, text[position].isJSONSpace { position += 1 }
      return position
    }

    /// The end of the string whose opening quote is at `start` (after its closing quote).
    func stringEnd(_ start: Int) -> Int? {
      var position = start + 1
      while position < text.count {
        switch text[position] {
        case UInt8(ascii: "\""): return position + 1
        case UInt8(ascii: "\\"): position += 2
        default: position += 1
        }
      }
      return nil
    }

    /// The span of the value that starts at `start`.
    func value(from start: Int) -> Range<Int>? {
      guard start < text.count else { return nil }
      switch text[start] {
      case UInt8(ascii: "\""):
        return stringEnd(start).map { start..<$0 }
      case UInt8(ascii: "{"), UInt8(ascii: "["):
        var depth = 0
        var position = start
        while position < text.count {
          switch text[position] {
          case UInt8(ascii: "\""):
            guard let end = stringEnd(position) else { return nil }
            position = end
            continue
          case UInt8(ascii: "{"), UInt8(ascii: "["):
            depth += 1
          case UInt8(ascii: "}"), UInt8(ascii: "]"):
            depth -= 1
            if depth == 0 { return start..<(position + 1) }
          default:
            break
          }
          position += 1
        }
        return nil
      default:
        var position = start
        while position < text.count {
          switch text[position] {
          case UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), 0x20, 0x09, 0x0A, 0x0D:
            return position > start ? start..<position : nil
          default:
            position += 1
          }
        }
        return start..<position
      }
    }

    /// The value at `components` inside the value spanning `span`.
    func value(at components: ArraySlice<[UInt8]>, in span: Range<Int>) -> Lookup {
      var span = span
      for component in components {
        switch text[span.lowerBound] {
        case UInt8(ascii: "{"):
          var found: Lookup = .missing
          let complete = members(of: span) { name, member in
            guard same(name, component) else { return }
            if case .missing = found { found = .value(member) } else { found = .unsupported }
          }
          guard complete, case .value(let member) = found else {
            return complete ? found : .unsupported
          }
          span = member
        case UInt8(ascii: "["):
          return .unsupported
        default:
          return .missing
        }
      }
      return .value(span)
    }

    /// Calls `body` with each member's name (its bytes, without quotes) and value span of
    /// the object spanning `object`; false when a name is written with escapes or the text
    /// cannot be followed.
    func members(
      of object: Range<Int>, _ body: (UnsafeBufferPointer<UInt8>, Range<Int>) -> Void
    ) -> Bool {
      var position = skipSpace(object.lowerBound + 1)
      // The object must end where its span does.
      func ends(_ position: Int) -> Bool {
        text[position] == UInt8(ascii: "}") && position + 1 == object.upperBound
      }
      if position < object.upperBound, text[position] == UInt8(ascii: "}") {
        return ends(position)
      }
      while position < object.upperBound {
        guard text[position] == UInt8(ascii: "\"") else { return false }
        // The name, which must have no escapes.
        var nameEnd = position + 1
        while nameEnd < object.upperBound, text[nameEnd] != UInt8(ascii: "\"") {
          if text[nameEnd] == UInt8(ascii: "\\") { return false }
          nameEnd += 1
        }
        guard nameEnd < object.upperBound else { return false }
        let name = UnsafeBufferPointer(rebasing: text[(position + 1)..<nameEnd])
        position = skipSpace(nameEnd + 1)
        guard position < object.upperBound, text[position] == UInt8(ascii: ":") else {
          return false
        }
        guard let span = value(from: skipSpace(position + 1)) else { return false }
        body(name, span)
        position = skipSpace(span.upperBound)
        guard position < object.upperBound else { return false }
        if text[position] == UInt8(ascii: "}") { return ends(position) }
        guard text[position] == UInt8(ascii: ",") else { return false }
        position = skipSpace(position + 1)
      }
      return false
    }
  }
}
