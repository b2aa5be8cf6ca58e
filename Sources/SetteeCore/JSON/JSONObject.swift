/// The members of a JSON object, in order.
///
/// Lookup by key is a linear search, which beats hashing for the small objects that
/// documents are made of.
public struct JSONObject: Sendable, Hashable, RandomAccessCollection, ExpressibleByDictionaryLiteral
{
  /// One member of an object.
  public struct Member: Sendable, Hashable {
    /// The member name.
    public var key: String
    /// The member value.
    public var value: JSON

    /// Names compare byte for byte, as lookups match them.
    public static func == (lhs: Member, rhs: Member) -> Bool {
      JSONObject.sameName(lhs.key, rhs.key) && lhs.value == rhs.value
    }

    /// A member.
    public init(key: String, value: JSON) {
      self.key = key
      self.value = value
    }
  }

  /// The members, in order.
  public private(set) var members: [Member]

  /// An empty object.
  public init() { members = [] }

  /// Creates an object from members; a repeated key keeps its first position and last value.
  ///
  /// - Complexity: O(n): past 16 members, names are found through a table (looking each up
  ///   in the members made a replicator's `_revs_diff` of 500 documents quadratic).
  public init(_ pairs: some Sequence<(String, JSON)>) {
    members = []
    var positions: [ByteName: Int]?
    for (key, value) in pairs {
      if positions == nil {
        guard members.count >= 16 else {
          self[key] = value
          continue
        }
        var table: [ByteName: Int] = [:]
        table.reserveCapacity(Swift.max(32, pairs.underestimatedCount))
        for (index, member) in members.enumerated() { table[ByteName(member.key)] = index }
        positions = table
      }
      let name = ByteName(key)
      if let index = positions![name] {
        members[index].value = value
      } else {
        positions![name] = members.count
        members.append(Member(key: key, value: value))
      }
    }
  }

  /// Creates an object from members that are known to have distinct keys.
  init(uniqueMembers: [Member]) { members = uniqueMembers }

  public init(dictionaryLiteral elements: (String, JSON)...) { self.init(elements) }

  public var startIndex: Int { members.startIndex }
  public var endIndex: Int { members.endIndex }
  public subscript(position: Int) -> Member { members[position] }

  /// The member names in order.
  public var keys: [String] { members.map(\.key) }

  /// Gets, replaces (in place), appends, or with `nil` removes a member.
  ///
  /// Names match byte for byte (as SQLite's JSON functions match them), not by Unicode
  /// canonical equivalence as `String`'s `==` would.
  ///
  /// - Complexity: O(n) in the number of members.
  public subscript(key: String) -> JSON? {
    get {
      for member in members where Self.sameName(member.key, key) { return member.value }
      return nil
    }
    set {
      if let index = members.firstIndex(where: { Self.sameName($0.key, key) }) {
        if let newValue { members[index].value = newValue } else { members.remove(at: index) }
      } else if let newValue {
        members.append(Member(key: key, value: newValue))
      }
    }
  }

  /// Removes the member named `key` and returns its value.
  @discardableResult
  public mutating func removeValue(forKey key: String) -> JSON? {
    guard let index = members.firstIndex(where: { Self.sameName($0.key, key) }) else {
      return nil
    }
    return members.remove(at: index).value
  }

  /// Whether two names are the same bytes (see `String.hasSameBytes(as:)`).
  @inline(__always)
  static func sameName(_ a: String, _ b: String) -> Bool { a.hasSameBytes(as: b) }

  /// Inserts a member at a position (clamped to the members' range); a member already
  /// named `key` is removed first, so the object never holds a name twice.
  public mutating func insert(_ value: JSON, forKey key: String, at position: Int) {
    removeValue(forKey: key)
    members.insert(
      Member(key: key, value: value), at: Swift.min(Swift.max(position, 0), members.count))
  }
}

extension JSONObject: CustomStringConvertible {
  public var description: String { JSONWriter.string(.object(self)) }
}
