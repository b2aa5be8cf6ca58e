import SetteeCore

/// Reads what Settee itself wrote into the file (definitions, settings, view rows, index
/// entries): anything that does not read back was damaged in the file, so every error is
/// ``SetteeError/Code/corruption`` naming what is damaged, never the user's `bad_request`
/// or `invalid_query`.
enum StoredData {
  /// The JSON text `text`, stored as `what` (such as "the definition of view \"t\"").
  static func json(_ text: String, _ what: @autoclosure () -> String) throws -> JSON {
    try reading(what()) { try JSONParser.parse(text) }
  }

  /// Runs `body`, which decodes stored data; any error it throws becomes `corruption`
  /// naming `what` (a `corruption` error already is one, and passes through).
  static func reading<T>(_ what: @autoclosure () -> String, _ body: () throws -> T) throws -> T {
    do { return try body() } catch let error as SetteeError where error.code == .corruption {
      throw error
    } catch let error as SetteeError {
      throw SetteeError(.corruption, "\(what()) is damaged in the file: \(error.reason)")
    } catch {
      throw SetteeError(.corruption, "\(what()) is damaged in the file: \(error)")
    }
  }
}
