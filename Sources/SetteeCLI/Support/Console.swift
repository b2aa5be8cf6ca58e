import Foundation
import SetteeCore

/// Standard output and error, written straight to their descriptors (callers write in
/// large chunks, so no buffering is needed and nothing is left unflushed at exit).
package enum Console {
  package static func out(_ text: String) { write(Array(text.utf8), to: STDOUT_FILENO) }

  package static func out(_ bytes: [UInt8]) { write(bytes, to: STDOUT_FILENO) }

  /// Prints a JSON value and a newline on standard output.
  package static func outJSON(_ value: JSON) {
    var bytes = JSONWriter.bytes(value)
    bytes.append(UInt8(ascii: "\n"))
    out(bytes)
  }

  package static func err(_ text: String) { write(Array(text.utf8), to: STDERR_FILENO) }

  /// Whether standard error is a terminal (so progress can be drawn).
  package static var stderrIsTerminal: Bool { isatty(STDERR_FILENO) != 0 }

  /// Prints `{"error": …, "reason": …}` on standard error.
  package static func error(name: String, reason: String, extra: JSONObject = [:]) {
    var body: JSONObject = ["error": .string(name), "reason": .string(reason)]
    for member in extra { body[member.key] = member.value }
    err(JSONWriter.string(.object(body)) + "\n")
  }

  package static func error(_ error: SetteeError) {
    var extra: JSONObject = [:]
    if let id = error.documentID { extra["id"] = .string(id) }
    if let line = error.location?.line { extra["line"] = .int(Int64(line)) }
    if let column = error.location?.column { extra["column"] = .int(Int64(column)) }
    if let record = error.location?.record { extra["record"] = .int(Int64(record)) }
    Console.error(name: error.couchDBError ?? error.code.name, reason: error.reason, extra: extra)
  }

  private static func write(_ bytes: [UInt8], to descriptor: Int32) {
    bytes.withUnsafeBytes { buffer in
      var offset = 0
      while offset < buffer.count {
        let written = Foundation.write(
          descriptor, buffer.baseAddress! + offset, buffer.count - offset)
        if written < 0 {
          if errno == EINTR { continue }
          return  // a closed pipe: nothing sensible left to do with the output
        }
        offset += written
      }
    }
  }
}
