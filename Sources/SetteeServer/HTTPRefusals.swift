import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import SetteeCore

/// Requests refused before they are requests: a garbage request line, an unknown method,
/// an HTTP version other than 1.x, a head past NIO's limits (80 KiB a line or in all,
/// 1,000 headers). SwiftNIO's parser stops at them and Hummingbird answers a bare `400`;
/// clients print an answer's body, and an empty one tells them nothing (issue 44, item 10).
/// This handler, just after the HTTP codec, answers them as CouchDB answers errors, with a
/// JSON body: `405 method_not_allowed`, `414 uri_too_long` (the request line was too long),
/// `431 header_fields_too_large`, `400 bad_request` for the rest and for `CONNECT`; then
/// it closes the connection.
///
/// Only an error met while a head is awaited is answered here, after the answers to the
/// requests before it (pipelined); a framing error inside a body reaches the request
/// (``CouchError``), which answers it.
final class HTTPRefusals: ChannelDuplexHandler, RemovableChannelHandler {
  typealias InboundIn = HTTPRequestPart
  typealias InboundOut = HTTPRequestPart
  typealias OutboundIn = HTTPResponsePart
  typealias OutboundOut = HTTPResponsePart

  /// What the connection's bytes show of the head being read (``LineWatcher``).
  private let watcher = LineWatcher()
  /// Requests whose heads came and whose answers have not ended.
  private var unanswered = 0
  /// A refusal waiting for the answers to the requests before it (pipelined).
  private var waiting: CouchError?
  private var refused = false

  func handlerAdded(context: ChannelHandlerContext) {
    // The watcher reads the bytes before the parser does.
    try? context.pipeline.syncOperations.addHandler(watcher, position: .first)
  }

  func channelRead(context: ChannelHandlerContext, data: NIOAny) {
    // Nothing is read after a refusal.
    guard !refused && waiting == nil else { return }
    switch unwrapInboundIn(data) {
    case .head(let head) where head.method == .connect:
      // A tunnel request: its target is no path, and an answer to it would go out without
      // a body (a CONNECT's answer has none when it succeeds, and the encoders keep to
      // that), so it is answered here, before it is a request.
      let refusal = CouchError(
        .badRequest, "bad_request", "CONNECT asks for a tunnel: Settee is no proxy")
      if unanswered > 0 { waiting = refusal } else { refuse(refusal, context) }
      return
    case .head:
      watcher.awaitsHead = false
      unanswered += 1
    case .end: watcher.awaitsHead = true
    case .body: break
    }
    context.fireChannelRead(data)
  }

  func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
    guard case .end = unwrapOutboundIn(data) else {
      context.write(data, promise: promise)
      return
    }
    unanswered -= 1
    context.write(data, promise: promise)
    if unanswered == 0, let refusal = waiting {
      waiting = nil
      refuse(refusal, context)
    }
  }

  func errorCaught(context: ChannelHandlerContext, error: any Error) {
    guard let parserError = error as? HTTPParserError, watcher.awaitsHead else {
      context.fireErrorCaught(error)
      return
    }
    guard !refused && waiting == nil else { return }
    let refusal = Self.refusal(parserError, requestLine: watcher.requestLineIsLong)
    // The requests before it are answered first; nothing is read after it.
    if unanswered > 0 { waiting = refusal } else { refuse(refusal, context) }
  }

  /// Writes `refusal` as CouchDB's JSON error and closes the connection. The answer is
  /// written as bytes past the HTTP encoder (through ``LineWatcher``, nearest the
  /// socket): after a `CONNECT` head the encoders would send it without its body.
  private func refuse(_ refusal: CouchError, _ context: ChannelHandlerContext) {
    refused = true
    var body: [UInt8] = []
    JSONWriter.write(refusal.json, into: &body)
    body.append(UInt8(ascii: "\n"))
    let status = refusal.status
    let head =
      "HTTP/1.1 \(status.code) \(status.reasonPhrase)\r\nContent-Type: application/json\r\n"
      + "Cache-Control: must-revalidate\r\nContent-Length: \(body.count)\r\n"
      + "Connection: close\r\nServer: Settee\r\n\r\n"
    let channel = context.channel
    guard let socket = watcher.context else {
      channel.close(promise: nil)
      return
    }
    socket.writeAndFlush(NIOAny(ByteBuffer(bytes: Array(head.utf8) + body))).whenComplete { _ in
      channel.close(promise: nil)
    }
  }

  /// CouchDB's answer to what the parser met; `requestLine`: the line it stopped in was
  /// the request line.
  static func refusal(_ error: HTTPParserError, requestLine: Bool) -> CouchError {
    switch error {
    case .invalidMethod:
      CouchError(
        .methodNotAllowed, "method_not_allowed",
        "the request method is not one HTTP knows (CouchDB's are GET, HEAD, POST, PUT, DELETE, COPY, OPTIONS)"
      )
    case .headerOverflow where requestLine:
      CouchError(
        .uriTooLong, "uri_too_long",
        "the request line is longer than 80 KiB (send long lists, such as open_revs, in a POST body)"
      )
    case .headerOverflow:
      CouchError(
        .init(code: 431, reasonPhrase: "Request Header Fields Too Large"),
        "header_fields_too_large",
        "the request headers pass 80 KiB, a header line 80 KiB, or their number 1,000")
    case .invalidVersion:
      CouchError(.badRequest, "bad_request", "the HTTP version is not 1.0 or 1.1")
    default:
      CouchError(.badRequest, "bad_request", "the request is malformed: \(error)")
    }
  }
}

/// Watches a connection's bytes ahead of the HTTP parser while a request head is awaited,
/// measuring its request line: when the parser stops at a head too large, a long request
/// line (`414`) is told from long or many headers (`431`).
final class LineWatcher: ChannelInboundHandler, RemovableChannelHandler {
  typealias InboundIn = ByteBuffer
  typealias InboundOut = ByteBuffer

  /// Whether the next bytes belong to a request head (set by ``HTTPRefusals``); setting it
  /// starts a new measure.
  var awaitsHead = true {
    didSet {
      requestLineLength = 0
      requestLineEnded = false
    }
  }
  /// Its place in the pipeline, nearest the socket: what ``HTTPRefusals`` writes past the
  /// HTTP encoder.
  private(set) var context: ChannelHandlerContext?
  /// The bytes of the request line read so far.
  private var requestLineLength = 0
  private var requestLineEnded = false

  func handlerAdded(context: ChannelHandlerContext) { self.context = context }

  func handlerRemoved(context: ChannelHandlerContext) { self.context = nil }

  func channelRead(context: ChannelHandlerContext, data: NIOAny) {
    if awaitsHead && !requestLineEnded {
      unwrapInboundIn(data).withUnsafeReadableBytes { bytes in
        if let newline = bytes.firstIndex(of: UInt8(ascii: "\n")) {
          requestLineLength += newline
          requestLineEnded = true
        } else {
          requestLineLength += bytes.count
        }
      }
    }
    context.fireChannelRead(data)
  }

  /// Whether the request line takes most of what a head may hold (80 KiB), so that it is
  /// what made the head too large.
  var requestLineIsLong: Bool { requestLineLength > 40 << 10 }
}
