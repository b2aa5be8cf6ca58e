import SetteeCore

/// The replication id, as couch_replicator_ids makes it: an MD5 of the peers' identities
/// (the URL without credentials, or the file's uuid and the collection), the direction, the
/// filter and a given start (version 4 of Settee's key). The same replication gets the same
/// id wherever it runs, so it resumes from the checkpoints `_local/<id>` on both peers.
enum ReplicationID {
  static func make(
    source: any ReplicationPeer, target: any ReplicationPeer,
    _ configuration: ReplicationConfiguration
  ) async throws -> String {
    var key: [JSON] = [
      4, .string(try await source.identity()), .string(try await target.identity()),
      configuration.filter.json, configuration.sinceSequence.map(JSON.string) ?? .null,
    ]
    if configuration.winningRevisionsOnly { key.append("winning_revs_only") }
    return Hex.string(ofDigest: MD5.hash(JSONWriter.bytes(.array(key))))
  }
}
