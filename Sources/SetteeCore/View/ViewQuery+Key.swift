extension ViewQuery {
  /// A key given to ``ViewQuery/init(key:keys:startKey:endKey:startKeyDocID:endKeyDocID:inclusiveEnd:descending:skip:limit:prefixMatchLevel:reduce:group:groupLevel:includeDocs:stale:includeOffset:)``:
  /// any JSON written as a literal (`"mike"`, `31`, `["Safeway", [:]]`), `.null`, or
  /// `Key(json)`, but never the `nil` literal, which would read as "no key" where the JSON
  /// `null` key was meant (``JSON`` takes `nil` for `null`). Leave a key out for none.
  public struct Key: Sendable, Hashable, ExpressibleByStringLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByBooleanLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral
  {
    /// The key, as JSON; `nil` for none (the initializer's default).
    let json: JSON?

    /// A key of any JSON value.
    public init(_ json: JSON) { self.json = json }

    private init(absent: Void) { json = nil }

    /// No key: what the initializer means when a key is left out.
    @usableFromInline static let absent = Self(absent: ())

    /// The JSON `null` key.
    public static let null = Self(JSON.null)

    /// A string key held in a variable (`.string(name)`).
    public static func string(_ text: String) -> Self { Self(JSON.string(text)) }

    public init(stringLiteral value: String) { json = .string(value) }
    public init(integerLiteral value: Int64) { json = .int(value) }
    public init(floatLiteral value: Double) { json = .double(value) }
    public init(booleanLiteral value: Bool) { json = .bool(value) }
    public init(arrayLiteral elements: JSON...) { json = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSON)...) {
      json = .object(JSONObject(elements))
    }
  }
}
