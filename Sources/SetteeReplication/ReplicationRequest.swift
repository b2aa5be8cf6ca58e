import Foundation
import Settee
import SetteeCore

/// A replication as a scheduler runs it: its configuration and the names its two sides
/// go by in `_active_tasks`, `_scheduler/jobs` and `_scheduler/docs`.
public struct ReplicationRequest: Sendable {
  /// What to replicate, and how.
  public var configuration: ReplicationConfiguration
  /// How the source is named (a URL without credentials, or a database's name).
  public var sourceLabel: String
  /// How the target is named.
  public var targetLabel: String

  /// A request for `configuration`, its sides named by their labels unless names are
  /// given.
  public init(
    _ configuration: ReplicationConfiguration, sourceLabel: String? = nil,
    targetLabel: String? = nil
  ) {
    self.configuration = configuration
    self.sourceLabel = sourceLabel ?? configuration.source.label
    self.targetLabel = targetLabel ?? configuration.target.label
  }

  /// The replication a CouchDB `POST /_replicate` body or `_replicator` document describes:
  /// `source` and `target` (a URL, CouchDB's `{"url": …}` object, or the name of a
  /// collection that `database` opens), `continuous`, `create_target`, `doc_ids`,
  /// `selector`, `filter` with `query_params`, `since_seq`, `winning_revs_only`,
  /// `use_checkpoints`, `use_bulk_get`.
  ///
  /// - Throws: ``SetteeError`` with code `invalidArgument` naming the member that is
  ///   wrong; what `database` throws for a name, as it threw it.
  public init(couchDB body: JSONObject, database: (String) throws -> DocumentCollection) throws {
    var filter = ReplicationFilter.none
    if let ids = body["doc_ids"] {
      guard case .array(let list) = ids, list.allSatisfy({ $0.stringValue != nil }) else {
        throw SetteeError(.invalidArgument, "doc_ids must be an array of ids")
      }
      filter = .documentIDs(list.compactMap(\.stringValue))
    }
    if let selector = body["selector"] {
      guard case .object(let object) = selector, filter == .none else {
        throw SetteeError(
          .invalidArgument, "selector must be an object, and not given with doc_ids")
      }
      filter = .selector(object)
    }
    if let value = body["filter"] {
      guard case .string(let name) = value, name.contains("/") || name == "_view",
        filter == .none
      else {
        throw SetteeError(
          .invalidArgument,
          "filter must name a design document's filter function, \"design/filter\", or be \"_view\" with query_params' view, and not be given with doc_ids or selector"
        )
      }
      var parameters: JSONObject = [:]
      switch body["query_params"] {
      case nil, .null?: break
      case .object(let object)?: parameters = ReplicationFilter.queryParameters(object)
      default: throw SetteeError(.invalidArgument, "query_params must be an object")
      }
      filter = .design(name, queryParameters: parameters)
    }
    func flag(_ name: String, default value: Bool) throws -> Bool {
      switch body[name] {
      case nil, .null?: return value
      case .bool(let flag)?: return flag
      default: throw SetteeError(.invalidArgument, "\(name) must be true or false")
      }
    }
    func endpoint(_ side: String) throws -> (ReplicationEndpoint, String) {
      var text = body[side]?.stringValue
      if case .object(let object)? = body[side] { text = object["url"]?.stringValue }
      guard let text, !text.isEmpty else {
        throw SetteeError(.invalidArgument, "\(side) must be a database name or a URL")
      }
      let lowered = text.lowercased()
      if lowered.hasPrefix("http://") || lowered.hasPrefix("https://") {
        guard let url = URL(string: text) else {
          throw SetteeError(.invalidArgument, "\(side) is not a URL")
        }
        return (.url(url), ReplicationEndpoint.url(url).label)
      }
      return (.collection(try database(text)), text)
    }
    let useCheckpoints = try flag("use_checkpoints", default: true)
    let useBulkGet = try flag("use_bulk_get", default: true)
    let (source, sourceLabel) = try endpoint("source")
    let (target, targetLabel) = try endpoint("target")
    self.init(
      ReplicationConfiguration(
        source: source, target: target, continuous: body["continuous"] == true,
        createTarget: body["create_target"] == true, filter: filter,
        sinceSequence: body["since_seq"].map { $0.stringValue ?? JSONWriter.string($0) },
        winningRevisionsOnly: body["winning_revs_only"] == true,
        useCheckpoints: useCheckpoints, useBulkGet: useBulkGet),
      sourceLabel: sourceLabel, targetLabel: targetLabel)
  }
}
