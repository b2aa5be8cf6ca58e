import SetteeCore

/// Paths as string literals in tests only: the library has no literal form (a bad literal
/// could only trap), tests write known-good paths and want them short.
extension FieldPath: ExpressibleByStringLiteral {
  public init(stringLiteral value: String) {
    do { try self.init(parsing: value) } catch {
      preconditionFailure("bad test path \(value): \(error)")
    }
  }
}
