import Foundation
import SetteeTestSupport
import SetteeCore
import SetteeReplication

/// A CouchDB source played from a recording: it answers a replicator's requests with what
/// the real CouchDB 3.5.0 answered to the same questions (`_changes` by its `since`,
/// `_bulk_get` document by document), keeps `_local` checkpoints as CouchDB does, and
/// lists every request the recording cannot answer. A plain HTTP/1.1 server on a loopback
/// port, one thread a connection, keep-alive.
final class RecordedCouchDB: @unchecked Sendable {
  // Everything mutable is read and written under `lock`.
  private let lock = NSLock()
  private let listener: Int32
  let port: Int
  let database: String
  private let rounds: [[WireExchange]]
  private var round = 0
  private var locals: [String: JSONObject] = [:]
  private var unanswered: [String] = []
  private var created = false
  private var writes: [JSONObject] = []

  /// A source named `database`, answering in `rounds` (``play(round:)`` picks one: the
  /// same `since` gets another answer once the source has changed).
  init(database: String, rounds: [[WireExchange]]) throws {
    self.database = database
    self.rounds = rounds
    let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    self.listener = listener
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = 0
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
        bind(listener, pointer, length) == 0 && listen(listener, 16) == 0
          && getsockname(listener, pointer, &length) == 0
      }
    }
    guard bound else { throw POSIXError(.EADDRINUSE) }
    port = Int(UInt16(bigEndian: address.sin_port))
    Thread { [self] in acceptLoop() }.start()
  }

  deinit {
    shutdown(listener, Int32(SHUT_RDWR))
    close(listener)
  }

  var url: URL { URL(string: "http://127.0.0.1:\(port)/\(database)")! }

  /// Answers as the source did in round `index` (0-based).
  func play(round index: Int) { lock.withLock { round = index } }

  /// The requests the recording had no answer for.
  var unansweredRequests: [String] { lock.withLock { unanswered } }

  /// The revisions written to it as a target (`_bulk_docs`, `PUT ?new_edits=false`), each
  /// as sent, attachments with their data.
  var written: [JSONObject] { lock.withLock { writes } }

  private func acceptLoop() {
    while true {
      let connection = accept(listener, nil, nil)
      // Not inherited by the processes other tests start (a copy would keep it open).
      if connection >= 0 { _ = fcntl(connection, F_SETFD, FD_CLOEXEC) }
      guard connection >= 0 else { return }
      Thread { [self] in serve(connection) }.start()
    }
  }

  private func serve(_ connection: Int32) {
    defer { close(connection) }
    var buffer: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
      if let (request, used) = Self.request(in: buffer) {
        buffer.removeFirst(used)
        let answer = respond(request)
        var head = "HTTP/1.1 \(answer.status) \(answer.status < 300 ? "OK" : "Error")\r\n"
        for (name, value) in answer.headers { head += "\(name): \(value)\r\n" }
        head += "Content-Length: \(answer.body.count)\r\n\r\n"
        let bytes = Array(head.utf8) + answer.body
        guard bytes.withUnsafeBytes({ sendRetrying(connection, $0) }) else { return }
        continue
      }
      let count = receiveRetrying(connection, &chunk)
      guard count > 0 else { return }
      buffer += chunk[0..<count]
    }
  }

  /// The first whole request in `buffer`, and how many bytes it took.
  private static func request(in buffer: [UInt8]) -> (WireMessage, Int)? {
    guard let end = buffer.indices.dropLast(3).first(where: {
      buffer[$0] == 13 && buffer[$0 + 1] == 10 && buffer[$0 + 2] == 13 && buffer[$0 + 3] == 10
    }) else { return nil }
    let lines = String(decoding: buffer[..<end], as: UTF8.self).components(separatedBy: "\r\n")
    let first = lines[0].split(separator: " ")
    guard first.count >= 2 else { return nil }
    var message = WireMessage(method: String(first[0]), path: String(first[1]))
    for line in lines.dropFirst() {
      guard let colon = line.firstIndex(of: ":") else { continue }
      message.headers.append(
        (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
    }
    let start = end + 4
    if message.header("transfer-encoding")?.lowercased() == "chunked" {
      var index = start
      var body: [UInt8] = []
      while true {
        guard let lineEnd = (index..<max(index, buffer.count - 1)).first(where: {
          buffer[$0] == 13 && buffer[$0 + 1] == 10
        }) else { return nil }
        let size = Int(String(decoding: buffer[index..<lineEnd], as: UTF8.self), radix: 16) ?? 0
        let dataStart = lineEnd + 2
        guard dataStart + size + 2 <= buffer.count else { return nil }
        body += buffer[dataStart..<(dataStart + size)]
        index = dataStart + size + 2
        if size == 0 {
          message.body = body
          return (message, index)
        }
      }
    }
    let length = Int(message.header("content-length") ?? "0") ?? 0
    guard buffer.count >= start + length else { return nil }
    message.body = Array(buffer[start..<(start + length)])
    return (message, start + length)
  }

  private func respond(_ request: WireMessage) -> WireMessage {
    lock.withLock { respond(locked: request) }
  }

  /// The answer, with `lock` held (a long poll lets it go while it waits).
  private func respond(locked request: WireMessage) -> WireMessage {
    do {
      let exchanges = rounds[round]
      let (path, query) = Self.split(request.path)
      let base = "/" + database
      func json(_ status: Int, _ body: JSON) -> WireMessage {
        var answer = WireMessage()
        answer.status = status
        answer.headers = [("Content-Type", "application/json")]
        answer.body = JSONWriter.bytes(body) + [10]
        return answer
      }
      func recorded(_ matches: (WireExchange) -> Bool) -> WireMessage? {
        guard let exchange = exchanges.first(where: matches) else { return nil }
        var answer = exchange.response
        answer.headers = answer.headers.filter {
          ["content-type", "content-encoding"].contains($0.0.lowercased())
        }
        return answer
      }
      if request.method == "GET" && (path == base || path == base + "/") {
        // A target the replicator created answers as it did once created.
        if let info = recorded({
          Self.split($0.request.path).0 == base && $0.request.method == "GET"
            && (!created || $0.response.status == 200)
        }) {
          return info
        }
        if created { return json(200, ["db_name": .string(database), "update_seq": "0"]) }
      } else if request.method == "PUT" && (path == base || path == base + "/") {
        created = true
        return json(201, ["ok": true])
      } else if path == base + "/_revs_diff" {
        // Composed document by document from the recorded answers.
        var known = JSONObject()
        for exchange in exchanges where exchange.request.path.hasPrefix(base + "/_revs_diff") {
          for member in exchange.response.json?.objectValue ?? [:] { known[member.key] = member.value }
        }
        guard let asked = (try? JSONParser.parse(request.body))?.objectValue else { return json(400, [:]) }
        var answer = JSONObject()
        for member in asked {
          guard let entry = known[member.key] else { continue }
          let offered = Set(member.value.arrayValue ?? [])
          guard Set(entry["missing"]?.arrayValue ?? []).isSubset(of: offered) else {
            unanswered.append("_revs_diff \(member.key): offered \(offered)")
            continue
          }
          answer[member.key] = entry
        }
        return json(200, .object(answer))
      } else if path == base + "/_bulk_docs" {
        if let docs = (try? JSONParser.parse(request.body))?["docs"]?.arrayValue {
          writes += docs.compactMap(\.objectValue)
          return json(201, [])
        }
      } else if request.method == "PUT", query["new_edits"] == "false",
        let type = request.header("content-type"), let boundary = Multipart.boundary(ofContentType: type),
        let document = try? Multipart.document(fromRelated: request.body, boundary: boundary)
      {
        writes.append(document)
        return json(
          201, ["ok": true, "id": document["_id"] ?? .null, "rev": document["_rev"] ?? .null])
      } else if path.hasPrefix(base + "/_local/") {
        let id = String(path.dropFirst(base.count + 1)).removingPercentEncoding ?? ""
        switch request.method {
        case "GET":
          guard let stored = locals[id] else {
            return json(404, ["error": "not_found", "reason": "missing"])
          }
          return json(200, .object(stored))
        case "PUT":
          guard var document = (try? JSONParser.parse(request.body))?.objectValue else { break }
          let generation = (locals[id]?["_rev"]?.stringValue?.split(separator: "-").last)
            .flatMap { Int($0) } ?? 0
          document["_id"] = .string(id)
          document["_rev"] = .string("0-\(generation + 1)")
          document.removeValue(forKey: "_revisions")
          locals[id] = document
          return json(201, ["ok": true, "id": .string(id), "rev": .string("0-\(generation + 1)")])
        default: break
        }
      } else if path == base + "/_changes" {
        let since = query["since"] ?? "0"
        if let answer = recorded({
          Self.split($0.request.path).0 == path && Self.split($0.request.path).1["since"] == since
            && !(query["feed"] == "longpoll" && $0.response.json?["results"]?.arrayValue?.isEmpty == true)
        }) {
          return answer
        }
        if query["feed"] == "longpoll" {
          // CouchDB holds a long poll until a change comes or its timeout passes: until the
          // test plays a later round, whose answer to this since is served then.
          let timeout = Double(query["timeout"] ?? "10000").map { $0 / 1000 } ?? 10
          let waiting = round
          lock.unlock()
          let deadline = Date().addingTimeInterval(min(timeout, 30))
          while Date() < deadline && lock.withLock({ round == waiting }) { usleep(20_000) }
          lock.lock()
          if round != waiting { return respond(locked: request) }
          if let answer = recorded({
            Self.split($0.request.path).0 == path && Self.split($0.request.path).1["since"] == since
          }) {
            return answer
          }
        }
      } else if path == base + "/_bulk_get" {
        if let answer = bulkGet(request, query, exchanges) { return answer }
      } else if path == base + "/_ensure_full_commit" {
        return json(201, ["ok": true, "instance_start_time": "0"])
      }
      unanswered.append("\(request.method) \(request.path) \(String(decoding: request.body.prefix(300), as: UTF8.self))")
      return json(500, ["error": "unrecorded", "reason": "the recording has no answer"])
    }
  }

  /// `_bulk_get` composed document by document from the recorded answers to requests with
  /// the same `attachments` flag.
  private func bulkGet(_ request: WireMessage, _ query: [String: String], _ exchanges: [WireExchange])
    -> WireMessage?
  {
    let attachments = query["attachments"] == "true"
    var known: [String: JSON] = [:]
    for exchange in exchanges where exchange.request.path.contains("/_bulk_get") {
      guard Self.split(exchange.request.path).1["attachments"] == "true" ? attachments : !attachments
      else { continue }
      for result in exchange.response.json?["results"]?.arrayValue ?? [] {
        for doc in result["docs"]?.arrayValue ?? [] {
          let object = doc["ok"] ?? doc["error"]
          guard let id = object?["_id"]?.stringValue ?? object?["id"]?.stringValue,
            let rev = object?["_rev"]?.stringValue ?? object?["rev"]?.stringValue
          else { continue }
          known[id + " " + rev] = doc
        }
      }
    }
    guard let asked = (try? JSONParser.parse(request.body))?["docs"]?.arrayValue else { return nil }
    var results: [JSON] = []
    for item in asked {
      guard let id = item["id"]?.stringValue, let rev = item["rev"]?.stringValue,
        let doc = known[id + " " + rev]
      else { return nil }
      results.append(["id": .string(id), "docs": [doc]])
    }
    var answer = WireMessage()
    answer.status = 200
    answer.headers = [("Content-Type", "application/json")]
    answer.body = JSONWriter.bytes(["results": .array(results)])
    return answer
  }

  private static func split(_ path: String) -> (String, [String: String]) {
    let parts = path.split(separator: "?", maxSplits: 1)
    var query: [String: String] = [:]
    if parts.count == 2 {
      for pair in parts[1].split(separator: "&") {
        let kv = pair.split(separator: "=", maxSplits: 1)
        query[String(kv[0])] = kv.count == 2 ? String(kv[1]).removingPercentEncoding : ""
      }
    }
    return (String(parts.first ?? ""), query)
  }
}
