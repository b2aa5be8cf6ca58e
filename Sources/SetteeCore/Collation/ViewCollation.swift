import CSetteeICU

/// The orders of view keys, as CouchDB has them (SPEC section 4), each written as binary
/// sort keys whose byte order (`memcmp`, SQLite's BLOB order) is the collation, so that a
/// B-tree keeps view rows in order with no comparison callback.
///
/// - ``unicode`` (the default, CouchDB's): `null < false < true < numbers < strings <
///   arrays < objects`; strings by the Unicode Collation Algorithm with ICU's root
///   collation (`a < A < aa < b < B < ba`, accents after base letters, spaces and
///   punctuation before digits before letters, canonically equivalent strings equal);
///   arrays element by element, a shorter prefix first; objects member by member (name,
///   then value) in stored order.
/// - ``raw``: CouchDB's `"collation": "raw"` (Erlang's term order): `numbers < false <
///   null < true < objects < arrays < strings`, strings by code point.
///
/// Numbers compare by value in both (`1` and `1.0` are equal keys).
public enum ViewCollation: String, Sendable, Hashable, CaseIterable {
  /// CouchDB's default order, strings by the Unicode Collation Algorithm.
  case unicode
  /// CouchDB's raw order, strings by code point.
  case raw

  /// The binary sort key of `value`.
  ///
  /// - Throws: ``SetteeError`` with code `storage` when ICU's collator cannot be opened
  ///   (its data missing from the system).
  package func key(_ value: JSON) throws -> [UInt8] {
    var output: [UInt8] = []
    output.reserveCapacity(24)
    try append(value, to: &output)
    return output
  }

  /// Appends the binary sort key of `value` to `output`.
  package func append(_ value: JSON, to output: inout [UInt8]) throws {
    switch self {
    case .unicode: try UnicodeKeys.append(value, to: &output, collator: ICUCollator.shared())
    case .raw: RawKeys.append(value, to: &output)
    }
  }

  /// -1, 0 or 1 as `lhs` sorts before, with or after `rhs`.
  package func compare(_ lhs: JSON, _ rhs: JSON) throws -> Int {
    let left = try key(lhs)
    let right = try key(rhs)
    return left.lexicographicallyPrecedes(right) ? -1 : left == right ? 0 : 1
  }

  /// What the keys depend on besides this code: the ICU collator's version for
  /// ``unicode`` (stored keys are rebuilt when it changes, after an ICU upgrade).
  package func version() throws -> String {
    switch self {
    case .unicode: try ICUCollator.shared().tag
    case .raw: "raw-1"
    }
  }

  /// The highest key that starts with `key` at `level` (Couchbase Lite's
  /// `prefixMatchLevel`): at level 1 a string matches every string it starts
  /// (`"foo"` reaches `"foolish"`) and an array every array it starts (`[1]` reaches
  /// `[1, "x"]`); at level 2 the key is an array whose last element is read at level 1,
  /// and so on. Other values, and level 0, are unchanged.
  package func prefixEnd(_ key: JSON, level: Int) -> JSON {
    guard level > 0 else { return key }
    switch key {
    case .string(let text) where level == 1:
      // ICU's root collation gives U+FFFF the highest primary weight, for this very use;
      // in code-point order U+10FFFF is the highest scalar.
      return .string(text + (self == .unicode ? "\u{FFFF}" : "\u{10FFFF}"))
    case .array(var elements):
      if level == 1 {
        elements.append(self == .unicode ? .object([:]) : .string("\u{10FFFF}"))
      } else if let last = elements.popLast() {
        elements.append(prefixEnd(last, level: level - 1))
      }
      return .array(elements)
    default:
      return key
    }
  }
}

extension ViewCollation {
  /// The key of the first `level` elements of an array key (what ``key(_:)`` gives for
  /// the array cut to that many elements), or the whole key for other keys and shorter
  /// arrays: the group of a row at a group level, read from its binary key without
  /// parsing its JSON. `nil` for bytes that are not a key.
  package func groupKey(_ key: UnsafeRawBufferPointer, level: Int) -> [UInt8]? {
    guard key.first == 0x06 else { return Array(key) }
    var position = 1
    for _ in 0..<level {
      guard position < key.count else { return nil }
      if key[position] == 0x00 { return Array(key) }  // the array ended: all of it
      guard let end = elementEnd(key, from: position) else { return nil }
      position = end
    }
    guard position < key.count else { return nil }
    if key[position] == 0x00 { return Array(key) }
    // Cut here, and end the cut array as its own key would.
    return Array(key[0..<position]) + [0x00]
  }

  /// Where the value starting at `start` ends (the index after its last byte).
  func elementEnd(_ key: UnsafeRawBufferPointer, from start: Int) -> Int? {
    guard start < key.count else { return nil }
    let tag = key[start]
    let numberTag: UInt8 = self == .unicode ? 0x04 : 0x01
    let stringTag: UInt8 = self == .unicode ? 0x05 : 0x07
    let objectTag: UInt8 = self == .unicode ? 0x07 : 0x05
    switch tag {
    case numberTag:
      // Tag, 8 bytes of double, then 0x80 or a sign byte and 8 bytes of difference.
      let marker = start + 9
      guard marker < key.count else { return nil }
      return key[marker] == 0x80 ? marker + 1 : marker + 9
    case stringTag:
      var position = start + 1
      while position < key.count {
        if key[position] == 0x00 {
          // Raw strings write U+0000 as 0x00 0xFF; ICU sort keys hold no 0x00.
          if self == .raw, position + 1 < key.count, key[position + 1] == 0xFF {
            position += 2
            continue
          }
          return position + 1
        }
        position += 1
      }
      return nil
    case 0x06, objectTag:
      var position = start + 1
      while position < key.count, key[position] != 0x00 {
        guard let end = elementEnd(key, from: position) else { return nil }
        position = end
      }
      return position < key.count ? position + 1 : nil
    default:
      return tag == 0 ? nil : start + 1
    }
  }
}

/// Keys in CouchDB's default order.
enum UnicodeKeys {
  static func append(_ value: JSON, to output: inout [UInt8], collator: ICUCollator) throws {
    switch value {
    case .null: output.append(0x01)
    case .bool(let flag): output.append(flag ? 0x03 : 0x02)
    case .int(let number): CollationKey.appendNumber(integer: number, tag: 0x04, to: &output)
    case .double(let number): CollationKey.appendNumber(double: number, tag: 0x04, to: &output)
    case .largeInteger:
      CollationKey.appendNumber(double: value.doubleValue ?? 0, tag: 0x04, to: &output)
    case .string(let text):
      output.append(0x05)
      try collator.appendSortKey(text, to: &output)
    case .array(let elements):
      output.append(0x06)
      for element in elements { try append(element, to: &output, collator: collator) }
      output.append(0x00)
    case .object(let object):
      output.append(0x07)
      for member in object {
        output.append(0x05)
        try collator.appendSortKey(member.key, to: &output)
        try append(member.value, to: &output, collator: collator)
      }
      output.append(0x00)
    }
  }
}

/// Keys in CouchDB's raw order (Erlang's term order over its JSON terms).
enum RawKeys {
  static func append(_ value: JSON, to output: inout [UInt8]) {
    switch value {
    case .int(let number): CollationKey.appendNumber(integer: number, tag: 0x01, to: &output)
    case .double(let number): CollationKey.appendNumber(double: number, tag: 0x01, to: &output)
    case .largeInteger:
      CollationKey.appendNumber(double: value.doubleValue ?? 0, tag: 0x01, to: &output)
    case .bool(false): output.append(0x02)
    case .null: output.append(0x03)
    case .bool(true): output.append(0x04)
    case .object(let object):
      output.append(0x05)
      for member in object {
        appendString(member.key, to: &output)
        append(member.value, to: &output)
      }
      output.append(0x00)
    case .array(let elements):
      output.append(0x06)
      for element in elements { append(element, to: &output) }
      output.append(0x00)
    case .string(let text):
      appendString(text, to: &output)
    }
  }

  static func appendString(_ text: String, to output: inout [UInt8]) {
    output.append(0x07)
    CollationKey.appendStringBody(text, to: &output)
    output.append(0x00)
  }
}

/// ICU's root collator, opened once per process (its sort-key calls are thread-safe).
final class ICUCollator: @unchecked Sendable {
  private let collator: UnsafeMutableRawPointer
  let version: String
  /// What view keys made with it are labelled: `icu-<version>`.
  let tag: String

  private init(_ collator: UnsafeMutableRawPointer) {
    self.collator = collator
    var text = [CChar](repeating: 0, count: 32)
    settee_collator_version(collator, &text, Int32(text.count))
    version = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    tag = "icu-" + version
  }

  private static let opened: Result<ICUCollator, SetteeError> = {
    var error = [CChar](repeating: 0, count: 64)
    guard let collator = settee_collator_open(&error, Int32(error.count)) else {
      let name = String(
        decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
      return .failure(
        SetteeError(
          .storage,
          "ICU's root collator could not be opened (\(name)): view keys in Unicode order need ICU's data (Debian/Ubuntu: libicu-dev); \"collation\": \"raw\" works without it"
        ))
    }
    return .success(ICUCollator(collator))
  }()

  /// The process's collator.
  static func shared() throws -> ICUCollator { try opened.get() }

  /// Appends the string's ICU sort key, ended by its 0x00 byte (no other byte is 0x00).
  ///
  /// The UTF-16 text and the key are made in temporary buffers (on the stack when small):
  /// a view build makes a key per document, and an array for each, zero-filled and cut
  /// back, cost a quarter of making the key (100,000 keys: 266M → 199M instructions).
  func appendSortKey(_ text: String, to output: inout [UInt8]) throws {
    // A UTF-16 unit per UTF-8 byte at most.
    try withUnsafeTemporaryAllocation(of: UInt16.self, capacity: max(text.utf8.count, 1)) {
      characters in
      var count = 0
      for unit in text.utf16 {
        characters[count] = unit
        count += 1
      }
      var capacity = count * 3 + 8
      while true {
        let length = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: capacity) { key in
          let length = settee_collator_sort_key(
            collator, characters.baseAddress, Int32(count), key.baseAddress, Int32(capacity))
          if length > 0, Int(length) <= capacity {
            output.append(contentsOf: UnsafeBufferPointer(rebasing: key[..<Int(length)]))
          }
          return Int(length)
        }
        if length <= 0 {
          throw SetteeError(.storage, "ICU could not make a sort key for a string")
        }
        if length <= capacity { return }
        capacity = length
      }
    }
  }
}
