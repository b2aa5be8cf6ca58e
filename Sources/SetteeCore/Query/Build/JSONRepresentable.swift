/// A Swift value that stands for a JSON value in a query (`Field("age") > minimumAge`).
public protocol JSONRepresentable: Sendable {
  /// The value as JSON.
  var jsonValue: JSON { get }
}

extension JSON: JSONRepresentable {
  public var jsonValue: JSON { self }
}

extension String: JSONRepresentable {
  public var jsonValue: JSON { .string(self) }
}

extension Bool: JSONRepresentable {
  public var jsonValue: JSON { .bool(self) }
}

extension Int: JSONRepresentable {
  public var jsonValue: JSON { .int(Int64(self)) }
}

extension Int64: JSONRepresentable {
  public var jsonValue: JSON { .int(self) }
}

extension Int32: JSONRepresentable {
  public var jsonValue: JSON { .int(Int64(self)) }
}

extension Double: JSONRepresentable {
  public var jsonValue: JSON { .double(self) }
}

extension Array: JSONRepresentable where Element: JSONRepresentable {
  public var jsonValue: JSON { .array(map(\.jsonValue)) }
}

extension Optional: JSONRepresentable where Wrapped: JSONRepresentable {
  public var jsonValue: JSON { self?.jsonValue ?? .null }
}

extension JSONObject: JSONRepresentable {
  public var jsonValue: JSON { .object(self) }
}
