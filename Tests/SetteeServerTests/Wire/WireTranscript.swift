import Foundation
import SetteeCore

/// A recorded HTTP exchange of `../shared/couchdb-wire/` (copied to `Tests/Fixtures/couchdb-wire/`):
/// what a real CouchDB 3.5.0 (or its replicator) sent and what the server answered.
struct WireExchange: Sendable {
  var n: Int
  var request: WireMessage
  var response: WireMessage
}

/// One side of an exchange: a request (method and path) or a response (status).
struct WireMessage: Sendable {
  var method = ""
  var path = ""
  var status = 0
  var headers: [(String, String)] = []
  var body: [UInt8] = []

  /// The first header of that name (case-insensitive).
  func header(_ name: String) -> String? {
    headers.first { $0.0.lowercased() == name.lowercased() }?.1
  }

  /// The media type of `Content-Type`, lowercased, without parameters.
  var mediaType: String? {
    header("content-type").map {
      $0.split(separator: ";").first!.trimmingCharacters(in: .whitespaces).lowercased()
    }
  }

  var json: JSON? { try? JSONParser.parse(body) }
}

enum WireTranscript {
  /// The fixtures' folder.
  static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Fixtures/couchdb-wire")

  /// The exchanges of a transcript file, in order.
  static func load(_ name: String) throws -> [WireExchange] {
    let data = try Data(contentsOf: folder.appendingPathComponent(name))
    var exchanges: [WireExchange] = []
    for line in data.split(separator: UInt8(ascii: "\n")) where !line.isEmpty {
      let record = try JSONParser.parse(Array(line))
      func message(_ json: JSON?) -> WireMessage {
        var message = WireMessage()
        message.method = json?["method"]?.stringValue ?? ""
        message.path = json?["path"]?.stringValue ?? ""
        if case .int(let status)? = json?["status"] { message.status = Int(status) }
        message.headers = (json?["headers"]?.arrayValue ?? []).compactMap { pair in
          guard let name = pair[0]?.stringValue, let value = pair[1]?.stringValue else {
            return nil
          }
          return (name, value)
        }
        switch json?["body"] {
        case .string(let text)?: message.body = Array(text.utf8)
        case .object(let object)?:
          message.body = Array(Data(base64Encoded: object["base64"]?.stringValue ?? "") ?? Data())
        default: break
        }
        return message
      }
      guard case .int(let n)? = record["n"] else { continue }
      exchanges.append(
        WireExchange(
          n: Int(n), request: message(record["request"]), response: message(record["response"])))
    }
    return exchanges
  }

  /// The exchanges split into replication rounds: each round starts at a `POST /_session`
  /// (CouchDB's replicator logs in at the start of every replication).
  static func rounds(_ exchanges: [WireExchange]) -> [[WireExchange]] {
    var rounds: [[WireExchange]] = []
    for exchange in exchanges {
      if exchange.request.path == "/_session" || rounds.isEmpty { rounds.append([]) }
      rounds[rounds.count - 1].append(exchange)
    }
    return rounds
  }
}
