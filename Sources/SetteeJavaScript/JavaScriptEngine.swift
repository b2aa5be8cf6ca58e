import CSetteeJavaScriptCore
import Foundation
import SetteeCore

/// One JavaScript global scope on JavaScriptCore, in a context group of its own (nothing
/// is shared with another engine), whose every call is stopped after a time limit. Calls
/// take turns: one runs at a time.
///
/// JSON text is what crosses between Swift and JavaScript: an argument is parsed by
/// JavaScriptCore's own JSON parser, a result printed by its `JSON.stringify`.
final class JavaScriptEngine: @unchecked Sendable {
  private let engine: OpaquePointer
  private let lock = NSLock()
  /// Where async calls run: a thread of Dispatch's, never one of Swift's cooperative pool,
  /// which a function running to its time limit would hold.
  private let queue = DispatchQueue(label: "settee.javascript")
  /// How long one call may run, in seconds of wall time.
  let timeLimit: Double
  /// How much the process may grow during one call, in bytes, before what the call is
  /// given is counted (``defaultMemoryLimit``).
  let memoryLimit: Int
  /// Whether a call was stopped at a limit, its memory or its time: what it allocated may
  /// still be reachable from the global scope, so the engine is not used again
  /// (``CompiledFunctions`` compiles the function afresh), as CouchDB does not use a
  /// `couchjs` it killed.
  var isSpent: Bool { lock.withLock { spent } }
  private var spent = false

  /// How much the process may grow during one call into JavaScript by default: 64 MiB,
  /// and 16 bytes more for each byte of JSON the call is given (a batch of documents: at
  /// most 256, or 4 MiB of them; an 8 MB document mapped and emitted whole takes about
  /// 100 MB). A function that allocates without end is stopped within a few MiB of its
  /// bound, the server well under 200 MB, where it grew to 5.9 GB in its 5 s time limit
  /// before (issue 57).
  static let defaultMemoryLimit = 64 << 20

  /// - Throws: ``SetteeError`` with code `invalidArgument` when JavaScriptCore cannot be
  ///   loaded, naming the package to install.
  init(timeLimit: Double, memoryLimit: Int = JavaScriptEngine.defaultMemoryLimit) throws {
    var error = [CChar](repeating: 0, count: 512)
    guard
      let engine = settee_js_create(
        timeLimit, max(0, memoryLimit), &error, Int32(error.count))
    else {
      let text = error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
      throw SetteeError(.invalidArgument, String(decoding: text, as: UTF8.self))
    }
    self.engine = engine
    self.timeLimit = timeLimit
    self.memoryLimit = memoryLimit
  }

  deinit { settee_js_destroy(engine) }

  /// Whether JavaScriptCore can be loaded in this process (on Linux, whether
  /// `libjavascriptcoregtk` is installed).
  static var isAvailable: Bool { (try? JavaScriptEngine(timeLimit: 1)) != nil }

  /// Runs a script in the global scope.
  ///
  /// - Throws: ``SetteeError`` with code `invalidArgument` naming the exception, or
  ///   `limitExceeded` past the time limit.
  func evaluate(_ source: String) throws {
    try lock.withLock {
      var error: UnsafeMutablePointer<CChar>?
      var timedOut: Int32 = 0
      let utf8 = Array(source.utf8) + [0]
      let ok = utf8.withUnsafeBufferPointer { buffer in
        buffer.withMemoryRebound(to: CChar.self) { text in
          settee_js_evaluate(engine, text.baseAddress!, text.count - 1, &error, &timedOut)
        }
      }
      if ok == 0 { throw failure(error, stopped: timedOut, while: "evaluating a script") }
    }
  }

  /// Calls the global function `name` with `argument` and returns its result (`nil` for a
  /// result that JSON cannot hold, such as `undefined`).
  ///
  /// - Throws: ``SetteeError`` with code `invalidArgument` naming the exception, or
  ///   `limitExceeded` past the time limit.
  func call(_ name: String, _ argument: JSON) throws -> JSON? {
    try call(name, text: JSONWriter.bytes(argument))
  }

  /// ``call(_:_:)`` without holding a thread of Swift's cooperative pool: the function runs
  /// on the engine's own queue while the task waits.
  func call(_ name: String, _ argument: JSON) async throws -> JSON? {
    try await withCheckedThrowingContinuation { continuation in
      queue.async { continuation.resume(with: Result { try self.call(name, argument) }) }
    }
  }

  /// Calls the global function `name` with an argument given as JSON text (JavaScriptCore
  /// parses it; text that is not JSON is an error). With `textResult`, a function that
  /// returns a string returns JSON it printed itself, parsed here as it is.
  func call(_ name: String, text: [UInt8], textResult: Bool = false) throws -> JSON? {
    try lock.withLock {
      var error: UnsafeMutablePointer<CChar>?
      var timedOut: Int32 = 0
      var length = 0
      let result = text.withUnsafeBufferPointer { buffer in
        buffer.withMemoryRebound(to: CChar.self) { bytes in
          settee_js_call(
            engine, name, bytes.baseAddress!, bytes.count, textResult ? 1 : 0, &length, &error,
            &timedOut)
        }
      }
      guard let result else { throw failure(error, stopped: timedOut, while: name) }
      defer { free(result) }
      let bytes = UnsafeRawBufferPointer(start: result, count: length)
      if bytes.elementsEqual("undefined".utf8) { return nil }
      return try JSONParser.parse(bytes.bindMemory(to: UInt8.self))
    }
  }

  /// The error of a call that failed; `stopped`: why a limit stopped it, if one did. Runs
  /// under `lock`.
  private func failure(_ error: UnsafeMutablePointer<CChar>?, stopped: Int32, while doing: String)
    -> SetteeError
  {
    let message = error.map { String(cString: $0) } ?? "an exception"
    free(error)
    switch stopped {
    case SETTEE_JS_STOPPED_TIME:
      // The engine is spent, as at the memory limit (`settee_js_spend_stopped`).
      spent = true
      return SetteeError(
        .limitExceeded,
        "JavaScript ran past its time limit of \(timeLimit) s (os_process_timeout) and was stopped"
      )
    case SETTEE_JS_STOPPED_MEMORY:
      spent = true
      return SetteeError(
        .limitExceeded,
        "JavaScript used more than its memory limit of \(memoryLimit >> 20) MiB and was stopped")
    default:
      return SetteeError(.invalidArgument, "JavaScript: \(message)")
    }
  }
}
