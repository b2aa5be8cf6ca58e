import SetteeCore

extension DocumentCollection {
  /// Writes one document whose attachments named in `sources` are read from them, a chunk
  /// at a time, as the revision is written: CouchDB's `multipart/related` document PUT,
  /// whose attachments wait in a file instead of in memory. Their `_attachments` entries
  /// give the metadata, marked `"follows": true` as CouchDB sends them. `newEdits: false`
  /// writes the revision as a peer gives it (as `put(_:newEdits:)`).
  ///
  /// - Throws: as `put(_:)` and `put(_:newEdits:)` do, and what a source throws.
  package func put(
    _ json: JSONObject, newEdits: Bool, attachmentSources sources: [String: AttachmentSource]
  ) async throws -> WriteResult {
    var json = json
    // Checked as stubs (metadata without data), then given their sources.
    if case .object(var attachments)? = json["_attachments"] {
      for name in sources.keys {
        guard case .object(var attachment)? = attachments[name] else { continue }
        attachment["follows"] = nil
        attachment["stub"] = true
        attachments[name] = .object(attachment)
      }
      json["_attachments"] = .object(attachments)
    }
    let given = json
    @Sendable func withSources(_ document: Document) -> Document {
      var document = document
      document.attachments = document.attachments?.map { attachment in
        guard let source = sources[attachment.name] else { return attachment }
        var read = attachment
        (read.isStub, read.data, read.source) = (false, nil, source)
        return read
      }
      return document
    }
    return try await database.withConnection(.writing) {
      if newEdits {
        return try self.write(try self.validate([given]).map(withSources), mode: .edit)[0]
      }
      let (document, history) = try Document.replicated(
        validating: .object(given), limits: self.database.configuration.limits)
      return try self.database.write(
        self.writeOperation([(withSources(document), history)]) { writer, graft in
          try writer.graft(graft.0, history: graft.1, validated: true)
        })[0]
    }
  }
}
