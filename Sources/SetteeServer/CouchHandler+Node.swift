import Foundation
import Hummingbird
import Settee
import SetteeCore

/// The node endpoints CouchDB's clients and tools probe: `/_membership` and
/// `/_node/{node}` with its configuration, read-only. Settee is one node, named as Erlang
/// names a node that is not distributed (`nonode@nohost`); `_local` names it too.
extension CouchHandler {
  static let nodeName = "nonode@nohost"

  /// `GET /_membership`: the one node.
  func membership(_ request: CouchRequest, _ rest: [String]) async throws -> Response {
    try only(rest, [], request, "GET,HEAD")
    let nodes: JSON = [.string(Self.nodeName)]
    return CouchResponse.json(["all_nodes": nodes, "cluster_nodes": nodes])
  }

  /// `GET /_node/{node}` (its name), `/_node/{node}/_config`, `…/_config/{section}` and
  /// `…/_config/{section}/{key}`: the settings this server runs with, under CouchDB's
  /// section and key names, every value a string as CouchDB gives them. Changing them is
  /// refused: they are `settee serve`'s options, not a configuration file.
  func node(_ request: CouchRequest, _ rest: [String]) async throws -> Response {
    guard let node = rest.first, node == "_local" || node == Self.nodeName else {
      throw CouchError(.notFound, "not_found", "no such node: Settee is one node, \(Self.nodeName)")
    }
    let path = Array(rest.dropFirst())
    guard let first = path.first else {
      try allow(request, "GET,HEAD")
      return CouchResponse.json(["name": .string(Self.nodeName)])
    }
    guard first == "_config", path.count <= 3 else {
      throw CouchError(.notFound, "not_found", "Settee's node answers _config only")
    }
    try allow(request, "GET,HEAD")
    let config = try await configuration()
    switch path.count {
    case 1:
      return CouchResponse.json(
        .object(
          JSONObject(config.sorted { $0.key < $1.key }.map { ($0.key, Self.section($0.value)) })))
    case 2:
      return CouchResponse.json(Self.section(config[path[1]] ?? [:]))
    default:
      guard let value = config[path[1]]?[path[2]] else {
        throw CouchError(.notFound, "not_found", "unknown_config_value")
      }
      return CouchResponse.json(.string(value))
    }
  }

  /// A configuration section as CouchDB gives it: its keys in order, values as strings.
  private static func section(_ values: [String: String]) -> JSON {
    .object(JSONObject(values.sorted { $0.key < $1.key }.map { ($0.key, JSON.string($0.value)) }))
  }

  /// The server's settings as CouchDB's configuration sections.
  private func configuration() async throws -> [String: [String: String]] {
    let limits = database.configuration.limits
    let cors = configuration.corsOrigins
    let replication = configuration.replicationLimits
    var sections: [String: [String: String]] = [
      "couchdb": [
        "uuid": try await database.uuid(),
        "max_document_size": String(limits.maxDocumentBytes),
        "max_attachment_size": String(configuration.maxAttachmentBytes),
        "single_node": "true",
        "users_db_suffix": UsersDatabase.name,
      ],
      "chttpd": [
        "bind_address": configuration.host, "port": String(configuration.port),
        "max_http_request_size": String(configuration.maxRequestBytes),
        "require_valid_user": "false",
      ],
      "httpd": ["enable_cors": cors.isEmpty ? "false" : "true"],
      "chttpd_auth": [
        "authentication_db": UsersDatabase.name,
        "timeout": String(Authenticator.sessionTimeout),
        "iterations": String(Authenticator.iterations), "pbkdf2_prf": "sha256",
        "allow_persistent_cookies": "true", "upgrade_hash_on_auth": "true",
        "users_db_public": configuration.usersDatabaseIsPublic ? "true" : "false",
      ],
      "chttpd_auth_lockout": [
        "mode": "enforce", "threshold": String(Lockout.threshold),
        "max_lifetime": String(Lockout.lifetime * 1000),
      ],
      "query_server_config": [
        "os_process_timeout": String(Int(configuration.javaScriptTimeLimit * 1000))
      ],
      "replicator": [
        "max_jobs": String(replication.maxJobs), "max_churn": String(replication.maxChurn),
        "interval": String(
          replication.interval.components.seconds * 1000
            + replication.interval.components.attoseconds / 1_000_000_000_000_000),
      ],
    ]
    if !cors.isEmpty {
      sections["cors"] = ["origins": cors.joined(separator: ","), "credentials": "true"]
    }
    if !configuration.usersPublicFields.isEmpty {
      sections["chttpd_auth"]?["public_fields"] = configuration.usersPublicFields.joined(
        separator: ", ")
    }
    return sections
  }
}
