import Foundation
import SetteeTestSupport

/// HTTP/1.1 over a plain socket, one request a connection: the replay sends CouchDB's
/// recorded requests with exactly their headers (no client adds `Accept-Encoding` or
/// decodes an answer behind the test's back) and reads the answer as it came.
enum RawHTTP {
  /// Sends `request` to `server` and reads the whole answer (at most `timeout` seconds), or
  /// until `done` says what was read so far is enough (a feed that stays open).
  static func send(
    _ request: WireMessage, to server: ServerProcess, timeout: Double = 30,
    until done: (([UInt8]) -> Bool)? = nil
  ) throws -> WireMessage {
    var head = "\(request.method) \(request.path) HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\n"
    for (name, value) in request.headers {
      switch name.lowercased() {
      case "host", "authorization", "content-length", "connection", "transfer-encoding",
        "cookie":
        continue
      default: head += "\(name): \(value)\r\n"
      }
    }
    head += "Content-Length: \(request.body.count)\r\nConnection: close\r\n\r\n"
    let fd = try server.connectAndSend(Array(head.utf8) + request.body)
    defer { close(fd) }
    let received = server.receiveBytes(fd, timeout: timeout, until: done)
    return try parse(received)
  }

  /// ``send(_:to:timeout:)`` from async code, on a thread of its own: a socket's wait
  /// must not hold one of the two threads Swift's tasks share on this machine.
  static func send(_ request: WireMessage, to server: ServerProcess, timeout: Double = 30)
    async throws -> WireMessage
  {
    try await onThread { try send(request, to: server, timeout: timeout) }
  }

  /// A response's status, headers and body (chunked bodies joined).
  static func parse(_ bytes: [UInt8]) throws -> WireMessage {
    guard let end = find([13, 10, 13, 10], in: bytes, from: 0) else {
      throw POSIXError(.EBADMSG)
    }
    let lines = String(decoding: bytes[..<end], as: UTF8.self).components(separatedBy: "\r\n")
    var message = WireMessage()
    let statusLine = lines[0].split(separator: " ")
    message.status = statusLine.count > 1 ? Int(statusLine[1]) ?? 0 : 0
    for line in lines.dropFirst() {
      guard let colon = line.firstIndex(of: ":") else { continue }
      message.headers.append(
        (
          String(line[..<colon]),
          line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        ))
    }
    var body = Array(bytes[(end + 4)...])
    if message.header("transfer-encoding")?.lowercased() == "chunked" {
      var joined: [UInt8] = []
      var index = 0
      while let lineEnd = find([13, 10], in: body, from: index) {
        let sizeText =
          String(decoding: body[index..<lineEnd], as: UTF8.self)
          .split(separator: ";").first.map(String.init) ?? ""
        guard let size = Int(sizeText.trimmingCharacters(in: .whitespaces), radix: 16) else {
          break
        }
        if size == 0 { break }
        let start = lineEnd + 2
        guard start + size <= body.count else { break }
        joined += body[start..<(start + size)]
        index = start + size + 2
      }
      body = joined
    }
    message.body = body
    return message
  }

  private static func find(_ needle: [UInt8], in haystack: [UInt8], from start: Int) -> Int? {
    guard haystack.count >= needle.count else { return nil }
    var index = start
    while index + needle.count <= haystack.count {
      if haystack[index] == needle[0] && Array(haystack[index..<(index + needle.count)]) == needle {
        return index
      }
      index += 1
    }
    return nil
  }
}
