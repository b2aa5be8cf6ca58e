import HTTPTypes
import Hummingbird
import SetteeCore

/// The web console at `/_utils/` (issue 58): plain HTML, CSS and JavaScript modules of
/// Settee's own, embedded in the binary (`Console/`, SwiftPM's `embedInCode`), so that it
/// works offline from one file. Every page is the same for every caller: the console
/// holds no data and no privilege of its own, and reaches everything through the HTTP API
/// under the caller's own session.
extension CouchHandler {
  /// The console's files by name, with their media types.
  static let consoleFiles: [String: (type: String, bytes: [UInt8])] = [
    "index.html": ("text/html; charset=utf-8", PackageResources.index_html),
    "console.css": ("text/css; charset=utf-8", PackageResources.console_css),
    "console.js": ("text/javascript; charset=utf-8", PackageResources.console_js),
    "api.js": ("text/javascript; charset=utf-8", PackageResources.api_js),
    "dom.js": ("text/javascript; charset=utf-8", PackageResources.dom_js),
    "pages.js": ("text/javascript; charset=utf-8", PackageResources.pages_js),
    "more.js": ("text/javascript; charset=utf-8", PackageResources.more_js),
  ]

  /// What every console response carries: scripts and styles only from `/_utils/` (no
  /// inline script, no `eval`), no plugins, no framing, no sniffing, no referrer.
  static let consoleHeaders: HTTPFields = [
    HTTPField.Name("Content-Security-Policy")!:
      "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
    HTTPField.Name("X-Content-Type-Options")!: "nosniff",
    HTTPField.Name("X-Frame-Options")!: "DENY",
    HTTPField.Name("Referrer-Policy")!: "no-referrer",
    .cacheControl: "no-cache",
  ]

  /// `GET /_utils` (redirected to `/_utils/`), `/_utils/` and `/_utils/{file}`.
  func console(_ request: CouchRequest, _ rest: [String]) async throws -> Response {
    try allow(request, "GET,HEAD")
    let path = request.request.uri.path
    if rest.isEmpty && !path.hasSuffix("/") {
      var headers = Self.consoleHeaders
      headers[.location] = "/_utils/"
      return Response(status: .movedPermanently, headers: headers)
    }
    let name = rest.isEmpty ? "index.html" : rest.joined(separator: "/")
    guard let file = Self.consoleFiles[name] else {
      throw CouchError(.notFound, "not_found", "Document is missing attachment")
    }
    var headers = Self.consoleHeaders
    headers[.contentType] = file.type
    return Response(
      status: .ok, headers: headers,
      body: ResponseBody(byteBuffer: ByteBuffer(bytes: file.bytes)))
  }
}
