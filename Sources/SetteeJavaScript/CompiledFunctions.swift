import Settee
import SetteeCore

/// One database's compiled design functions (views' map and reduce, filters, views as
/// filters), kept while the process has the database open, so that a function compiles
/// once and not on every request.
///
/// A compiled function runs with its design document as `this` and keeps the global state
/// it makes, so it may be reused only where its design document's body is the same one:
/// entries are kept per ``Database`` value (in its package face states), and named by the
/// collection, the SHA-256 digest of the design document's whole body, the function and
/// the time limit. Never by the document's id and revision: a database's administrator can
/// write any revision id with any body into their own database (`new_edits: false`), and
/// code keyed by id and revision would then run over another database's documents (the
/// flaw of CouchDB's CVE-2023-26268).
final class CompiledFunctions: Sendable {
  private let entries = Locked<[String: any AnyObject & Sendable]>([:])
  /// How many compiled functions a database keeps (each holds a JavaScript context);
  /// past it, the cache starts again.
  static let limit = 64

  /// The compiled functions of `collection`'s database.
  static func of(_ collection: DocumentCollection) -> CompiledFunctions {
    collection.database.packageFaceStates.state(CompiledFunctions.self) { CompiledFunctions() }
  }

  /// The name of `function` of the design document `ddoc` in `collection`, compiled with
  /// `timeLimit`.
  static func key(
    _ collection: DocumentCollection, ddoc: JSONObject, function: String, timeLimit: Double
  ) -> String {
    let digest = SHA256.hash(JSONWriter.bytes(.object(ddoc)))
    // The name's length first: no collection name can run into the digest.
    let name = collection.name
    return "\(name.utf8.count):\(name) \(Hex.string(ofDigest: digest)) \(function) \(timeLimit)"
  }

  /// The value kept under `key`, or `make`'s, kept; one whose engine was stopped at its
  /// memory limit is compiled afresh. Compiling runs outside the lock: two requests that
  /// race both compile, and one result is kept.
  func value<Value: AnyObject & Sendable>(_ key: String, _ make: () throws -> Value) rethrows
    -> Value
  {
    if let kept = entries.withLock({ $0[key] }) as? Value,
      !((kept as? any SpendableFunctions)?.isSpent ?? false)
    {
      return kept
    }
    let made = try make()
    entries.withLock { entries in
      if entries.count >= Self.limit { entries.removeAll() }
      entries[key] = made
    }
    return made
  }
}

/// Compiled functions whose engine a memory limit may have spent (``JavaScriptEngine/isSpent``).
protocol SpendableFunctions {
  var isSpent: Bool { get }
}

extension JavaScriptEngine: SpendableFunctions {}
